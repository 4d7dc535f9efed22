// Package ui is the haeols web app's user interface: a vugu component tree
// (Root, from root.vugu) that keeps the view in one state.State, mirrors it
// into the URL, and asks the core running in a Web Worker (protocol
// wire) for every number it shows. The selected head's attention maps
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
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

// ShippedSamples are the sample files the site serves under samples/
// (copies of the repository's samples/*.safetensors; a static host cannot
// list a directory, and a test keeps this list equal to the repository's).
var ShippedSamples = []string{"samples/default.safetensors", "samples/needle.safetensors", "samples/stories260K.safetensors"}

// gridRes is the grid of one method at the current parameters.
type gridRes struct {
	cells  []result.Metrics // L*H, err NaN until computed
	color  []string         // CSS colour per cell
	mean   result.Num
	na     string
	done   bool
	params wire.Params // the parameters the cells belong to
	got    int         // cells received for params
}

// Root is the app's root component. Run its methods only while holding the
// vugu event lock (DOM handlers do; worker callbacks take it).
type Root struct {
	// Env is the renderer's event environment, for updates from the worker.
	Env vugu.EventEnv

	S        state.State
	Notices  []string // repairs of the URL, shown once
	ErrMsg   string   // the last error for the user
	Info     *wire.Info
	Compute  *wire.Compute // where the worker computes (nil: not asked yet, the CPU)
	Loading  string        // what is loading, "" when idle
	Progress float64       // of the loading or grid pass

	grids   map[string]*gridRes
	head    *wire.HeadResult
	headFor headKey // what head answers (its panel aside)
	curve   *wire.Curve
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
	// Keys of what was last asked, so unchanged views send nothing (zero:
	// ask again).
	lastHeadKey  headKey
	headAsked    headKey // what the request headID asked
	lastGridKey  gridKey
	lastCurveKey curveKey

	samplesBefore string   // the sample before a load, restored if it fails
	localFiles    []string // local files opened this session (FilePrefix+name)

	headSentAt, gridSentAt  float64     // performance.now() of the requests
	headTimedID             int         // the head request whose answer was timed
	mapsSent                [8]mapsSent // the latest head requests with maps, by ID (= Maps.Seq) % 8
	headMS, gridMS, drawnMS float64     // the latest measured latencies
	gridWorkers             int         // how many workers computed the latest grid

	frameReady   bool         // the heatmap page listens
	frameStarted bool         // its program runs (it said "heatmap-ready")
	reaskHead    bool         // it started while the head request was unanswered: ask again once answered
	unsandboxed  bool         // the sandboxed heatmap page failed: run it same-origin
	pendingMaps  *pendingMaps // maps not yet posted to the heatmap page
	mapsDirect   bool         // the worker's maps are relayed to the heatmap page
	model        int          // the worker's model of the latest head answer (wire.HeadResult.Model; 0: none since a load)

	shownChart map[string]*svgChart // the chart each chart element shows
	shownKey   map[string]chartKey  // and what it was made from

	renderPending bool    // a coalesced render is scheduled
	renderFunc    js.Func // the requestAnimationFrame callback that renders
	idlePending   bool    // renderIdle has a requestIdleCallback out
	laterPending  bool    // renderWhenStill has a timer out
	laterFunc     js.Func // its callback
	laterGen      int     // renders when the timer was set
	laterSince    float64 // performance.now() when renderWhenStill was asked
	renders       int     // renders done by renderSoon
	sliderAt      float64 // performance.now() of the latest slider move
	urlShown      string  // the query last written to the address bar
	urlWait       bool    // syncURL waits out its interval
	urlDirty      bool    // the view changed meanwhile
	urlFunc       js.Func // the interval's timer callback
	idleFunc      js.Func // its callback
	// Rounds rehearse has run of the head's views and of the curve chart,
	// and whether it is running.
	rehearsedHead, rehearsedCurve int
	rehearsing                    bool
	rehearsePrev                  *svgChart // the curve chart of the round before
	rehearseFunc                  js.Func   // its requestIdleCallback callback

	started  bool
	dragOver bool
	presets  []gen.Preset

	// What the model says (says_root.go): the bundled models, the latest
	// end-to-end result of each method (for its parameters), the latest
	// eval request and what it asked, when it went out, the request whose
	// primary answer was timed, the prompt box's text, and the view
	// before a prompt ran (restored when it fails).
	models       []modelFile
	evals        map[string]*wire.EvalResult
	evalID       int
	lastEvalKey  evalKey
	evalSentAt   float64
	evalTimed    int
	draft        string
	promptBefore state.State
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
	b, err := newBridge(c.onResponse)
	if err != nil {
		c.ErrMsg = err.Error()
		return
	}
	c.b = b
	js.Global().Call("addEventListener", "message", js.FuncOf(c.onWindowMessage))
	c.models = bundledModels()
	c.draft = c.S.Prompt
	src := c.source()
	if src == nil {
		c.S.Sample = state.DefaultSample
		src = c.S.Source()
	}
	c.load(src, js.Undefined(), c.S.Sample)
	if c.S.Compute != "cpu" {
		// After the load, which runs while the worker looks for a GPU
		// (Engine.Probe); a GPU found then analyses the sample (lazily,
		// head by head, as after a load).
		c.sendCompute()
	}
}

// load asks the worker for a sample; file is the local file's bytes.
func (c *Root) load(src *wire.Source, file js.Value, sample string) {
	bufs := map[string]js.Value{}
	if file.Truthy() {
		bufs["file"] = file
	}
	c.loadBufs(src, bufs, sample)
}

// loadBufs is load with the files' bytes in named buffers: "file" (and a
// llama2.c checkpoint's "tokenizer"), or a GGUF file's or a Hugging Face
// folder's files by their names (wire.Source.Files).
func (c *Root) loadBufs(src *wire.Source, bufs map[string]js.Value, sample string) {
	c.Loading = "Loading " + sampleLabel(sample) + "…"
	c.Progress = 0
	c.samplesBefore = c.S.Sample
	c.S.Sample = sample
	c.loadID = c.b.send(wire.Request{Op: wire.OpLoad, Source: src}, bufs)
}

// sendCompute asks the worker to compute on c.S.Compute.
func (c *Root) sendCompute() {
	c.computeID = c.b.send(wire.Request{Op: wire.OpCompute, Compute: c.S.Compute}, nil)
}

// onResponse runs in its own goroutine for each worker message.
func (c *Root) onResponse(r wire.Response, bufs js.Value) {
	c.Env.Lock()
	quiet := false // nothing on the page changes: no render
	live := false  // a head answer while a person scrubs: patch, render later
	defer func() {
		switch {
		case quiet:
			c.Env.UnlockOnly()
		case live:
			c.patchLive()
			c.renderWhenStill()
		default:
			c.renderSoon()
		}
	}()
	switch r.Op {
	case wire.OpLoad, wire.OpPrompt:
		if r.ID != c.loadID {
			return
		}
		c.Progress = r.Progress
		if !r.Done {
			return
		}
		c.Loading = ""
		if r.Error != "" && r.Op == wire.OpPrompt {
			// The model's previous run stays loaded.
			c.ErrMsg = "Could not run the prompt: " + r.Error
			c.S.Prompt, c.S.Task, c.S.Depth = c.promptBefore.Prompt, c.promptBefore.Task, c.promptBefore.Depth
			c.syncURL()
			return
		}
		if r.Error != "" {
			if c.Info == nil && c.S.Sample != state.DefaultSample {
				// Nothing shown yet (a link to a sample that does not
				// open): show the default sample instead.
				c.ErrMsg = fmt.Sprintf("Could not open %s: %s. Showing %s instead.", sampleLabel(c.S.Sample), r.Error, sampleLabel(state.DefaultSample))
				c.load(&wire.Source{Kind: "preset", Preset: state.DefaultSample}, js.Undefined(), state.DefaultSample)
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
		c.model = 0
		var names []string
		for _, m := range r.Info.Methods {
			names = append(names, m.Name)
		}
		c.Notices = append(c.Notices, c.S.Fit(r.Info.Layers, r.Info.Heads, names)...)
		c.grids = map[string]*gridRes{}
		c.head, c.curve = nil, nil
		c.lastCurveKey, c.lastHeadKey, c.lastGridKey = curveKey{}, headKey{}, gridKey{}
		c.gridQueue, c.gridMethod, c.curveWanted, c.curvePending = nil, "", false, false
		c.evals, c.lastEvalKey = nil, evalKey{}
		if ev := r.Info.Eval; ev != nil {
			c.draft = ev.Prompt.Text
		}
		c.refresh()
	case wire.OpEval:
		c.onEval(r)
	case wire.OpCompute:
		if r.ID != c.computeID {
			return
		}
		if r.Error != "" {
			c.ErrMsg = "Compute: " + r.Error
			return
		}
		before := "cpu" // the worker starts on the CPU
		if c.Compute != nil {
			before = c.Compute.Device
		}
		c.Compute = r.Compute
		if r.Compute != nil && r.Compute.Device == before {
			// Still where it computed: its answers stand.
			return
		}
		c.model = 0
		// The worker analyses the sample again on the new device: ask for
		// everything anew.
		c.grids = map[string]*gridRes{}
		c.head, c.curve = nil, nil
		c.lastCurveKey, c.lastHeadKey, c.lastGridKey = curveKey{}, headKey{}, gridKey{}
		c.gridQueue, c.gridMethod, c.curveWanted, c.curvePending = nil, "", false, false
		c.refresh()
	case wire.OpGrid:
		c.onGrid(r)
	case wire.OpHead:
		// The worker answers the numbers first (Done false), then the same
		// numbers with the maps.
		if r.ID != c.headID || (!r.Done && r.Head == nil) {
			return
		}
		// The final answer of a head whose numbers are shown only brings
		// the maps, which go to the heatmap page.
		quiet = r.Done && r.Error == "" && c.headTimedID == r.ID && c.head != nil
		if c.headTimedID != r.ID {
			c.headTimedID = r.ID
			c.headMS = now() - c.headSentAt
			RecordTiming("head", c.headMS)
			RecordTiming("headCompute", r.ComputeMs)
			RecordTiming("headQueued", r.QueuedMs)
		}
		if r.Error != "" {
			c.ErrMsg = "Head: " + r.Error
			return
		}
		c.head, c.headFor = r.Head, c.headAsked
		c.model = r.Head.Model
		c.startRehearsal()
		live = !quiet && c.scrubbing()
		if r.Done && (r.Head.MapsDirect || r.Head.Maps != nil && bufs.Truthy()) {
			// Direct: the maps were relayed to the heatmap page just
			// before this answer.
			RecordTiming("maps", now()-c.headSentAt)
			if !r.Head.MapsDirect {
				c.postMaps(r.Head.Maps, bufs)
			}
		}
		if r.Done && c.reaskHead {
			// The heatmap page started meanwhile: the same head again,
			// for relayed maps and the ladder (answered from the worker's
			// caches).
			c.reaskHead = false
			c.lastHeadKey = headKey{}
			c.refresh()
		}
	case wire.OpLadderDone:
		// Nothing to show; the tests wait for it before they scrub a
		// warmed-up page.
		quiet = true
		RecordTiming("ladderDone", now())
	case wire.OpCurve:
		if r.ID != c.curveID || !r.Done {
			return
		}
		c.curvePending = false
		if r.Error != "" {
			c.ErrMsg = "Curve: " + r.Error
			return
		}
		c.curve = r.Curve
		c.startRehearsal()
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
func (c *Root) onGrid(r wire.Response) {
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
				g.color[i] = CellColor(result.Num(cell.Err))
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
			if p := r.Grid; p != nil && p.Workers > 0 {
				c.gridWorkers = p.Workers
				RecordTiming("gridWorkers", float64(p.Workers))
			}
		}
		c.nextGrid()
	}
}

func (c *Root) grid(m string) *gridRes {
	g := c.grids[m]
	if g == nil {
		n := c.Info.Layers * c.Info.Heads
		g = &gridRes{cells: make([]result.Metrics, n), color: make([]string, n), mean: result.Num(math.NaN())}
		for i := range g.cells {
			g.cells[i] = naCell()
			g.color[i] = NAColor
		}
		c.grids[m] = g
	}
	return g
}

// naCell is a grid cell without numbers (yet).
func naCell() result.Metrics {
	nan := math.NaN()
	return result.Metrics{Err: nan, ErrMax: nan, ErrP95: nan, ErrCal: nan, Cos: nan, Ratio: nan, NeedleErr: nan, RowEntropy: nan}
}

// The keys of what the head, grid and curve requests asked for, compared
// on every slider move (plain values: formatting them took reflection).
type (
	headKey struct {
		layer, head int
		method      string
		p           wire.Params
		panel       string
	}
	gridKey struct {
		p               wire.Params
		methods, method string
	}
	evalKey struct {
		gridKey
		recompress int
	}
	curveKey struct {
		layer, head int
		methods     string
		p           wire.Params
	}
)

// refresh sends the requests the current view needs and have not been
// sent: the selected head first (fast), then the grid pass, then the curve.
func (c *Root) refresh() {
	// The address bar last: see syncURL.
	defer c.syncURL()
	if c.Info == nil || c.b == nil || c.Loading != "" {
		return
	}
	p := c.S.Params()
	hk := headKey{c.S.Layer, c.S.Head, c.S.Method, p, c.S.Panel}
	if hk != c.lastHeadKey {
		c.lastHeadKey, c.headAsked = hk, hk
		c.headSentAt = now()
		show := c.ladderView(p)
		c.headID = c.b.send(wire.Request{Op: wire.OpHead, Layer: c.S.Layer, Head: c.S.Head, Method: c.S.Method, Params: p,
			Maps: true, Direct: c.mapsDirect, Panel: c.S.Panel, Shown: show, SentAt: js.Global().Get("performance").Get("timeOrigin").Float() + c.headSentAt}, nil)
		// The maps message's Seq is the request's ID.
		c.mapsSent[c.headID%len(c.mapsSent)] = mapsSent{seq: c.headID, headSentAt: c.headSentAt}
		c.showStep(show)
	}
	gk := gridKey{p, strings.Join(c.S.Methods, ","), c.S.Method}
	if ek := (evalKey{gk, c.S.Recompress}); c.Says() && ek != c.lastEvalKey {
		// End to end, right after the head: the primary method's numbers
		// are what a slider move is for.
		c.lastEvalKey = ek
		c.sendEval()
	}
	if gk != c.lastGridKey {
		c.lastGridKey = gk
		// The primary method first, then the other compared ones.
		c.gridQueue = append([]string{c.S.Method}, slices.DeleteFunc(slices.Clone(c.S.Methods), func(m string) bool { return m == c.S.Method })...)
		c.gridSentAt = now()
		c.nextGrid()
	}
	cp := p
	cp.Ratio = 0 // the curve does not depend on the current ratio
	ck := curveKey{c.S.Layer, c.S.Head, strings.Join(c.S.Methods, ","), cp}
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
	c.curveID = c.b.send(wire.Request{Op: wire.OpCurve, Layer: c.S.Layer, Head: c.S.Head, Methods: slices.Clone(c.S.Methods), Params: c.S.Params(), Ratios: CurveRatios()}, nil)
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
		c.gridID = c.b.send(wire.Request{Op: wire.OpGrid, Method: m, Params: p}, nil)
		return
	}
	c.gridMethod = ""
	c.sendCurve()
}

// syncURL writes the view into the address bar without a history entry.
//
// At most once per urlEveryMs: Chromium's replaceState costs the page's
// thread about 5 ms, and a slider drag changes the view 20 times a second.
// While a person scrubs, not at all until the sliders have been still for
// scrubbingMs: the browser commits a replaceState before it passes on this
// page's next message to the heatmap page (a frame in another process),
// which then arrives 10-15 ms later than without one (measured in
// headless Chromium: 9-16 ms against 1.5-2 ms). The latest view is written
// when the wait is over. Call it holding the event lock.
func (c *Root) syncURL() {
	h := js.Global().Get("history")
	if !h.Truthy() {
		return
	}
	if c.urlWait {
		c.urlDirty = true
		return
	}
	wait := float64(urlEveryMs)
	if c.scrubbing() {
		c.urlDirty = true
		wait = c.sliderAt + scrubbingMs - now()
	} else if q := "?" + c.S.Encode(); q != c.urlShown {
		h.Call("replaceState", nil, "", q)
		c.urlShown = q
	}
	c.urlWait = true
	f := c.lockedFunc(&c.urlFunc, func() {
		defer c.Env.UnlockOnly()
		c.urlWait = false
		if c.urlDirty {
			c.urlDirty = false
			c.syncURL()
		}
	})
	js.Global().Call("setTimeout", f, wait)
}

// urlEveryMs is the shortest time between two writes of the address bar.
const urlEveryMs = 150

func now() float64 {
	p := js.Global().Get("performance")
	if p.Truthy() {
		return p.Call("now").Float()
	}
	return float64(time.Now().UnixNano()) / 1e6
}

func sampleLabel(s string) string {
	switch {
	case strings.HasPrefix(s, state.FilePrefix) && strings.HasSuffix(s, "/"):
		return "your folder " + strings.TrimPrefix(s, state.FilePrefix)
	case strings.HasPrefix(s, state.FilePrefix):
		return "your file " + strings.TrimPrefix(s, state.FilePrefix)
	case strings.HasPrefix(s, state.SamplesDir):
		return strings.TrimPrefix(s, state.SamplesDir)
	case strings.HasPrefix(s, state.ModelsDir):
		return "the model " + strings.TrimPrefix(s, state.ModelsDir)
	}
	return "the generated “" + s + "” sample"
}

// mapsSent remembers when the head request behind a maps message went out.
type mapsSent struct {
	seq        int     // wire.Maps.Seq: the head request's ID
	headSentAt float64 // performance.now() when it was sent
}

// pendingMaps is a maps message held until the heatmap page is ready.
type pendingMaps struct {
	json string
	bufs js.Value
}

// postMaps forwards a head's attention maps (the worker's message for the
// heatmap page) to the heatmap iframe, transferring the buffers.
func (c *Root) postMaps(m *wire.Maps, bufs js.Value) {
	b, err := json.Marshal(m)
	if err != nil {
		c.ErrMsg = "heatmap: " + err.Error()
		return
	}
	c.pendingMaps = &pendingMaps{json: string(b), bufs: bufs}
	c.flushMaps()
}

// ladderView is the view (wire.ViewKey) of the head request about to be
// sent for parameters p, when the heatmap page may hold its maps in its
// ladder; "" when it cannot (no heatmap page with relayed maps, or no head
// answer of the worker's current model yet).
func (c *Root) ladderView(p wire.Params) string {
	if !c.mapsDirect || !c.frameReady || c.model == 0 {
		return ""
	}
	if !heatmapWindow().Truthy() {
		return ""
	}
	return wire.ViewKey(c.model, c.S.Layer, c.S.Head, c.S.Method, p, c.S.Panel)
}

// showStep tells the heatmap page which view the head request just sent
// asks for: when its ladder holds that step, the heatmap page draws it
// now, as that request's maps (see wire), without waiting for the
// worker's answer.
func (c *Root) showStep(view string) {
	win := heatmapWindow()
	if view == "" || !win.Truthy() {
		return
	}
	msg := js.Global().Get("Object").New()
	wire.Envelope{Show: view, Seq: c.headID}.Write(msg)
	win.Call("postMessage", msg, "*")
}

// heatmapReset tells the worker that the heatmap page (re)started and
// holds nothing: from then on the worker sends the maps as relay messages,
// the unchanging part of a head once (wire.OpHeatmapReset), and this page
// passes them on as they arrive (bridge), without waiting for its own
// renders.
func (c *Root) heatmapReset() {
	if c.b == nil {
		return
	}
	c.b.send(wire.Request{Op: wire.OpHeatmapReset}, nil)
	c.mapsDirect = true
}

// flushMaps posts the pending maps once the heatmap page is ready. While a
// person scrubs, maps are posted as they come: the heatmap page keeps only
// the latest until its next frame (in a sandboxed iframe it has a thread of
// its own, so posting costs this page next to nothing).
func (c *Root) flushMaps() {
	if c.pendingMaps == nil || !c.frameReady {
		return
	}
	win := heatmapWindow()
	if !win.Truthy() {
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
	win.Call("postMessage", msg, "*", transfer)
}

// onWindowMessage hears the heatmap page (wire's Heatmap messages): any
// message from the iframe's window means it runs (it says HeatmapReady);
// HeatmapDrawn is timed and HeatmapError shown.
func (c *Root) onWindowMessage(this js.Value, args []js.Value) interface{} {
	if len(args) == 0 {
		return nil
	}
	frame := js.Global().Get("document").Call("getElementById", "heatmap-frame")
	if !frame.Truthy() || !js.Global().Get("Object").Call("is", args[0].Get("source"), frame.Get("contentWindow")).Bool() {
		return nil
	}
	data := args[0].Get("data")
	typ := ""
	if data.Type() == js.TypeObject {
		typ = wire.HeatmapType(fields(data))
	}
	if typ == wire.TypeHeatmapHover {
		return nil // the heatmap shows its own readout
	}
	go func() {
		c.Env.Lock()
		if typ == wire.TypeHeatmapDrawn {
			// Only the timing readout changes: while a person scrubs it is
			// patched and the page renders when the sliders are still,
			// otherwise it renders when the page is idle (a render costs
			// this page's thread 15-25 ms).
			defer func() {
				if c.scrubbing() {
					c.patchLive()
					c.renderWhenStill()
				} else {
					c.renderIdle()
				}
			}()
		} else {
			defer c.renderSoon()
		}
		c.frameReady = true
		switch typ {
		case wire.TypeHeatmapDrawn:
			// DrawnAt is on the clock every page of this browser shares
			// (timeOrigin + now); the heatmap page may run in another
			// process, and this page may hear of the drawing late.
			d := wire.ReadHeatmapDrawn(fields(data))
			if d.Seq <= 0 || d.DrawnAt == 0 {
				break
			}
			if ms := c.mapsSent[d.Seq%len(c.mapsSent)]; ms.seq == d.Seq {
				origin := js.Global().Get("performance").Get("timeOrigin").Float()
				c.drawnMS = d.DrawnAt - origin - ms.headSentAt
				RecordTiming("drawn", c.drawnMS)
				if d.Ladder {
					RecordTiming("drawn-ladder", c.drawnMS)
				}
				// Each time once: into its list, and into this drawing's
				// record of all its times from the slider move
				// (window.haeolsTimings.draws, for the tests' logs).
				rec := js.Global().Get("Object").New()
				rec.Set("drawn", c.drawnMS)
				rec.Set("ladder", d.Ladder)
				for k, at := range map[string]float64{"posted": d.PostedAt, "relayed": d.RelayedAt, "arrived": d.ArrivedAt} {
					if at > 0 {
						ms := at - origin - ms.headSentAt
						rec.Set(k, ms)
						// Ladder maps were posted before or after the move:
						// only their arrival is a latency.
						if k == "arrived" || !d.Ladder {
							RecordTiming("heatmap-"+k, ms)
						}
					}
				}
				for k, v := range map[string]float64{"decode": d.DecodeMs, "wait": d.WaitMs, "paint": d.PaintMs, "pixels": d.PixelsMs} {
					rec.Set(k, v)
					RecordTiming("heatmap-"+k, v)
				}
				// Whether the heatmap page had the maps decoded and
				// painted before the move (a ladder step it prepared).
				rec.Set("prepared", d.Prepared)
				timingList("draws").Call("push", rec)
			}
		case wire.TypeHeatmapReady:
			c.frameStarted = true
			c.heatmapReset()
			switch {
			case c.lastHeadKey != (headKey{}) && c.headTimedID != c.headID:
				// Unanswered: its answer brings the maps through this
				// page, and then it is asked again (below, OpHead),
				// rather than stopped half done.
				c.reaskHead = true
			case c.lastHeadKey != (headKey{}):
				// The head asked before the heatmap page ran: ask again, for
				// maps relayed from now on (the worker then climbs the
				// ladder of that view with the heatmap page's maps).
				c.lastHeadKey = headKey{}
				c.refresh()
			}
		case wire.TypeHeatmapError:
			e := wire.ReadHeatmapError(fields(data))
			if e.Missing != "" {
				// Maps reached the heatmap page without the original map it
				// should hold (the two disagree on what it holds): start
				// over and ask for the head again.
				c.heatmapReset()
				c.lastHeadKey = headKey{}
				c.refresh()
				break
			}
			if !c.frameStarted && !c.unsandboxed {
				// The sandboxed page could not start its program (a
				// static host that does not let an opaque origin fetch
				// heatmap.wasm): run it as an ordinary iframe instead,
				// on the page's thread, and ask for the maps again.
				c.unsandboxed = true
				if host := js.Global().Get("document").Call("getElementById", "heatmap-host"); host.Truthy() {
					frame.Call("remove")
					c.HostCreated(host)
					c.lastHeadKey = headKey{}
					c.refresh()
				}
				break
			}
			c.ErrMsg = "Heatmap: " + e.Error
		}
		c.flushMaps()
	}()
	return nil
}

// Started reports whether Start has run.
func (c *Root) Started() bool { return c.started }

// RecordTiming appends a measured latency (ms) to window.haeolsTimings[kind]
// ("head": slider move to the head's numbers, "headCompute": the worker's
// time on that answer, "maps": to its maps at this page, "heatmap-arrived":
// at the heatmap page, "drawn": to the heatmap drawn ("drawn-ladder" too
// when they were a ladder step's, shown at once), "grid": to the
// primary method's whole grid; "heatmap-decode", "heatmap-wait" and
// "heatmap-paint", the heatmap page's share of "drawn": decoding the maps,
// waiting for its next frame, painting; "ladderDone": when the worker
// finished a view's ladder (a time, not a latency); the app's entry point
// adds "build" and "render", the two halves of each vugu render), for the
// tests and the curious.
func RecordTiming(kind string, ms float64) { timingList(kind).Call("push", ms) }

// timingList is the array window.haeolsTimings[kind], made when missing.
func timingList(kind string) js.Value {
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
	return a
}

// renderWhenStill releases the event lock and renders once the sliders
// have been still for scrubbingMs (at most maxStaleMs after it was first
// asked), unless a render came meanwhile: while a person drags a slider,
// the head's answers patch the page (patchLive) and the whole page renders
// when the dragging pauses, not with every move and answer. Call it
// holding the lock.
func (c *Root) renderWhenStill() {
	if c.renderPending || c.laterPending {
		c.Env.UnlockOnly()
		return
	}
	c.laterPending, c.laterGen, c.laterSince = true, c.renders, now()
	var f js.Func
	f = c.lockedFunc(&c.laterFunc, func() {
		c.laterPending = false
		if c.renders != c.laterGen {
			c.Env.UnlockOnly()
			return
		}
		t := now()
		if wait := c.sliderAt + scrubbingMs - t; wait > 0 && t-c.laterSince < maxStaleMs {
			c.laterPending = true
			c.Env.UnlockOnly()
			js.Global().Call("setTimeout", f, wait)
			return
		}
		c.renderSoon()
	})
	c.Env.UnlockOnly()
	js.Global().Call("setTimeout", f, scrubbingMs)
}

// scrubbingMs is how long after a slider move a person counts as
// scrubbing: head answers then patch the page (patchLive) instead of
// rendering it, and the whole page renders once the sliders were still
// that long (renderWhenStill), or every maxStaleMs during a long drag.
const (
	scrubbingMs = 200
	maxStaleMs  = 1000
)

// scrubbing reports whether a slider moved in the last scrubbingMs.
func (c *Root) scrubbing() bool { return now()-c.sliderAt < scrubbingMs }

// patchLive writes what a head answer changes straight into the page: the
// head's title, its charts, the stage sentences, the ratio in the grid's
// heading and the timings, from the same getters the template uses. A
// render of the whole page costs this page's thread 15-25 ms, and while a
// person scrubs one would come with every answer, taking the thread that
// passes the heatmap's maps on and the CPU the worker and the heatmap page
// need; the render that follows writes the same values (and changes
// nothing the page shows).
func (c *Root) patchLive() {
	doc := js.Global().Get("document")
	byID := func(id string) js.Value { return doc.Call("getElementById", id) }
	setText := func(id, s string) {
		if el := byID(id); el.Truthy() && el.Get("textContent").String() != s {
			el.Set("textContent", s)
		}
	}
	setText("head-title", c.HeadTitle())
	setText("grid-ratio", Fmt2(c.S.Ratio))
	setText("timing", c.Timing())
	for _, which := range []string{"profile", "curve"} {
		if el := byID(which); el.Truthy() {
			c.SyncHTML(el, which)
		}
	}
	// The sentences, when there are as many as shown (else the render
	// brings them).
	if ol := byID("explain"); ol.Truthy() {
		ex, li := c.Explanation(), ol.Get("children")
		if li.Get("length").Int() == len(ex) {
			for i, s := range ex {
				if el := li.Index(i); el.Get("textContent").String() != s {
					el.Set("textContent", s)
				}
			}
		}
	}
}

// renderIdle releases the event lock and asks for one render when the
// page is next idle (requestIdleCallback, at most half a second later),
// for changes nobody waits for. Call it holding the lock.
func (c *Root) renderIdle() {
	ric := js.Global().Get("requestIdleCallback")
	switch {
	case c.renderPending || c.idlePending:
		c.Env.UnlockOnly() // a render is on its way
		return
	case ric.Type() != js.TypeFunction:
		c.renderSoon()
		return
	}
	c.idlePending = true
	f := c.lockedFunc(&c.idleFunc, func() {
		c.idlePending = false
		c.renderSoon()
	})
	c.Env.UnlockOnly()
	opts := js.Global().Get("Object").New()
	opts.Set("timeout", 500)
	ric.Invoke(f, opts)
}

// rehearseRounds is how many times rehearse builds the views of a slider
// move.
const rehearseRounds = 40

// rehearse builds the views that every slider move rebuilds (the probe
// profile and the curve charts, the sentences on the stages, the head's
// title, and the writes that patch one curve chart into the next) and
// throws them away, at idle moments, a few at a time, rehearseRounds times
// per page, from the head's first answer on: the curve comes last, after
// the grid passes, often just before a first drag, so until it is there
// the curve chart is rehearsed on a stand-in of the same shape. V8
// optimises wasm code in the background once it has run for a while: the
// rehearsal has it optimise the chart builders and the sentences, the
// largest functions of a slider move, at idle, not during the first drag,
// where compiling takes the cores the drag needs (docs/PERFORMANCE.md). It
// is the app's only rehearsal. A slider move ends it (the drag runs the
// same code). Call it holding the lock; it releases it.
func (c *Root) rehearse() {
	ric := js.Global().Get("requestIdleCallback")
	if c.rehearsedHead >= rehearseRounds && c.rehearsedCurve >= rehearseRounds || c.head == nil || ric.Type() != js.TypeFunction {
		c.rehearsing, c.rehearsePrev = false, nil
		c.Env.UnlockOnly()
		return
	}
	f := c.lockedFunc(&c.rehearseFunc, func() {
		for start := now(); now()-start < 8 && c.head != nil; {
			did := false
			if c.rehearsedHead < rehearseRounds {
				c.rehearsedHead++
				_ = c.chart("profile")
				_ = c.Explanation()
				_ = c.HeadTitle()
				did = true
			}
			if c.rehearsedCurve < rehearseRounds {
				c.rehearsedCurve++
				cv := c.curve
				if cv == nil {
					cv = standInCurve(c.S.Methods)
				}
				// A neighbouring ratio each round, as a drag shows them.
				r := math.Min(math.Max(c.S.Ratio+float64(c.rehearsedCurve%7-3)/100, 0.01), 1)
				ch := curveChart(cv, r, c.S.Method)
				if prev := c.rehearsePrev; prev != nil && ch.patchable(prev) {
					_, _ = json.Marshal(ch.patchOps(prev))
				}
				c.rehearsePrev = ch
				did = true
			}
			if !did {
				break
			}
		}
		c.rehearse()
	})
	c.Env.UnlockOnly()
	ric.Invoke(f)
}

// standInCurve is an error-vs-ratio curve of the shape the worker answers
// (methods x CurveRatios), with made-up errors, for rehearse.
func standInCurve(methods []string) *wire.Curve {
	rs := CurveRatios()
	cv := &wire.Curve{Methods: methods, Ratios: rs, Err: make([][]result.Num, len(methods))}
	for i := range methods {
		cv.Err[i] = make([]result.Num, len(rs))
		for j, r := range rs {
			cv.Err[i][j] = result.Num(0.4 * (1 - r) / float64(i+1))
		}
	}
	return cv
}

// startRehearsal starts rehearse unless it is running. Call it holding the
// lock.
func (c *Root) startRehearsal() {
	if c.rehearsing || c.rehearsedHead >= rehearseRounds && c.rehearsedCurve >= rehearseRounds {
		return
	}
	c.rehearsing = true
	go func() {
		c.Env.Lock()
		c.rehearse()
	}()
}

// lockedFunc returns the JS callback kept in *fn, making it the first
// time: it runs f in a goroutine of its own holding the event lock (f
// releases it).
func (c *Root) lockedFunc(fn *js.Func, f func()) js.Func {
	if fn.Type() != js.TypeFunction {
		*fn = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
			go func() {
				c.Env.Lock()
				f()
			}()
			return nil
		})
	}
	return *fn
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
	f := c.lockedFunc(&c.renderFunc, func() {
		c.renderPending = false
		c.renders++
		c.Env.UnlockRender()
	})
	c.Env.UnlockOnly()
	raf := js.Global().Get("requestAnimationFrame")
	if raf.Truthy() {
		raf.Invoke(f)
	} else {
		js.Global().Call("setTimeout", f, 16)
	}
}
