// Package ui is the haeols web app's user interface: a vugu component tree
// (Root, from root.vugu) that keeps the view in one state.State, mirrors it
// into the URL, and asks the core running in a Web Worker (protocol
// ui/proto) for every number it shows. The selected head's attention maps
// go on to the ebiten heatmap page (heatmap.html) in an iframe.
//
// Regenerate the vugu code (root_gen.go) after editing root.vugu with
//
//	go tool vugugen -skip-go-mod -skip-main ui/
package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/ui/proto"
	"github.com/haeols/haeols/ui/state"
)

// ShippedSamples are the sample files the site serves under samples/
// (copies of the repository's samples/*.safetensors; a static host cannot
// list a directory, and a test keeps this list equal to the repository's).
var ShippedSamples = []string{"samples/default.safetensors", "samples/needle.safetensors", "samples/stories260K.safetensors"}

// gridRes is the grid of one method at the current parameters.
type gridRes struct {
	cells  []proto.Cell // L*H, NaN until computed
	color  []string     // CSS colour per cell
	mean   proto.Num
	na     string
	done   bool
	params proto.Params // the parameters the cells belong to
	got    int          // cells received for params
}

// Root is the app's root component. Run its methods only while holding the
// vugu event lock (DOM handlers do; worker callbacks take it).
type Root struct {
	// Env is the renderer's event environment, for updates from the worker.
	Env vugu.EventEnv

	S        state.State
	Notices  []string // repairs of the URL, shown once
	ErrMsg   string   // the last error for the user
	Info     *proto.Info
	Compute  *proto.Compute // where the worker computes (nil: not asked yet, the CPU)
	Loading  string         // what is loading, "" when idle
	Progress float64        // of the loading or grid pass

	grids   map[string]*gridRes
	head    *proto.HeadResult
	curve   *proto.Curve
	hover   int // cell index under the pointer, -1 none
	copyMsg string
	share   string // link or embed code shown for copying

	b *bridge // the worker
	// IDs of the latest request of each op; older answers are ignored.
	loadID, headID, curveID, gridID, computeID int
	gridQueue                                  []string // methods left in this grid pass
	gridMethod                                 string   // the method of the running grid request
	curveWanted                                bool     // a curve is due after the grid pass
	curvePending                               bool     // a curve request is out
	// Keys of what was last asked, so unchanged views send nothing.
	lastCurveKey, lastHeadKey, lastGridKey string

	samplesBefore string   // the sample before a load, restored if it fails
	localFiles    []string // local files opened this session (FilePrefix+name)

	headSentAt, gridSentAt  float64 // performance.now() of the requests
	mapsSentAt              float64 // of the head request whose maps were posted last
	headMS, gridMS, drawnMS float64 // the latest measured latencies

	frameReady   bool         // the heatmap page listens
	pendingMaps  *pendingMaps // maps not yet posted to the heatmap page
	mapsPostedAt float64      // when maps were posted and not yet drawn (0: none)

	shownHTML map[string]string // chart SVG last put into the page, by chart

	renderPending bool    // a coalesced render is scheduled
	renderFunc    js.Func // the requestAnimationFrame callback that renders

	started  bool
	dragOver bool
	presets  []gen.Preset
}

// NewRoot returns the app for the page's URL query (location.search).
func NewRoot(env vugu.EventEnv, query string) *Root {
	s, msgs := state.ParseQuery(query)
	return &Root{Env: env, S: s, Notices: msgs, hover: -1, grids: map[string]*gridRes{}, presets: gen.Presets()}
}

// Start connects to the worker and loads the view's sample. Call it once,
// holding the event lock.
func (c *Root) Start() {
	if c.started {
		return
	}
	c.started = true
	b, err := newBridge("worker.js", c.onResponse)
	if err != nil {
		c.ErrMsg = err.Error()
		return
	}
	c.b = b
	js.Global().Call("addEventListener", "message", js.FuncOf(c.onWindowMessage))
	src := c.S.Source()
	if src == nil {
		c.S.Sample = state.DefaultSample
		src = c.S.Source()
	}
	if c.S.Compute != "cpu" {
		// Before the load: the worker analyses the sample on the device.
		c.sendCompute()
	}
	c.load(src, js.Undefined(), c.S.Sample)
}

// load asks the worker for a sample; file is the local file's bytes.
func (c *Root) load(src *proto.Source, file js.Value, sample string) {
	c.Loading = "Loading " + sampleLabel(sample) + "…"
	c.Progress = 0
	bufs := map[string]js.Value{}
	if file.Truthy() {
		bufs["file"] = file
	}
	c.samplesBefore = c.S.Sample
	c.S.Sample = sample
	c.loadID = c.b.send(proto.Request{Op: proto.OpLoad, Source: src}, bufs)
}

// sendCompute asks the worker to compute on c.S.Compute.
func (c *Root) sendCompute() {
	c.computeID = c.b.send(proto.Request{Op: proto.OpCompute, Compute: c.S.Compute}, nil)
}

// onResponse runs in its own goroutine for each worker message.
func (c *Root) onResponse(r proto.Response, bufs js.Value) {
	c.Env.Lock()
	defer c.renderSoon()
	switch r.Op {
	case proto.OpLoad:
		if r.ID != c.loadID {
			return
		}
		c.Progress = r.Progress
		if !r.Done {
			return
		}
		c.Loading = ""
		if r.Error != "" {
			if c.Info == nil && c.S.Sample != state.DefaultSample {
				// Nothing shown yet (a link to a sample that does not
				// open): show the default sample instead.
				c.ErrMsg = fmt.Sprintf("Could not open %s: %s. Showing %s instead.", sampleLabel(c.S.Sample), r.Error, sampleLabel(state.DefaultSample))
				c.load(&proto.Source{Kind: "preset", Preset: state.DefaultSample}, js.Undefined(), state.DefaultSample)
				c.syncURL()
				return
			}
			c.ErrMsg = fmt.Sprintf("Could not open %s: %s. Still showing %s.", sampleLabel(c.S.Sample), r.Error, c.prevLabel())
			c.S.Sample = c.samplesBefore
			c.syncURL()
			return
		}
		// ErrMsg stays: a new load clears it when it starts, and a fallback
		// load's message must survive its success.
		c.Info = r.Info
		var names []string
		for _, m := range r.Info.Methods {
			names = append(names, m.Name)
		}
		c.Notices = append(c.Notices, c.S.Fit(r.Info.Layers, r.Info.Heads, names)...)
		c.grids = map[string]*gridRes{}
		c.head, c.curve = nil, nil
		c.lastCurveKey, c.lastHeadKey, c.lastGridKey = "", "", ""
		c.gridQueue, c.gridMethod, c.curveWanted, c.curvePending = nil, "", false, false
		c.refresh()
	case proto.OpCompute:
		if r.ID != c.computeID {
			return
		}
		if r.Error != "" {
			c.ErrMsg = "Compute: " + r.Error
			return
		}
		c.Compute = r.Compute
		// The worker analyses the sample again on the new device: ask for
		// everything anew.
		c.grids = map[string]*gridRes{}
		c.head, c.curve = nil, nil
		c.lastCurveKey, c.lastHeadKey, c.lastGridKey = "", "", ""
		c.gridQueue, c.gridMethod, c.curveWanted, c.curvePending = nil, "", false, false
		c.refresh()
	case proto.OpGrid:
		c.onGrid(r)
	case proto.OpHead:
		if r.ID != c.headID || !r.Done {
			return
		}
		c.headMS = now() - c.headSentAt
		RecordTiming("head", c.headMS)
		RecordTiming("headCompute", r.ComputeMs)
		if r.Error != "" {
			c.ErrMsg = "Head: " + r.Error
			return
		}
		c.head = r.Head
		if bufs.Truthy() && r.Head.Rows > 0 {
			c.postMaps(r.Head, bufs)
		}
	case proto.OpCurve:
		if r.ID != c.curveID || !r.Done {
			return
		}
		c.curvePending = false
		if r.Error != "" {
			c.ErrMsg = "Curve: " + r.Error
			return
		}
		c.curve = r.Curve
	default:
		if r.Error != "" {
			c.ErrMsg = r.Error
		}
	}
}

func (c *Root) prevLabel() string {
	if c.Info != nil {
		return sampleLabel(c.samplesBefore)
	}
	return "nothing yet"
}

// onGrid takes one part of a grid pass and starts the next method's grid
// when one is done.
func (c *Root) onGrid(r proto.Response) {
	if r.ID != c.gridID || c.Info == nil {
		return
	}
	if r.Error != "" {
		c.ErrMsg = "Grid: " + r.Error
		c.nextGrid()
		return
	}
	g := c.grid(c.gridMethod)
	if g.params != c.S.Params() {
		g.params, g.got, g.done = c.S.Params(), 0, false
	}
	if p := r.Grid; p != nil {
		g.na = p.NA
		if p.NA != "" {
			for i := range g.cells {
				g.cells[i] = naCell()
				g.color[i] = NAColor
			}
		}
		for _, cell := range p.Cells {
			i := cell.Layer*c.Info.Heads + cell.Head
			if i >= 0 && i < len(g.cells) {
				g.cells[i] = cell
				g.color[i] = CellColor(cell.Err)
				g.got++
			}
		}
		if r.Done {
			g.mean, g.done = p.MeanErr, true
		}
	}
	if c.gridMethod == c.S.Method {
		c.Progress = r.Progress
	}
	if r.Done {
		if c.gridMethod == c.S.Method {
			c.gridMS = now() - c.gridSentAt
			RecordTiming("grid", c.gridMS)
		}
		c.nextGrid()
	}
}

func (c *Root) grid(m string) *gridRes {
	g := c.grids[m]
	if g == nil {
		n := c.Info.Layers * c.Info.Heads
		g = &gridRes{cells: make([]proto.Cell, n), color: make([]string, n), mean: proto.Num(math.NaN())}
		for i := range g.cells {
			g.cells[i] = naCell()
			g.color[i] = NAColor
		}
		c.grids[m] = g
	}
	return g
}

func naCell() proto.Cell {
	nan := proto.Num(math.NaN())
	return proto.Cell{Err: nan, ErrMax: nan, ErrP95: nan, ErrCal: nan, Cos: nan, Ratio: nan, NeedleErr: nan, RowEntropy: nan}
}

// refresh sends the requests the current view needs and have not been
// sent: the selected head first (fast), then the grid pass, then the curve.
func (c *Root) refresh() {
	c.syncURL()
	if c.Info == nil || c.b == nil || c.Loading != "" {
		return
	}
	p := c.S.Params()
	hk := fmt.Sprint(c.S.Layer, c.S.Head, c.S.Method, p, c.S.Panel)
	if hk != c.lastHeadKey {
		c.lastHeadKey = hk
		c.headSentAt = now()
		c.headID = c.b.send(proto.Request{Op: proto.OpHead, Layer: c.S.Layer, Head: c.S.Head, Method: c.S.Method, Params: p, Maps: true}, nil)
	}
	gk := fmt.Sprint(p, c.S.Methods, c.S.Method)
	if gk != c.lastGridKey {
		c.lastGridKey = gk
		// The primary method first, then the other compared ones.
		c.gridQueue = append([]string{c.S.Method}, slices.DeleteFunc(slices.Clone(c.S.Methods), func(m string) bool { return m == c.S.Method })...)
		c.gridSentAt = now()
		c.nextGrid()
	}
	cp := p
	cp.Ratio = 0 // the curve does not depend on the current ratio
	ck := fmt.Sprint(c.S.Layer, c.S.Head, c.S.Methods, cp)
	if ck != c.lastCurveKey {
		c.lastCurveKey = ck
		c.curveWanted = true
	}
	c.sendCurve()
}

// sendCurve asks for the error-vs-ratio curves once no grid pass is
// running: a curve costs many compressions of one head, the grid one per
// KV head, and the grid must come first.
func (c *Root) sendCurve() {
	if !c.curveWanted || c.gridMethod != "" {
		return
	}
	c.curveWanted = false
	c.curvePending = true
	c.curveID = c.b.send(proto.Request{Op: proto.OpCurve, Layer: c.S.Layer, Head: c.S.Head, Methods: slices.Clone(c.S.Methods), Params: c.S.Params(), Ratios: CurveRatios()}, nil)
}

// nextGrid asks for the next method of the grid pass whose cells are not
// already known for these parameters.
func (c *Root) nextGrid() {
	p := c.S.Params()
	for len(c.gridQueue) > 0 {
		m := c.gridQueue[0]
		c.gridQueue = c.gridQueue[1:]
		if g := c.grids[m]; g != nil && g.done && g.params == p {
			continue
		}
		c.gridMethod = m
		c.gridID = c.b.send(proto.Request{Op: proto.OpGrid, Method: m, Params: p}, nil)
		return
	}
	c.gridMethod = ""
	c.sendCurve()
}

// syncURL writes the view into the address bar without a history entry.
func (c *Root) syncURL() {
	h := js.Global().Get("history")
	if h.Truthy() {
		h.Call("replaceState", nil, "", "?"+c.S.Encode())
	}
}

func now() float64 {
	p := js.Global().Get("performance")
	if p.Truthy() {
		return p.Call("now").Float()
	}
	return float64(time.Now().UnixNano()) / 1e6
}

func sampleLabel(s string) string {
	switch {
	case strings.HasPrefix(s, state.FilePrefix):
		return "your file " + strings.TrimPrefix(s, state.FilePrefix)
	case strings.HasPrefix(s, state.SamplesDir):
		return strings.TrimPrefix(s, state.SamplesDir)
	}
	return "the generated “" + s + "” sample"
}

// pendingMaps is a maps message held until the heatmap page is ready.
type pendingMaps struct {
	json   string
	bufs   js.Value
	sentAt float64 // performance.now() of the head request
}

// postMaps forwards a head's attention maps to the heatmap iframe as a
// proto.Maps message, transferring the buffers.
func (c *Root) postMaps(hr *proto.HeadResult, bufs js.Value) {
	m := proto.Maps{
		// The renderer adds method, ratio and error, in a bitmap font
		// (ASCII only).
		Title:  fmt.Sprintf("layer %d, head %d", c.S.Layer, c.S.Head),
		Method: hr.Method, Ratio: c.S.Ratio, Err: hr.Err,
		Rows: hr.Rows, Cols: hr.Cols, Calib: hr.Calib, Panel: c.S.Panel,
	}
	if c.Info != nil {
		m.TokenText = c.Info.TokenText
		m.Needles = c.Info.Needles
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.ErrMsg = "heatmap: " + err.Error()
		return
	}
	c.pendingMaps = &pendingMaps{json: string(b), bufs: bufs, sentAt: c.headSentAt}
	c.flushMaps()
}

// mapsTimeout is how long (ms) a posted maps message may stay undrawn
// before the next one is posted anyway.
const mapsTimeout = 2000

// flushMaps posts the pending maps if the heatmap page is ready and has
// drawn the previous message: while a person scrubs, the heatmap gets the
// latest maps as fast as it draws them, never a queue of stale ones (it
// shares the page's main thread).
func (c *Root) flushMaps() {
	if c.pendingMaps == nil || !c.frameReady {
		return
	}
	if c.mapsPostedAt > 0 && now()-c.mapsPostedAt < mapsTimeout {
		return
	}
	frame := js.Global().Get("document").Call("getElementById", "heatmap-frame")
	if !frame.Truthy() || !frame.Get("contentWindow").Truthy() {
		return
	}
	pm := c.pendingMaps
	c.pendingMaps = nil
	msg := js.Global().Get("Object").New()
	msg.Set("json", pm.json)
	setValue(msg, "buffers", pm.bufs)
	transfer := js.Global().Get("Array").New()
	keys := js.Global().Get("Object").Call("keys", pm.bufs)
	for i := 0; i < keys.Length(); i++ {
		transfer.Call("push", pm.bufs.Get(keys.Index(i).String()))
	}
	frame.Get("contentWindow").Call("postMessage", msg, "*", transfer)
	c.mapsPostedAt = now()
	c.mapsSentAt = pm.sentAt
}

// onWindowMessage hears the heatmap page: any message from the iframe's
// window means it runs (it says {type: "heatmap-ready"}); "heatmap-drawn"
// is timed and "heatmap-error" shown.
func (c *Root) onWindowMessage(this js.Value, args []js.Value) interface{} {
	if len(args) == 0 {
		return nil
	}
	frame := js.Global().Get("document").Call("getElementById", "heatmap-frame")
	if !frame.Truthy() || !js.Global().Get("Object").Call("is", args[0].Get("source"), frame.Get("contentWindow")).Bool() {
		return nil
	}
	data := args[0].Get("data")
	typ, errText := "", ""
	if data.Type() == js.TypeObject {
		if t := data.Get("type"); t.Type() == js.TypeString {
			typ = t.String()
		}
		if e := data.Get("error"); e.Type() == js.TypeString {
			errText = e.String()
		}
	}
	if typ == "heatmap-hover" {
		return nil // the heatmap shows its own readout
	}
	t := now()
	go func() {
		c.Env.Lock()
		defer c.renderSoon()
		c.frameReady = true
		switch typ {
		case "heatmap-drawn", "heatmap-error", "heatmap-ready":
			c.mapsPostedAt = 0
		}
		switch typ {
		case "heatmap-drawn":
			if c.mapsSentAt > 0 {
				c.drawnMS = t - c.mapsSentAt
				RecordTiming("drawn", c.drawnMS)
				for _, k := range []string{"decode", "wait", "paint"} {
					if v := data.Get(k + "_ms"); v.Type() == js.TypeNumber {
						RecordTiming("heatmap-"+k, v.Float())
					}
				}
			}
		case "heatmap-error":
			c.ErrMsg = "Heatmap: " + errText
		}
		c.flushMaps()
	}()
	return nil
}

// Started reports whether Start has run.
func (c *Root) Started() bool { return c.started }

// RecordTiming appends a measured latency (ms) to window.haeolsTimings[kind]
// ("head": slider move to the head's numbers, "headCompute": the worker's
// time on that answer, "drawn": to the heatmap drawn, "grid": to the
// primary method's whole grid; "heatmap-decode", "heatmap-wait" and
// "heatmap-paint", the heatmap page's share of "drawn": decoding the maps,
// waiting for its next frame, painting; the app's entry point adds "build"
// and "render", the two halves of each vugu render), for the tests and the
// curious.
func RecordTiming(kind string, ms float64) {
	g := js.Global()
	t := g.Get("haeolsTimings")
	if !t.Truthy() {
		t = g.Get("Object").New()
		g.Get("Reflect").Call("set", g, "haeolsTimings", t)
	}
	a := t.Get(kind)
	if !a.Truthy() {
		a = g.Get("Array").New()
		g.Get("Reflect").Call("set", t, kind, a)
	}
	a.Call("push", ms)
}

// renderSoon releases the event lock and asks for one render at the next
// animation frame: worker messages come in bursts (grid parts, progress),
// and one render per frame is enough. Call it holding the lock.
func (c *Root) renderSoon() {
	if c.renderPending {
		c.Env.UnlockOnly()
		return
	}
	c.renderPending = true
	if c.renderFunc.Type() != js.TypeFunction {
		c.renderFunc = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
			go func() {
				c.Env.Lock()
				c.renderPending = false
				c.Env.UnlockRender()
			}()
			return nil
		})
	}
	c.Env.UnlockOnly()
	raf := js.Global().Get("requestAnimationFrame")
	if raf.Truthy() {
		raf.Invoke(c.renderFunc)
	} else {
		js.Global().Call("setTimeout", c.renderFunc, 16)
	}
}
