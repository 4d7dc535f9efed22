package ui

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/wire"
)

// bridge is the page's end of the worker protocol: it numbers requests,
// posts them with their buffers transferred, and hands each response to a
// callback in a goroutine of its own (so the worker's message event returns
// at once and never waits for a render).
//
// The worker it starts with (index.html's, running app.wasm) has no model
// runner: the first request that needs one (wire.Request.NeedsModel) moves
// the bridge to a worker running runner.wasm (worker.js#runner), which
// answers everything from then on.
type bridge struct {
	worker js.Value
	nextID int
	onMsg  js.Func
	onErr  js.Func
	// runner: the worker runs runner.wasm.
	runner bool
	// compute and heatmapReset are the latest OpCompute and
	// OpHeatmapReset messages sent (JSON), which a runner worker gets
	// first, under their IDs, so that it runs on the same device and
	// relays maps to the same heatmap page.
	compute, heatmapReset string
}

// newBridge connects to the page's worker (window.haeolsWorker, which
// index.html made with worker.js and sends the compiled app.wasm), calling
// handle with each of its answers.
func newBridge(handle func(wire.Response, js.Value)) (*bridge, error) {
	w := js.Global().Get("haeolsWorker")
	if !w.Truthy() {
		return nil, errors.New("this browser cannot run Web Workers, which the simulator needs")
	}
	b := &bridge{worker: w}
	b.onMsg = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		if len(args) == 0 {
			return nil
		}
		data := args[0].Get("data")
		if wire.ReadEnvelope(fields(data)).Relay == wire.RelayHeatmap {
			// Maps for the heatmap page (wire.Request.Direct): passed on
			// at once, in order, unread.
			relay(data)
			return nil
		}
		var r wire.Response
		raw := data.Get("json")
		if raw.Type() != js.TypeString {
			return nil
		}
		if err := json.Unmarshal([]byte(raw.String()), &r); err != nil {
			r = wire.Response{Op: "?", Error: fmt.Sprintf("worker sent a message that does not decode: %v", err), Done: true}
		}
		bufs := data.Get("buffers")
		go handle(r, bufs)
		return nil
	})
	b.onErr = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		msg := "the worker failed to start"
		if len(args) > 0 && args[0].Get("message").Truthy() {
			msg = "worker: " + args[0].Get("message").String()
		}
		go handle(wire.Response{Op: "error", Error: msg, Done: true}, js.Undefined())
		return nil
	})
	b.listen()
	if e := js.Global().Get("haeolsWorkerError"); e.Truthy() {
		// index.html's worker failed before this listened.
		go handle(wire.Response{Op: "error", Error: "worker: " + e.String(), Done: true}, js.Undefined())
	}
	return b, nil
}

// listen hands the worker's messages and errors to the bridge.
func (b *bridge) listen() {
	b.worker.Call("addEventListener", "message", b.onMsg)
	b.worker.Call("addEventListener", "error", b.onErr)
}

// startRunner moves the bridge to a new worker running runner.wasm: the
// old one (and its helper workers) is terminated, with whatever it had
// not answered yet; the request that needs the runner comes next and
// replaces what the old worker held.
func (b *bridge) startRunner() {
	b.worker.Call("removeEventListener", "message", b.onMsg)
	b.worker.Call("removeEventListener", "error", b.onErr)
	b.worker.Call("terminate")
	b.worker = js.Global().Get("Worker").New("worker.js#runner")
	setValue(js.Global(), "haeolsWorker", b.worker)
	b.runner = true
	b.listen()
	for _, raw := range []string{b.compute, b.heatmapReset} {
		if raw != "" {
			b.post(raw, js.Global().Get("Object").New(), js.Global().Get("Array").New())
		}
	}
}

// relay passes a relay message of the worker on to the heatmap page,
// transferring its buffers. Without a heatmap page it is dropped: the
// worker learns of a new one (wire.OpHeatmapReset) before it relays to it.
func relay(data js.Value) {
	win := heatmapWindow()
	if !win.Truthy() {
		return
	}
	transfer := js.Global().Get("Object").Call("values", data.Get("buffers"))
	perf := js.Global().Get("performance")
	wire.Envelope{RelayedAt: perf.Get("timeOrigin").Float() + perf.Call("now").Float()}.Write(data)
	win.Call("postMessage", data, "*", transfer)
}

// fields reads a JavaScript object's fields.
func fields(v js.Value) wire.Fields { return wire.JSFields[js.Value, js.Type]{V: v} }

// heatmapWindow is the window of the heatmap iframe, undefined when there
// is none.
func heatmapWindow() js.Value {
	frame := js.Global().Get("document").Call("getElementById", "heatmap-frame")
	if !frame.Truthy() {
		return js.Undefined()
	}
	return frame.Get("contentWindow")
}

// send posts a request with the given buffers (transferred: the page loses
// them) and returns its ID.
func (b *bridge) send(req wire.Request, bufs map[string]js.Value) int {
	b.nextID++
	req.ID = b.nextID
	raw, err := json.Marshal(req)
	if err != nil {
		// Params hold NaN only if the state is broken; say so instead of sending.
		js.Global().Get("console").Call("error", "haeols: encoding request: "+err.Error())
		return req.ID
	}
	if req.NeedsModel() && !b.runner {
		b.startRunner()
	}
	switch req.Op {
	case wire.OpCompute:
		b.compute = string(raw)
	case wire.OpHeatmapReset:
		b.heatmapReset = string(raw)
	}
	bo := js.Global().Get("Object").New()
	transfer := js.Global().Get("Array").New()
	for k, v := range bufs {
		setValue(bo, k, v)
		transfer.Call("push", v)
	}
	b.post(string(raw), bo, transfer)
	return req.ID
}

// post sends the worker a message: the request's JSON and its buffers
// (an object of ArrayBuffers), transferring those in transfer.
func (b *bridge) post(raw string, buffers, transfer js.Value) {
	msg := js.Global().Get("Object").New()
	msg.Set("json", raw)
	setValue(msg, "buffers", buffers)
	b.worker.Call("postMessage", msg, transfer)
}

// setValue sets obj[key] = v for a JS value v (vugu's js.Value.Set takes
// only Go values; Call converts its arguments).
func setValue(obj js.Value, key string, v js.Value) {
	js.Global().Get("Reflect").Call("set", obj, key, v)
}
