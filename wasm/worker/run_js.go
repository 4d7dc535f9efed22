//go:build js && wasm

package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall/js"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gpu"
	"github.com/haeols/haeols/wire"
)

// Run serves the requests the page posts to this Web Worker until the page
// goes away. app.wasm calls it when it starts in a worker (web/worker.js).
func Run() {
	self := js.Global()
	q := NewQueue()
	relay := &relaySink{}
	w := &Worker{E: &Engine{Fetch: fetch, OpenGPU: openGPU, Maps: relay}, Q: q, Emit: post, Yield: newYield()}
	var preload *wire.Source
	if !self.Get("haeolsHelper").Truthy() {
		// One helper per core beyond this worker's (started with a
		// large sample file, see Pool); the count of cores is the
		// page's when it sent one.
		cores := self.Get("haeolsCores")
		if cores.Type() != js.TypeNumber {
			cores = self.Get("navigator").Get("hardwareConcurrency")
		}
		if cores.Type() == js.TypeNumber {
			w.E.Pool = &Pool{N: HelpersFor(cores.Int()), Start: startHelper, Handed: forgetJSFile}
			jsFile.keep = true
			// A sample file the page links, being fetched (worker.js's
			// prefetch): its helpers start during the download.
			if size := self.Get("haeolsPrefetchSize"); size.Type() == js.TypeFunction {
				if p := size.Invoke(); p.Type() == js.TypeObject {
					go func() {
						if n, err := await(p); err == nil && n.Type() == js.TypeNumber {
							w.E.Pool.StartFor(n.Int())
						}
					}()
				}
			}
		}
		// The page's view (its query, in this worker's address): look
		// for the GPU it will ask for while the page starts, and, with
		// cores to spare (PreloadMinCores), make its sample when it is a
		// preset (generated here; the page asks for it once it started).
		compute, preset := wire.Hints(self.Get("location").Get("search").String())
		if compute == "" {
			compute = "auto"
		}
		if compute != "cpu" {
			w.E.Probe(compute)
		}
		if cores.Type() == js.TypeNumber && cores.Int() >= PreloadMinCores {
			preload = preset
		}
	}

	recv := js.FuncOf(func(_ js.Value, args []js.Value) any {
		data := args[0]
		var req wire.Request
		raw := data.Get("json")
		if raw.Type() != js.TypeString {
			post(wire.Response{Error: "worker: message without a \"json\" string", Done: true}, nil)
			return nil
		}
		if err := json.Unmarshal([]byte(raw.String()), &req); err != nil {
			post(wire.Response{Error: fmt.Sprintf("worker: bad request json: %v", err), Done: true}, nil)
			return nil
		}
		if req.Op == wire.OpHeatmapReset {
			relay.reset()
			return nil
		}
		if req.Op == wire.OpCompute {
			// Open the GPU now: the loads queued behind this request run
			// while the browser looks for an adapter.
			w.E.Probe(req.Compute)
		}
		if req.Op == wire.OpLoad && (req.Source == nil || req.Source.Kind != "url") {
			// A load of anything but a fetched file: a file the page had
			// this worker prefetch is not wanted (worker.js).
			if drop := self.Get("haeolsDropPrefetch"); drop.Type() == js.TypeFunction {
				drop.Invoke()
			}
		}
		bufs := map[string][]byte{}
		if b := data.Get("buffers"); b.Type() == js.TypeObject {
			// A sample or checkpoint, and a checkpoint's tokenizer; the
			// files of a "checkpoint" source by their names.
			names := []string{"file", "tokenizer"}
			if req.Source != nil && req.Source.Kind == "checkpoint" {
				names = req.Source.Files
			}
			for _, name := range names {
				if f := b.Get(name); f.Truthy() {
					u8 := js.Global().Get("Uint8Array").New(f)
					buf := make([]byte, u8.Get("length").Int())
					js.CopyBytesToGo(buf, u8)
					bufs[name] = buf
					if name == "file" && req.Source != nil && req.Source.Kind == "file" && f.InstanceOf(js.Global().Get("ArrayBuffer")) {
						// A sample file: shared with the helpers.
						rememberJSFile(buf, f)
					}
				}
			}
		}
		var lag float64
		if req.SentAt > 0 {
			perf := js.Global().Get("performance")
			lag = perf.Get("timeOrigin").Float() + perf.Call("now").Float() - req.SentAt
		}
		q.PushLate(req, bufs, lag)
		return nil
	})
	self.Set("haeolsReceive", recv)
	if ready := self.Get("haeolsReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	w.E.Preload(preload)
	w.Loop()
}

// openGPU opens the WebGPU runner (navigator.gpu in this worker).
func openGPU(hardwareOnly bool) (core.Accelerator, wire.Compute, error) {
	d, err := gpu.Open(gpu.Options{HardwareOnly: hardwareOnly})
	if err != nil {
		return nil, wire.Compute{}, err
	}
	i := d.Info()
	return d, wire.Compute{Adapter: i.String(), Software: i.Software}, nil
}

// post sends a response to the page, transferring the buffers.
func post(r wire.Response, bufs map[string][]byte) {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(wire.Response{ID: r.ID, Op: r.Op, Error: "worker: encoding the answer: " + err.Error(), Done: true})
		bufs = nil
	}
	msg, transfer := message(string(b), bufs)
	js.Global().Call("postMessage", msg, transfer)
}

// message makes {json, buffers} with the buffers copied into ArrayBuffers,
// and the list of those to transfer; the sample file being loaded goes as
// the ArrayBuffer it came in (jsFile).
func message(text string, bufs map[string][]byte) (js.Value, js.Value) {
	msg := js.Global().Get("Object").New()
	msg.Set("json", text)
	buffers := js.Global().Get("Object").New()
	transfer := js.Global().Get("Array").New()
	for name, data := range bufs {
		if ab, ok := takeJSFile(data); ok {
			// The sample file, as it came.
			buffers.Set(name, ab)
			transfer.Call("push", ab)
			continue
		}
		u8 := js.Global().Get("Uint8Array").New(len(data))
		js.CopyBytesToJS(u8, data)
		ab := u8.Get("buffer")
		buffers.Set(name, ab)
		transfer.Call("push", ab)
	}
	msg.Set("buffers", buffers)
	return msg, transfer
}

// relaySink is the Engine's MapsSink in the browser: relay messages that
// the app page passes on to its heatmap page as they come, the keys whose
// unchanging part went with them (the heatmap page keeps the same
// wire.Recent) and the views sent (the same wire.Ladder).
type relaySink struct {
	mu     sync.Mutex
	ready  bool // the app's heatmap page started (OpHeatmapReset)
	held   wire.Recent[struct{}]
	ladder wire.Ladder[struct{}]
}

// reset records that the heatmap page (re)started: it holds nothing.
func (s *relaySink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = true
	s.held.Reset()
	s.ladder.Reset()
}

func (s *relaySink) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

func (s *relaySink) Holds(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held.Get(key)
	return ok && s.ready
}

func (s *relaySink) HoldsView(view string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ladder.Get(view)
	return ok && s.ready
}

func (s *relaySink) LadderFull(view string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ladder.Full() && s.ladder.Prefix() == wire.ViewPrefix(view)
}

func (s *relaySink) Send(m wire.Maps, key string, bufs map[string][]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready {
		return false
	}
	b, err := json.Marshal(m)
	if err != nil {
		return false
	}
	if !s.ladder.Put(m.View, struct{}{}, bufsSize(bufs)) && m.Ladder {
		return false
	}
	msg, transfer := message(string(b), bufs)
	// What the heatmap page decides on before decoding (wire.Screen,
	// wire.Ladder).
	perf := js.Global().Get("performance")
	wire.Envelope{Relay: wire.RelayHeatmap, Key: key, View: m.View, Seq: m.Seq, Ladder: m.Ladder,
		PostedAt: perf.Get("timeOrigin").Float() + perf.Call("now").Float()}.Write(msg)
	js.Global().Call("postMessage", msg, transfer)
	if _, ok := bufs["orig"]; ok {
		s.held.Put(key, struct{}{})
	}
	return true
}

// newYield returns a function that lets the event loop run once (so that
// queued messages are delivered) and then resumes: a MessageChannel
// round trip, which unlike setTimeout is not clamped to 4 ms.
func newYield() func() {
	mc := js.Global().Get("MessageChannel").New()
	ch := make(chan struct{}, 1)
	mc.Get("port1").Set("onmessage", js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case ch <- struct{}{}:
		default:
		}
		return nil
	}))
	port := mc.Get("port2")
	return func() {
		port.Call("postMessage", nil)
		<-ch
	}
}

// await waits for the JavaScript promise p and returns its value or its
// rejection.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	var ok, bad js.Func
	ok = js.FuncOf(func(_ js.Value, a []js.Value) any { ch <- result{v: a[0]}; return nil })
	bad = js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{err: errors.New(a[0].Call("toString").String())}
		return nil
	})
	p.Call("then", ok, bad)
	r := <-ch
	ok.Release()
	bad.Release()
	return r.v, r.err
}

// fetch gets a file of the app's own static site.
func fetch(url string) ([]byte, error) {
	// worker.js's haeolsFetch hands out a file the page had it prefetch.
	fetcher := "fetch"
	if js.Global().Get("haeolsFetch").Type() == js.TypeFunction {
		fetcher = "haeolsFetch"
	}
	resp, err := await(js.Global().Call(fetcher, url))
	if err != nil {
		return nil, err
	}
	if !resp.Get("ok").Bool() {
		return nil, fmt.Errorf("HTTP %d %s", resp.Get("status").Int(), resp.Get("statusText").String())
	}
	// Refuse a file too large by its declared length before reading it (an
	// encoded answer declares its encoded length: checked again below).
	if cl := resp.Get("headers").Call("get", "content-length"); cl.Type() == js.TypeString {
		if n, err := strconv.ParseInt(cl.String(), 10, 64); err == nil && n > MaxFileBytes {
			return nil, fileTooLarge(n)
		}
	}
	ab, err := await(resp.Call("arrayBuffer"))
	if err != nil {
		return nil, err
	}
	u8 := js.Global().Get("Uint8Array").New(ab)
	if n := u8.Get("length").Int(); n > MaxFileBytes {
		return nil, fileTooLarge(int64(n))
	}
	buf := make([]byte, u8.Get("length").Int())
	js.CopyBytesToGo(buf, u8)
	rememberJSFile(buf, ab)
	return buf, nil
}

// jsFile is the ArrayBuffer that the Go bytes of the sample file being
// loaded (data: fetched, or sent by the page) were copied from. A message
// to a helper that carries those bytes transfers this buffer instead of
// copying the bytes back out of the WebAssembly memory into a new one
// (that copy, or postMessage's clone of the buffer, took a sixth of the
// worker's loading of a 50 MB sample). The Pool forgets it once the file
// was handed to the helpers (Pool.Handed), so the worker does not keep a
// second copy of a file it did not share.
var jsFile struct {
	mu   sync.Mutex
	keep bool // this worker has a Pool (not a helper)
	data []byte
	ab   js.Value
}

// rememberJSFile records, in a worker with a Pool, that data was copied
// from the ArrayBuffer ab.
func rememberJSFile(data []byte, ab js.Value) {
	jsFile.mu.Lock()
	defer jsFile.mu.Unlock()
	if jsFile.keep {
		jsFile.data, jsFile.ab = data, ab
	}
}

// forgetJSFile forgets the ArrayBuffer of data, if it is the one
// remembered.
func forgetJSFile(data []byte) {
	jsFile.mu.Lock()
	defer jsFile.mu.Unlock()
	if sameBytes(jsFile.data, data) {
		jsFile.data, jsFile.ab = nil, js.Undefined()
	}
}

// takeJSFile returns the ArrayBuffer that data was copied from, if it is
// the one remembered, and forgets it: the message it goes with transfers
// it (a second helper's message copies the bytes again).
func takeJSFile(data []byte) (js.Value, bool) {
	jsFile.mu.Lock()
	defer jsFile.mu.Unlock()
	if !sameBytes(jsFile.data, data) {
		return js.Undefined(), false
	}
	ab := jsFile.ab
	jsFile.data, jsFile.ab = nil, js.Undefined()
	return ab, true
}

// sameBytes reports whether a and b are the same non-empty bytes in
// memory (not merely equal).
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// helperConn is a helper worker (worker.js#helper) started by this one.
type helperConn struct {
	w       js.Value
	fs      []js.Func
	started chan struct{} // closed by worker.js#helper's first message or an error
	once    sync.Once
}

// startHelper starts helper i with this worker's app.wasm module and
// passes its answers to deliver; a helper that fails to start or dies
// answers an error (which makes the Pool compute its share here).
func startHelper(i int, deliver func(wire.Response)) (c Conn, err error) {
	mod := js.Global().Get("haeolsModule")
	if !mod.Truthy() {
		return nil, errors.New("helper: no app.wasm module to start it with")
	}
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("helper %d: %v", i, r) // no nested workers here
		}
	}()
	w := js.Global().Get("Worker").New("worker.js#helper")
	h := &helperConn{w: w, started: make(chan struct{})}
	onMsg := js.FuncOf(func(_ js.Value, a []js.Value) any {
		var r wire.Response
		d := a[0].Get("data")
		if d.Get("started").Truthy() {
			h.once.Do(func() { close(h.started) })
			return nil
		}
		raw := d.Get("json")
		if raw.Type() != js.TypeString {
			return nil
		}
		if err := json.Unmarshal([]byte(raw.String()), &r); err != nil {
			r = wire.Response{Error: fmt.Sprintf("helper %d: bad answer: %v", i, err), Done: true}
		}
		deliver(r)
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, a []js.Value) any {
		msg := "the helper worker failed"
		if m := a[0].Get("message"); m.Type() == js.TypeString {
			msg = m.String()
		}
		h.once.Do(func() { close(h.started) })
		deliver(wire.Response{Error: fmt.Sprintf("helper %d: %s", i, msg), Done: true})
		return nil
	})
	h.fs = []js.Func{onMsg, onErr}
	w.Call("addEventListener", "message", onMsg)
	w.Call("addEventListener", "error", onErr)
	init := js.Global().Get("Object").New()
	init.Set("module", mod)
	w.Call("postMessage", init)
	return h, nil
}

// Post sends the helper a request, its buffers copied into ArrayBuffers
// that go with it.
func (h *helperConn) Post(req wire.Request, bufs map[string][]byte) {
	b, err := json.Marshal(req)
	if err != nil {
		return
	}
	msg, transfer := message(string(b), bufs)
	h.w.Call("postMessage", msg, transfer)
}

// Started is closed once the helper's script runs (worker.js#helper
// says so first), when what was posted to it has reached it, or when it
// failed.
func (h *helperConn) Started() <-chan struct{} { return h.started }

// Close ends the helper at once.
func (h *helperConn) Close() {
	h.w.Call("terminate")
	for _, f := range h.fs {
		f.Release()
	}
}
