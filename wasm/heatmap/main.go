//go:build js && wasm

// Command heatmap is the haeols attention heatmap renderer for the browser:
// an ebiten program (GOOS=js GOARCH=wasm, served as heatmap.wasm by
// heatmap.html) that draws the original | compressed | difference attention
// maps of one head with their token-class strips, the prefix-position axis
// and a colour legend: the same pixels as haeols heatmap's PNG (package
// github.com/haeols/haeols/ui/heatmap paints both).
//
// It is meant to live in an iframe. Its parent posts wire.Maps messages as
// {json: "...", buffers: {orig, comp, classes, segments: ArrayBuffer}}; only
// messages whose source is the parent window and whose origin is the page's
// own (any origin when the page is sandboxed, as the app embeds it) are
// read, the latest one wins: a message is decoded when the next frame
// starts, and one that a newer message replaced before then never is. The
// messages the app relays from its worker carry a key for the head's
// unchanging part, which comes only with the first message of a key (see
// wire); this page keeps the last wire.RecentKeys of those parts as the
// messages arrive. It keeps every relayed maps message of the app's focus
// by ratio slider step (its ladder, a wire.Ladder): maps of a ladder step
// are drawn only when the parent posts {show: view, seq}, as the maps of
// seq, and a show message of a step it holds draws at once; maps older than
// those on screen, or of the view on screen, are not drawn (wire.Screen).
// The steps next to the one on screen are decoded and painted while the
// page is idle, so that their show message only puts the painting on
// screen (prepStore). Its messages to the parent are wire's HeatmapReady,
// HeatmapDrawn, HeatmapHover, HeatmapView and HeatmapError.
//
// The mouse wheel zooms about the cursor, dragging pans, a double click (or
// the 0 key) shows the whole map again; with the canvas focused, + and -
// zoom and the arrow keys pan. All drawing, text included (a
// bitmap font, no font shaping library), is done into an RGBA buffer by
// package github.com/haeols/haeols/ui/heatmap; ebiten only shows it.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"sync"
	"syscall/js"
	"unsafe"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"

	"github.com/haeols/haeols/ui/heatmap"
	"github.com/haeols/haeols/wire"
)

// inbox holds the latest message from the parent, undecoded, until Update
// takes it.
type inbox struct {
	mu    sync.Mutex
	msg   js.Value      // the message's data; undefined when there is none
	env   wire.Envelope // its envelope
	reset bool          // a double click asked for the whole map
	at    float64       // when the message arrived (performance.now())
}

func (b *inbox) askReset() {
	b.mu.Lock()
	b.reset = true
	b.mu.Unlock()
}

func (b *inbox) takeReset() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.reset
	b.reset = false
	return r
}

// put keeps msg as the latest message, unless the message waiting is
// newer (a higher seq: a show message overtakes the worker's maps of
// earlier moves) or the same maps (the worker's maps of a view shown from
// the ladder).
func (b *inbox) put(msg js.Value, at float64) {
	env := envelope(msg)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.msg.Type() == js.TypeObject && env.Seq > 0 && b.env.Seq > 0 && (env.Seq < b.env.Seq || env.Seq == b.env.Seq && env.View == b.env.View) {
		return
	}
	b.msg, b.env, b.at = msg, env, at
}

// envelope reads a message's envelope (wire.Envelope).
func envelope(msg js.Value) wire.Envelope { return wire.ReadEnvelope(fields(msg)) }

// fields reads a JavaScript object's fields.
func fields(v js.Value) wire.Fields { return wire.JSFields[js.Value, js.Type]{V: v} }

func (b *inbox) pending() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.msg.Type() == js.TypeObject
}

func (b *inbox) take() (js.Value, float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.msg
	b.msg = js.Undefined()
	return m, b.at
}

// now is performance.now().
func now() float64 { return js.Global().Get("performance").Call("now").Float() }

type game struct {
	in       *inbox
	r        *heatmap.Renderer
	data     *heatmap.Data
	panels   []heatmap.PanelKind
	view     heatmap.View
	lay      heatmap.Layout
	w, h     int
	scale    int // integer text scale (device pixels per font pixel)
	img      *image.RGBA
	painted  bool // the screen holds img (it is not cleared between frames)
	dirty    bool
	hover    *heatmap.Readout
	lastHov  [3]int
	drag     bool
	dragX    int
	dragY    int
	dragView heatmap.View
	posted   heatmap.View // the view last reported to the parent
	drawnMsg bool
	screen   wire.Screen // the maps on screen
	shown    bool        // they came from the ladder (a show message)
	// Timings of the latest data, reported with "heatmap-drawn" (ms): its
	// decoding, and when it arrived (performance.now()).
	decodeMs, arrived float64
	// postedAt and relayedAt are when the worker posted the maps on screen
	// and the app passed them on (timeOrigin + now; 0 when not relayed).
	postedAt, relayedAt float64
	lastNew             float64 // when the maps on screen were taken (performance.now())
	frameTimer          timer   // asks for a frame (later)
	prep                prepStore
	screenMem           *bufSet  // the memory of the maps on screen when they were prepared
	screenBufs          js.Value // the buffers of their message
	prepared            bool     // the maps on screen were prepared before their show message
}

// nextSteps are the steps of the ladder the page decodes and paints
// before the app shows them, from step cur: those a drag reaches next, two
// in the direction of the last move and one behind. A show message of a prepared
// step only hands its painting to the renderer (decoding and painting take
// 8-25 ms of a drawing otherwise).
func (ps *prepStore) nextSteps(cur int) []int {
	d := ps.dir
	if d == 0 {
		d = 1
	}
	return []int{cur + d, cur + 2*d, cur - d}
}

// prepStore holds the ladder's steps prepared for a show message (of the
// ladder's focus, prefix), by step, and the memory of those no longer
// wanted.
type prepStore struct {
	prefix string
	by     map[int]*preparedMaps
	mem    []*bufSet
	paint  []*heatmap.Painting
	dir    int  // the sign of the last change of step on screen
	wanted bool // a step gave way to a frame: the frame schedules one
	step   timer
}

// preparedMaps are a ladder step's maps decoded and painted for the layout
// and view on screen when they were painted.
type preparedMaps struct {
	bufs js.Value // the message's buffers: which message this is
	d    *heatmap.Data
	mem  *bufSet
	p    *heatmap.Painting
}

// free keeps mem and p (either may be nil) for later preparations.
func (ps *prepStore) free(mem *bufSet, p *heatmap.Painting) {
	if mem != nil {
		ps.mem = append(ps.mem, mem)
	}
	if p != nil {
		ps.paint = append(ps.paint, p)
	}
}

// put holds e as the prepared maps of step of the focus prefix
// (replacing any; a new prefix drops the others).
func (ps *prepStore) put(prefix string, step int, e *preparedMaps) {
	if prefix != ps.prefix {
		for k := range ps.by {
			ps.drop(k)
		}
		ps.prefix = prefix
	}
	ps.drop(step)
	if ps.by == nil {
		ps.by = map[int]*preparedMaps{}
	}
	ps.by[step] = e
}

// get returns the prepared maps of view, if any.
func (ps *prepStore) get(view string) (*preparedMaps, int) {
	p, step, ok := wire.ViewStep(view)
	if !ok || p != ps.prefix {
		return nil, 0
	}
	return ps.by[step], step
}

// drop forgets the prepared maps of step.
func (ps *prepStore) drop(step int) {
	if e := ps.by[step]; e != nil {
		delete(ps.by, step)
		ps.free(e.mem, e.p)
	}
}

// schedulePrep runs a preparation step in a task of its own, soon: the
// page's thread takes messages (a show message among them) in between.
func (g *game) schedulePrep() { g.prep.step.after(0, g.prepStep) }

// timer runs a function once in a task of its own, after a delay; asking
// again while it waits changes nothing.
type timer struct {
	waiting bool
	fn      js.Func
}

// after runs f in ms milliseconds, unless the timer already waits (f must
// be the same function each time).
func (t *timer) after(ms float64, f func()) {
	if t.waiting {
		return
	}
	t.waiting = true
	if t.fn.Type() != js.TypeFunction {
		t.fn = js.FuncOf(func(js.Value, []js.Value) any {
			t.waiting = false
			f()
			return nil
		})
	}
	js.Global().Call("setTimeout", t.fn, ms)
}

// prepStep prepares one of the ladder's steps a drag reaches next
// (decoding its maps, or only painting them again after the layout or view
// changed), forgets those no longer among them, and schedules the next step
// while any is left. It gives way to a frame that is due.
func (g *game) prepStep() {
	ps := &g.prep
	if g.data == nil || g.img == nil {
		return
	}
	if g.in.pending() || g.dirty {
		ps.wanted = true
		return
	}
	prefix, cur, ok := wire.ViewStep(g.screen.View)
	if !ok || prefix != ladder.Prefix() {
		return
	}
	want := ps.nextSteps(cur)
	for step := range ps.by {
		if ps.prefix != prefix || !slices.Contains(want, step) {
			ps.drop(step)
		}
	}
	for _, step := range want {
		m, ok := ladder.Step(step)
		if !ok {
			continue
		}
		bufs := m.Get("buffers")
		e := ps.by[step]
		if e != nil && e.bufs.Equal(bufs) && e.p.Shows(g.lay, e.d, g.view) {
			continue
		}
		if e == nil || !e.bufs.Equal(bufs) {
			var mem *bufSet
			if k := len(ps.mem); k > 0 {
				mem, ps.mem = ps.mem[k-1], ps.mem[:k-1]
			} else {
				mem = &bufSet{}
			}
			d, err := decode(m, g.data, mem)
			if err != nil || d == nil {
				// Not drawable now (say, its original map is gone): its
				// show message will decode it and say why.
				ps.drop(step)
				ps.free(mem, nil)
				continue
			}
			e = &preparedMaps{bufs: bufs, d: d, mem: mem}
			ps.put(prefix, step, e)
		}
		if e.p == nil {
			if k := len(ps.paint); k > 0 {
				e.p, ps.paint = ps.paint[k-1], ps.paint[:k-1]
			}
		}
		e.p = g.r.Prepare(e.p, g.lay, e.d, g.view)
		g.schedulePrep()
		return
	}
}

// Update takes and decodes the latest message, reads the mouse and keyboard
// and marks the canvas dirty when anything visible changed.
func (g *game) Update() error {
	// New maps at most every minRepaintMs: while a person scrubs, maps come
	// faster than that, and painting each one (5-15 ms) would take the
	// CPU the app page and the worker need; the latest one is drawn.
	if wait := minRepaintMs - (now() - g.lastNew); wait > 0 && g.in.pending() {
		g.later(wait)
	} else if msg, at := g.in.take(); msg.Type() == js.TypeObject {
		g.lastNew = now()
		g.take(msg, at)
	}
	if g.data == nil {
		return nil
	}
	x, y := ebiten.CursorPosition()
	// Zoom about the cursor.
	if _, wy := ebiten.Wheel(); wy != 0 {
		if fx, fy, ok := g.lay.MapFraction(x, y); ok {
			// Browsers report about 100 per wheel notch (less, finely, on
			// touchpads): a notch zooms by e^0.2, about 1.22.
			g.view = g.view.Zoom(math.Exp(0.002*math.Max(-300, math.Min(300, wy))), fx, fy)
			g.dirty = true
		}
	}
	// Drag to pan; double click (a DOM event: quick clicks can fall
	// between two ticks) to reset.
	if inpututil.IsMouseButtonJustPressed(ebiten.MouseButtonLeft) {
		if _, _, ok := g.lay.MapFraction(x, y); ok {
			g.drag, g.dragX, g.dragY, g.dragView = true, x, y, g.view
		}
	}
	if g.in.takeReset() {
		g.drag = false
		g.view, g.dirty = heatmap.NewView(g.view.Rows, g.view.Cols), true
	}
	if g.drag {
		if !ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft) {
			g.drag = false
		} else if mw, mh := g.lay.MapSize(); mw > 0 && mh > 0 && (x != g.dragX || y != g.dragY) {
			g.view = g.dragView.Pan(float64(x-g.dragX)/float64(mw), float64(y-g.dragY)/float64(mh))
			g.dirty = true
		}
	}
	// Keyboard (when the canvas has focus): + and - zoom about the centre,
	// arrows pan by a tenth, 0 shows the whole map.
	pressed := func(keys ...ebiten.Key) bool {
		for _, k := range keys {
			// Once on the press, then repeating every 4 ticks after 20.
			if d := inpututil.KeyPressDuration(k); d == 1 || d > 20 && d%4 == 0 {
				return true
			}
		}
		return false
	}
	old := g.view
	switch {
	case pressed(ebiten.KeyDigit0, ebiten.KeyNumpad0):
		g.view = heatmap.NewView(g.view.Rows, g.view.Cols)
	case pressed(ebiten.KeyEqual, ebiten.KeyNumpadAdd):
		g.view = g.view.Zoom(1.25, 0.5, 0.5)
	case pressed(ebiten.KeyMinus, ebiten.KeyNumpadSubtract):
		g.view = g.view.Zoom(0.8, 0.5, 0.5)
	case pressed(ebiten.KeyArrowLeft):
		g.view = g.view.Pan(0.1, 0)
	case pressed(ebiten.KeyArrowRight):
		g.view = g.view.Pan(-0.1, 0)
	case pressed(ebiten.KeyArrowUp):
		g.view = g.view.Pan(0, 0.1)
	case pressed(ebiten.KeyArrowDown):
		g.view = g.view.Pan(0, -0.1)
	}
	if g.view != old {
		g.dirty = true
	}
	g.updateHover(x, y)
	if g.view != g.posted {
		g.posted = g.view
		v := g.view
		post(wire.HeatmapView{Rows: v.Rows, Cols: v.Cols, R0: v.R0, RSpan: v.RSpan, C0: v.C0, CSpan: v.CSpan})
	}
	return nil
}

// wake asks for the frame that takes a new message: now, or once
// minRepaintMs have passed since the maps on screen were taken. A frame
// before then would only ask for a later one, and ebiten presents a frame
// even when Draw paints nothing (in headless Chromium's software GL a
// presented frame costs the GPU process about 15 ms of CPU).
func (g *game) wake() {
	if wait := minRepaintMs - (now() - g.lastNew); wait > 0 {
		g.later(wait)
		return
	}
	ebiten.ScheduleFrame() //nolint:staticcheck // see main
}

// minRepaintMs is the shortest time between two new maps on screen.
const minRepaintMs = 30

// later asks for a frame in ms milliseconds (once: a pending request
// stands).
func (g *game) later(ms float64) {
	g.frameTimer.after(ms, func() {
		ebiten.ScheduleFrame() //nolint:staticcheck // see main
	})
}

// take decodes a message from the parent and shows its maps from the next
// Draw on; a message that does not decode is reported and the maps shown
// stay.
func (g *game) take(msg js.Value, at float64) {
	env := envelope(msg)
	view, seq, show := env.View, env.Seq, env.Shown
	if g.data != nil && !g.screen.Wants(view, seq) {
		return // older than the maps on screen, or the same view again
	}
	t0 := now()
	if show {
		if e, step := g.prep.get(view); e != nil && e.bufs.Equal(msg.Get("buffers")) && e.p.Shows(g.lay, e.d, g.view) {
			// Decoded and painted before the show message came.
			delete(g.prep.by, step)
			e.d.Maps.Seq = seq
			g.show(e.d, msg, at, t0, e.mem, g.r.Adopt(e.p))
			return
		}
	}
	slot := &maps.bufs[maps.next]
	d, err := decode(msg, g.data, slot)
	if err != nil && show {
		// Ladder maps this page cannot draw now (their original map is
		// gone): the worker's answer to the same move will come.
		return
	}
	if err != nil {
		js.Global().Get("console").Call("error", "heatmap: "+err.Error())
		e := wire.HeatmapError{Error: err.Error()}
		var miss missingError
		if errors.As(err, &miss) {
			e.Missing = string(miss)
		}
		post(e)
		return
	}
	if d == nil {
		return
	}
	maps.next = (maps.next + 1) % len(maps.bufs)
	g.show(d, msg, at, t0, nil, nil)
}

// show puts the maps d of message msg (arrived at at, taken at t0) on
// screen from the next Draw on; mem is their memory when they were
// prepared (nil: the ring's), old the painting the renderer gave up for
// theirs (nil: it paints d over its own). Prepared maps leaving the screen
// stay prepared (with their painting, when old is it): a drag that turns
// back reaches them first.
func (g *game) show(d *heatmap.Data, msg js.Value, at, t0 float64, mem *bufSet, old *heatmap.Painting) {
	env := envelope(msg)
	view, show := env.View, env.Shown
	prefix, step, ok := wire.ViewStep(view)
	prevPrefix, prev, prevOK := wire.ViewStep(g.screen.View)
	if ok && prevOK && prefix == prevPrefix && step != prev {
		g.prep.dir = 1
		if step < prev {
			g.prep.dir = -1
		}
	}
	if g.screenMem != nil && prevOK && g.screen.View != view {
		if old != nil && !old.Shows(g.lay, g.data, g.view) {
			g.prep.free(nil, old)
			old = nil
		}
		g.prep.put(prevPrefix, prev, &preparedMaps{bufs: g.screenBufs, d: g.data, mem: g.screenMem, p: old})
	} else {
		g.prep.free(g.screenMem, old)
	}
	g.screenMem, g.prepared = mem, mem != nil
	g.screenBufs = msg.Get("buffers")
	g.decodeMs, g.arrived = now()-t0, at
	// When the worker posted the maps and the app passed them on (relay
	// messages; on the clock every page shares), for the timings.
	g.postedAt, g.relayedAt = env.PostedAt, env.RelayedAt
	panels, _ := heatmap.PanelsFor(d.Maps.Panel) // checked by Decode
	if g.data == nil || g.data.Maps.Rows != d.Maps.Rows || g.data.Maps.Cols != d.Maps.Cols {
		g.view = heatmap.NewView(d.Maps.Rows, d.Maps.Cols)
	}
	g.data, g.panels, g.dirty, g.drawnMsg = d, panels, true, true
	// The hovered cell's readout is of the maps on screen: read it again
	// (a person may hold the cursor on a cell and step the ratio with the
	// keyboard).
	g.lastHov = [3]int{-1, -1, -1}
	g.screen, g.shown = wire.Screen{View: view, Seq: d.Maps.Seq}, show
	g.relayout()
}

func (g *game) updateHover(x, y int) {
	var ro *heatmap.Readout
	if h, ok := g.lay.Hit(x, y, g.view); ok {
		if r, ok := g.data.Lookup(h); ok {
			ro = &r
		}
	}
	key := [3]int{-1, -1, -1}
	if ro != nil {
		key = [3]int{int(ro.Kind), ro.Row, ro.Col}
	}
	if key == g.lastHov {
		return
	}
	g.lastHov, g.hover, g.dirty = key, ro, true
	msg := wire.HeatmapHover{Row: -1, Col: -1, Value: math.NaN()}
	if ro != nil {
		msg.Panel, msg.Row, msg.Col = ro.Kind.Name(), ro.Row, ro.Col
		if ro.InMap {
			msg.Value = float64(ro.Value)
		}
	}
	post(msg)
}

func (g *game) relayout() {
	rows, cols := 1, 1
	if g.data != nil {
		rows, cols = g.data.Maps.Rows, g.data.Maps.Cols
	}
	g.lay = heatmap.NewLayout(g.w, g.h, g.panels, rows, cols, heatmap.TextFont(g.scale))
	g.dirty = true
}

// Draw repaints only when something changed (the screen is not cleared
// between frames).
func (g *game) Draw(screen *ebiten.Image) {
	if !g.dirty && g.painted {
		return
	}
	t0 := now()
	if g.img == nil || g.img.Bounds().Dx() != g.w || g.img.Bounds().Dy() != g.h {
		g.img = image.NewRGBA(image.Rect(0, 0, g.w, g.h))
	}
	var hover *heatmap.Readout
	if g.data != nil {
		hover = g.hover
	}
	g.r.Render(g.img, g.lay, g.data, g.view, hover)
	heatmap.DrawLabels(g.img, g.r.Labels(g.lay, g.data, g.view, hover), g.scale, heatmap.Ink)
	tp := now()
	// Straight into the screen: a texture upload, not an upload to an
	// offscreen image and a draw of it (with a software GL, as headless
	// Chromium has, each full-canvas draw costs the GPU process
	// milliseconds).
	screen.WritePixels(g.img.Pix)
	g.painted = true
	g.dirty = false
	if g.drawnMsg || g.prep.wanted {
		// Prepare the maps a drag reaches next, after this frame.
		g.prep.wanted = false
		g.schedulePrep()
	}
	if g.drawnMsg && g.data != nil {
		g.drawnMsg = false
		t1 := now()
		origin := js.Global().Get("performance").Get("timeOrigin").Float()
		post(wire.HeatmapDrawn{Rows: g.data.Maps.Rows, Cols: g.data.Maps.Cols, Ratio: g.data.Maps.Ratio, Seq: g.data.Maps.Seq,
			DrawnAt: origin + t1, ArrivedAt: origin + g.arrived, PostedAt: g.postedAt, RelayedAt: g.relayedAt,
			DecodeMs: g.decodeMs, WaitMs: t0 - g.arrived - g.decodeMs, PaintMs: t1 - t0, PixelsMs: tp - t0,
			Ladder: g.shown, Prepared: g.prepared})
	}
}

// Layout renders at device pixels: the canvas is the iframe's CSS size times
// the device scale factor, so maps stay sharp on high-density screens.
func (g *game) Layout(outsideW, outsideH int) (int, int) {
	dsf := ebiten.Monitor().DeviceScaleFactor()
	w, h := max(int(float64(outsideW)*dsf), 1), max(int(float64(outsideH)*dsf), 1)
	s := max(int(math.Round(dsf)), 1)
	if w != g.w || h != g.h || s != g.scale {
		g.w, g.h, g.scale = w, h, s
		g.relayout()
	}
	return w, h
}

// post sends msg (one of wire's Heatmap messages) to the parent window.
func post(msg interface{ Write(wire.Setter) }) {
	parent := js.Global().Get("parent")
	if parent.Equal(js.Global().Get("window")) {
		return
	}
	o := js.Global().Get("Object").New()
	msg.Write(o)
	parent.Call("postMessage", o, "*")
}

// listen receives wire.Maps messages from the parent window, starting
// with the one heatmap.html kept while the program loaded.
func listen(in *inbox, wake, prepare func()) {
	window := js.Global().Get("window")
	origin := window.Get("location").Get("origin").String()
	receive := func(data js.Value) {
		in.put(data, now())
		wake()
	}
	cb := js.FuncOf(func(this js.Value, args []js.Value) any {
		ev := args[0]
		// From the parent only; from a parent of this origin, unless this
		// page runs sandboxed (origin "null"), as the app embeds it.
		if !ev.Get("source").Equal(window.Get("parent")) || window.Get("parent").Equal(window) || (origin != "null" && ev.Get("origin").String() != origin) {
			return nil
		}
		data := ev.Get("data")
		// A message with its key's unchanging part is kept at once, before
		// a newer message may replace it in the inbox.
		if data.Type() != js.TypeObject {
			return nil
		}
		env := envelope(data)
		if b := data.Get("buffers"); env.Key != "" && b.Type() == js.TypeObject && b.Get("orig").Type() == js.TypeObject {
			statics.Put(env.Key, data)
		}
		if env.Relay == wire.RelayHeatmap && env.View != "" {
			// Every relayed view goes into the ladder, as the worker's
			// wire.Ladder holds it.
			ladder.Put(env.View, data, buffersSize(data.Get("buffers")))
		}
		switch {
		case env.Ladder:
			// A ladder step the app may show next: kept, drawn on its
			// show message (or now, if that came first).
			if waiting.View == env.View {
				receive(shown(data, waiting.Seq))
				waiting = wire.Screen{}
			} else {
				prepare()
			}
		case env.Show != "":
			// The app's view changed to show (its head request seq): draw
			// the ladder's maps of it, else wait for them or for the
			// worker's answer.
			view, seq := env.Show, env.Seq
			if m, ok := ladder.Get(view); ok {
				receive(shown(m, seq))
				waiting = wire.Screen{}
			} else {
				waiting = wire.Screen{View: view, Seq: seq}
			}
		default:
			if env.View != "" && env.View == waiting.View {
				waiting = wire.Screen{}
			}
			receive(data)
		}
		return nil
	})
	window.Call("addEventListener", "message", cb)
	window.Call("addEventListener", "dblclick", js.FuncOf(func(this js.Value, args []js.Value) any {
		in.askReset()
		ebiten.ScheduleFrame() //nolint:staticcheck // see main
		return nil
	}))
	if started := window.Get("haeolsHeatmapStarted"); started.Type() == js.TypeFunction {
		if p := started.Invoke(); p.Type() == js.TypeObject {
			receive(p)
		}
	}
}

// ladder holds the relayed maps messages of the app's focus by slider
// step, and waiting is the show message whose maps have not come yet (see
// wire).
var (
	ladder  wire.Ladder[js.Value]
	waiting wire.Screen
)

// buffersSize is the byteLength of a message's buffers, added up (as the
// worker's wire.Ladder counts them).
func buffersSize(bufs js.Value) int {
	if bufs.Type() != js.TypeObject {
		return 0
	}
	n := 0
	vals := js.Global().Get("Object").Call("values", bufs)
	for i := range vals.Length() {
		if b := vals.Index(i).Get("byteLength"); b.Type() == js.TypeNumber {
			n += b.Int()
		}
	}
	return n
}

// shown is a ladder message m to draw as the maps of seq: the same buffers
// (decoding copies them, so m stays whole for another show).
func shown(m js.Value, seq int) js.Value {
	o := js.Global().Get("Object").New()
	for _, k := range []string{"json", "buffers"} {
		o.Set(k, m.Get(k))
	}
	env := envelope(m)
	wire.Envelope{Key: env.Key, View: env.View, Seq: seq, Shown: true, PostedAt: env.PostedAt, RelayedAt: env.RelayedAt}.Write(o)
	return o
}

// bufSet is the memory of a decoded message's compressed and difference
// maps. (Original maps are not reused: each is decoded once per key, and
// the Data of that key share it.)
type bufSet struct{ comp, diff []float32 }

// ring holds the float buffers of the last messages: decoding reuses the
// older instead of allocating two maps per message. Two: the maps on
// screen and the ones being decoded (Update decodes, so nothing else holds
// one). Prepared maps (prepStore) have memory of their own.
type ring struct {
	next int
	bufs [2]bufSet
}

var maps ring

// floatsFrom copies the Uint8Array view of b (an ArrayBuffer of
// little-endian float32, wasm's own byte order) straight into dst's memory,
// grown to n values; it fails unless b holds exactly n values.
func floatsFrom(name string, b js.Value, dst []float32, n int) ([]float32, error) {
	if b.Type() != js.TypeObject {
		return nil, fmt.Errorf("heatmap: buffer %q missing", name)
	}
	u := js.Global().Get("Uint8Array").New(b)
	if got := u.Get("length").Int(); got != 4*n {
		return nil, fmt.Errorf("heatmap: buffer %q: %d bytes, want 4 x rows x cols = %d", name, got, 4*n)
	}
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	if n > 0 {
		js.CopyBytesToGo(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*n), u)
	}
	return dst, nil
}

// bufferOf is buffer name of a message's buffers object, undefined when
// there is none.
func bufferOf(bufs js.Value, name string) js.Value {
	if bufs.Type() != js.TypeObject {
		return js.Undefined()
	}
	return bufs.Get(name)
}

// bytesOf copies buffer name of a message's buffers object (nil when there
// is none).
func bytesOf(bufs js.Value, name string) []byte {
	b := bufferOf(bufs, name)
	if b.Type() != js.TypeObject {
		return nil
	}
	u := js.Global().Get("Uint8Array").New(b)
	out := make([]byte, u.Get("length").Int())
	js.CopyBytesToGo(out, u)
	return out
}

// statics are the messages that came with their key's unchanging part
// (the worker keeps the same wire.Recent of keys).
var statics wire.Recent[js.Value]

// missingError is a message's key whose unchanging part this page does
// not hold.
type missingError string

func (k missingError) Error() string {
	return fmt.Sprintf("maps of %q came without their original map, which this page does not hold", string(k))
}

// decode reads {json, buffers, key} into Data, its compressed and
// difference maps into slot's memory; other messages give nil, nil. A
// message without buffer "orig" takes its key's unchanging part (original
// map, token texts, needles) from the maps on screen (prev) or from
// statics. When the original map equals that of prev, the new Data shares
// prev's (Data.ShareOrig), so that its painting is reused. An original map
// is never written once decoded: Data on screen and prepared Data may
// share it.
func decode(v js.Value, prev *heatmap.Data, slot *bufSet) (*heatmap.Data, error) {
	if v.Type() != js.TypeObject || v.Get("json").Type() != js.TypeString {
		return nil, nil
	}
	var m wire.Maps
	if err := json.Unmarshal([]byte(v.Get("json").String()), &m); err != nil {
		return nil, fmt.Errorf("maps message: %w", err)
	}
	env := envelope(v)
	if env.Seq > 0 {
		m.Seq = env.Seq // ladder maps, shown for the app's request seq
	}
	key := env.Key
	bufs := v.Get("buffers")
	get := func(name string) js.Value { return bufferOf(bufs, name) }
	bytesOf := func(name string) []byte { return bytesOf(bufs, name) }
	if m.Rows <= 0 || m.Cols <= 0 || m.Rows > (1<<26)/m.Cols {
		// NewData says what is wrong before anything is allocated.
		return heatmap.NewData(m, nil, nil, nil, nil, nil)
	}
	n := m.Rows * m.Cols
	var err error
	var orig []float32
	origBuf := get("orig")
	if origBuf.Type() != js.TypeObject && key != "" {
		if prev != nil && prev.Key == key && len(prev.Orig) == n {
			orig = prev.Orig
			m.TokenText, m.Needles = prev.Maps.TokenText, prev.Maps.Needles
		} else if st, ok := statics.Get(key); ok {
			var sm wire.Maps
			if err := json.Unmarshal([]byte(st.Get("json").String()), &sm); err != nil {
				return nil, fmt.Errorf("maps message: %w", err)
			}
			m.TokenText, m.Needles = sm.TokenText, sm.Needles
			origBuf = st.Get("buffers").Get("orig")
		} else {
			return nil, missingError(key)
		}
	}
	if origBuf.Type() == js.TypeObject || key == "" {
		if orig, err = floatsFrom("orig", origBuf, nil, n); err != nil {
			return nil, err
		}
	}
	if m.Factored {
		f, err := heatmap.DecodeFactored(m, bytesOf("scale"), bytesOf("inv"), bytesOf("syn"), bytesOf("share"), bytesOf("source"))
		if err != nil {
			return nil, err
		}
		if cap(slot.comp) < n {
			slot.comp = make([]float32, n)
		}
		slot.comp = slot.comp[:n]
		f.Expand(slot.comp, orig)
	} else if slot.comp, err = floatsFrom("comp", get("comp"), slot.comp, n); err != nil {
		return nil, err
	}
	d, err := heatmap.NewData(m, orig, slot.comp, slot.diff, bytesOf("classes"), bytesOf("segments"))
	if err != nil {
		return nil, err
	}
	d.Key = key
	slot.diff = d.Diff
	d.ShareOrig(prev)
	return d, nil
}

func main() {
	r, err := heatmap.NewRenderer(heatmap.Colormap)
	if err != nil {
		panic(err)
	}
	g := &game{in: &inbox{msg: js.Undefined()}, r: r, scale: 1, lastHov: [3]int{-1, -1, -1}}
	g.panels, _ = heatmap.PanelsFor("all")
	listen(g.in, g.wake, g.schedulePrep)
	ebiten.SetScreenClearedEveryFrame(false)
	// Update and Draw only when something happens (input, new maps, a
	// resize), not 60 times a second: every ebiten frame reads the page's
	// size, which forces a layout of the app page this iframe shares its
	// thread with (12 % of that thread while scrubbing, measured with
	// Chromium's profiler). The mode is deprecated in favour of skipping
	// draws, which would still read the size every frame.
	ebiten.SetFPSMode(ebiten.FPSModeVsyncOffMinimum) //nolint:staticcheck
	ebiten.SetRunnableOnUnfocused(true)
	ebiten.SetWindowTitle("haeols heatmap")
	post(wire.HeatmapReady{})
	if err := ebiten.RunGame(g); err != nil {
		js.Global().Get("console").Call("error", "heatmap: "+err.Error())
	}
}
