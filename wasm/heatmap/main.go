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
// wire); this page keeps the last wire.RecentKeys of those parts as
// the messages arrive. Relayed maps marked ahead are kept by view
// (wire.Ahead) and drawn only when the parent posts {show: view, seq},
// as the maps of seq; maps older than those on screen, or of the view on
// screen, are not drawn (wire.Screen). The maps ahead of the slider
// positions nearest the one on screen are decoded and painted while the
// page is idle, so that their show message only puts the painting on
// screen (prepStore). The renderer posts to its parent:
//
//	{type: "heatmap-ready"}                       once started
//	{type: "heatmap-drawn", rows, cols, ratio, seq, drawn_at, decode_ms,
//	 arrived_at, wait_ms, paint_ms, ahead,        after drawing a new message
//	 prepared, rehearsed}                         (ahead: maps sent ahead;
//	                                              prepared: decoded and painted
//	                                              before their show message;
//	                                              rehearsed: rehearsal rounds run)
//	                                              (seq: the message's; drawn_at,
//	                                              arrived_at: performance.timeOrigin
//	                                              + now(), a clock the parent shares)
//	{type: "heatmap-hover", panel, row, col, value}  when the hovered cell
//	                                              changes (row -1 on leaving;
//	                                              row -1 with a col: the strip)
//	{type: "heatmap-view", rows, cols, r0, rspan, c0, cspan}
//	                                              when the visible cells change
//	{type: "heatmap-error", error}                when a message is rejected
//	{type: "heatmap-error", error, missing: key}  when a message refers to
//	                                              an unchanging part this page
//	                                              does not hold
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
// maps ahead).
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
func envelope(msg js.Value) wire.Envelope { return wire.ReadEnvelope(jsFields{msg}) }

// jsFields reads a JavaScript object's fields (wire.Fields).
type jsFields struct{ v js.Value }

func (f jsFields) String(key string) (string, bool) {
	if x := f.v.Get(key); x.Type() == js.TypeString {
		return x.String(), true
	}
	return "", false
}

func (f jsFields) Number(key string) (float64, bool) {
	if x := f.v.Get(key); x.Type() == js.TypeNumber {
		return x.Float(), true
	}
	return 0, false
}

func (f jsFields) Bool(key string) bool { return f.v.Get(key).Truthy() }

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
	shown    bool        // they came from maps ahead (a show message)
	// Timings of the latest data, reported with "heatmap-drawn" (ms): its
	// decoding, and when it arrived (performance.now()).
	decodeMs, arrived float64
	// postedAt and relayedAt are when the worker posted the maps on screen
	// and the app passed them on (timeOrigin + now; 0 when not relayed).
	postedAt, relayedAt float64
	lastNew             float64 // when the maps on screen were taken (performance.now())
	frameTimer          timer   // asks for a frame (later)
	warm                warmUp
	prep                prepStore
	screenMem           *bufSet  // the memory of the maps on screen when they were prepared ahead
	screenBufs          js.Value // the buffers of their message
	prepared            bool     // the maps on screen were prepared ahead
}

// prepMax is how many maps ahead the page decodes and paints before the
// app shows them: the slider positions a drag reaches next (see
// wire.Ahead.Nearest), two in the direction of the last move and one
// behind. A show message of a prepared view only hands its painting to
// the renderer; without it, decoding and painting took 8-25 ms of each
// drawing in a cold scrub.
const prepMax = 3

// prepStore holds the maps ahead prepared for the views that may be shown
// next, and the memory of those no longer wanted.
type prepStore struct {
	by     map[string]*preparedMaps
	mem    []*bufSet
	paint  []*heatmap.Painting
	dir    float64 // the sign of the last change of ratio on screen
	wanted bool    // a step gave way to a frame: the frame schedules one
	step   timer
}

// preparedMaps are maps ahead decoded and painted for the layout and view
// on screen when they were painted.
type preparedMaps struct {
	bufs js.Value // the ahead message's buffers: which message this is
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

// put holds e as the prepared maps of view (replacing any).
func (ps *prepStore) put(view string, e *preparedMaps) {
	ps.drop(view)
	if ps.by == nil {
		ps.by = map[string]*preparedMaps{}
	}
	ps.by[view] = e
}

// drop forgets the prepared maps of view.
func (ps *prepStore) drop(view string) {
	if e := ps.by[view]; e != nil {
		delete(ps.by, view)
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

// prepStep prepares one of the views a drag of the ratio slider reaches
// next (decoding its maps ahead, or only painting them again after the
// layout or view changed), forgets those no longer among them, and
// schedules the next step while any is left. It gives way to a frame that
// is due.
func (g *game) prepStep() {
	ps := &g.prep
	if g.data == nil || g.img == nil {
		return
	}
	if g.in.pending() || g.dirty {
		ps.wanted = true
		return
	}
	cur, ok := wire.ViewRatio(g.screen.View)
	if !ok {
		cur = g.data.Maps.Ratio
	}
	want := ahead.Nearest(cur, ps.dir, prepMax)
	for view := range ps.by {
		if !slices.Contains(want, view) {
			ps.drop(view)
		}
	}
	for _, view := range want {
		m, ok := ahead.Get(view)
		if !ok {
			continue
		}
		bufs := m.Get("buffers")
		e := ps.by[view]
		if e != nil && e.bufs.Equal(bufs) && e.p.Shows(g.lay, e.d, g.view) {
			continue
		}
		if e == nil || !e.bufs.Equal(bufs) {
			ps.drop(view)
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
				ps.free(mem, nil)
				continue
			}
			e = &preparedMaps{bufs: bufs, d: d, mem: mem}
			ps.put(view, e)
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

// warmUp is the page's rehearsal of decoding and painting a map, run when
// the page is idle after its first maps (see rehearse).
type warmUp struct {
	left int      // rounds still to run
	msg  js.Value // the message of the maps on screen
	r    *heatmap.Renderer
	img  *image.RGBA
}

// Rehearsal: warmRounds rounds, the first once the page has had no new
// maps for warmIdleMs, then one every warmGapMs.
const (
	warmRounds = 4
	warmIdleMs = 300
	warmGapMs  = 60
	// The labels are cheap to make and were still optimised during the
	// first drag: each round makes them this many times.
	warmLabels = 5
)

// rehearse runs one round of the rehearsal: it decodes the maps on
// screen again and paints them off screen, under a view no cache holds,
// with the decoding's spare buffers (nothing on screen changes). V8 runs
// wasm in a baseline tier first and optimises a function in the
// background only once it has run for a while: without the rehearsal the
// first drag of the ratio slider did both. In headless Chromium on two
// cores the heatmap page spent 170-200 ms of a cold scrub compiling, and
// its first maps took two to three times as long to decode and paint as
// later ones.
func (g *game) rehearse() {
	w := &g.warm
	d := g.data
	w.left--
	if w.left > 0 {
		g.later(warmGapMs)
	}
	raw := "" // no message to decode: paint only
	if w.msg.Type() == js.TypeObject && w.msg.Get("json").Type() == js.TypeString {
		raw = w.msg.Get("json").String()
	}
	var m wire.Maps
	if err := json.Unmarshal([]byte(raw), &m); err == nil && m.Factored && m.Rows == d.Maps.Rows && m.Cols == d.Maps.Cols {
		bufs := w.msg.Get("buffers")
		if f, err := heatmap.DecodeFactored(m, bytesOf(bufs, "scale"), bytesOf(bufs, "inv"), bytesOf(bufs, "syn"), bytesOf(bufs, "share"), bytesOf(bufs, "source")); err == nil {
			// Into the buffers the next message will be decoded into
			// (scratch until then): they are made now, at idle, rather
			// than by the first drag's decoding, where growing the wasm
			// memory took 13 ms of a cold scrub's first frame.
			slot := &maps.bufs[maps.next]
			if n := m.Rows * m.Cols; cap(slot.comp) < n {
				slot.comp = make([]float32, n)
			}
			comp := slot.comp[:m.Rows*m.Cols]
			f.Expand(comp, d.Orig)
			if wd, err := heatmap.NewData(m, d.Orig, comp, slot.diff, bytesOf(bufs, "classes"), bytesOf(bufs, "segments")); err == nil {
				slot.diff, d = wd.Diff, wd
			}
		}
	}
	if w.r == nil {
		w.r, _ = heatmap.NewRenderer(heatmap.Colormap)
	}
	if w.img == nil || w.img.Bounds() != g.img.Bounds() {
		w.img = image.NewRGBA(g.img.Bounds())
	}
	// Zoomed in 1.75, 1.5, 1.25 times, then as shown: each round paints
	// anew (the rehearsal's renderer holds no box of that view yet), and
	// the last one takes the paths the drag's frames take.
	v := g.view.Zoom(1+0.25*float64(w.left), 0.5, 0.5)
	w.r.Render(w.img, g.lay, d, v, nil)
	for range warmLabels {
		heatmap.DrawLabels(w.img, w.r.Labels(g.lay, d, v, nil), g.scale, heatmap.Ink)
	}
	if w.left == 0 {
		*w = warmUp{} // its renderer and image go
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
	} else if g.warm.left > 0 && g.data != nil && g.img != nil {
		if idle := now() - g.lastNew; idle >= warmIdleMs {
			g.rehearse()
		} else {
			g.later(warmIdleMs - idle)
		}
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
		post(map[string]any{"type": "heatmap-view", "rows": v.Rows, "cols": v.Cols, "r0": v.R0, "rspan": v.RSpan, "c0": v.C0, "cspan": v.CSpan})
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
		if e := g.prep.by[view]; e != nil && e.bufs.Equal(msg.Get("buffers")) && e.p.Shows(g.lay, e.d, g.view) {
			// Decoded and painted before the show message came.
			delete(g.prep.by, view)
			e.d.Maps.Seq = seq
			g.show(e.d, msg, at, t0, e.mem, g.r.Adopt(e.p))
			return
		}
	}
	slot := &maps.bufs[maps.next]
	d, err := decode(msg, g.data, slot)
	if err != nil && show {
		// Maps ahead this page cannot draw now (their original map is
		// gone): the worker's answer to the same move will come.
		return
	}
	if err != nil {
		js.Global().Get("console").Call("error", "heatmap: "+err.Error())
		e := map[string]any{"type": "heatmap-error", "error": err.Error()}
		var miss missingError
		if errors.As(err, &miss) {
			e["missing"] = string(miss)
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
// prepared ahead (nil: the ring's), old the painting the renderer gave up
// for theirs (nil: it paints d over its own). Maps ahead leaving the
// screen stay prepared (with their painting, when old is it): a drag that
// turns back reaches them first.
func (g *game) show(d *heatmap.Data, msg js.Value, at, t0 float64, mem *bufSet, old *heatmap.Painting) {
	env := envelope(msg)
	view, show := env.View, env.Shown
	if r, ok := wire.ViewRatio(view); ok {
		if prev, ok := wire.ViewRatio(g.screen.View); ok && r != prev {
			g.prep.dir = math.Copysign(1, r-prev)
		}
	}
	if g.screenMem != nil && g.screen.View != "" && g.screen.View != view {
		if old != nil && !old.Shows(g.lay, g.data, g.view) {
			g.prep.free(nil, old)
			old = nil
		}
		g.prep.put(g.screen.View, &preparedMaps{bufs: g.screenBufs, d: g.data, mem: g.screenMem, p: old})
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
	if g.warm.left > 0 {
		g.warm.msg = msg // rehearse with the latest maps
		g.later(warmIdleMs)
	}
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
	msg := map[string]any{"type": "heatmap-hover", "row": -1, "col": -1, "value": nil}
	if ro != nil {
		msg["panel"], msg["row"], msg["col"] = ro.Kind.Name(), ro.Row, ro.Col
		if ro.InMap && !math.IsNaN(float64(ro.Value)) {
			msg["value"] = float64(ro.Value)
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
		post(map[string]any{"type": "heatmap-drawn", "rows": g.data.Maps.Rows, "cols": g.data.Maps.Cols, "ratio": g.data.Maps.Ratio,
			"seq": g.data.Maps.Seq, "drawn_at": js.Global().Get("performance").Get("timeOrigin").Float() + t1,
			"arrived_at": js.Global().Get("performance").Get("timeOrigin").Float() + g.arrived,
			"decode_ms":  g.decodeMs, "wait_ms": t0 - g.arrived - g.decodeMs, "paint_ms": t1 - t0, "pixels_ms": tp - t0,
			"posted_at": g.postedAt, "relayed_at": g.relayedAt, "ahead": g.shown, "prepared": g.prepared, "rehearsed": warmRounds - g.warm.left})
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

// post sends msg to the parent window.
func post(msg map[string]any) {
	parent := js.Global().Get("parent")
	if parent.Equal(js.Global().Get("window")) {
		return
	}
	parent.Call("postMessage", js.ValueOf(msg), "*")
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
		switch {
		case env.Ahead:
			// Maps of a view the app may show next: kept, drawn on its
			// show message (or now, if that came first).
			view := env.View
			ahead.Put(view, data)
			if waiting.View == view {
				receive(shown(data, waiting.Seq))
				waiting = wire.Screen{}
			} else {
				prepare()
			}
		case env.Show != "":
			// The app's view changed to show (its head request seq): draw
			// the maps sent ahead for it, else wait for them or for the
			// worker's answer.
			view, seq := env.Show, env.Seq
			if m, ok := ahead.Get(view); ok {
				receive(shown(m, seq))
				waiting = wire.Screen{}
			} else {
				waiting = wire.Screen{View: view, Seq: seq}
			}
		default:
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

// ahead holds the maps sent ahead (wire.Maps.Ahead) by view, and waiting
// the show message whose maps have not come yet (see wire).
var (
	ahead   wire.Ahead[js.Value]
	waiting wire.Screen
)

// shown is a message of maps ahead m to draw as the maps of seq: the same
// buffers (decoding copies them, so m stays whole for another show).
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
// one; between two decodes the rehearsal uses the second as scratch). Maps
// prepared ahead (prepStore) have memory of their own.
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
// is never written once decoded: Data on screen and Data prepared ahead
// may share it.
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
		m.Seq = env.Seq // maps ahead, shown for the app's request seq
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
	g := &game{in: &inbox{msg: js.Undefined()}, r: r, scale: 1, lastHov: [3]int{-1, -1, -1}, warm: warmUp{left: warmRounds}}
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
	post(map[string]any{"type": "heatmap-ready"})
	if err := ebiten.RunGame(g); err != nil {
		js.Global().Get("console").Call("error", "heatmap: "+err.Error())
	}
}
