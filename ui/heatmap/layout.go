package heatmap

import "fmt"

// PanelKind is one of the three heatmap panels.
type PanelKind int

// The panels, in drawing order.
const (
	PanelOrig PanelKind = iota // the full cache's attention
	PanelComp                  // the compressed cache's attention
	PanelDiff                  // |comp - orig|
)

// Name is the panel's name in wire.Maps.Panel and in hover messages.
func (k PanelKind) Name() string {
	switch k {
	case PanelComp:
		return "comp"
	case PanelDiff:
		return "diff"
	}
	return "orig"
}

// Title is the panel's caption.
func (k PanelKind) Title() string {
	switch k {
	case PanelComp:
		return "compressed"
	case PanelDiff:
		return "difference |comp - orig|"
	}
	return "original"
}

// PanelsFor returns the panels that wire.Maps.Panel selects: "all" (or
// empty) gives original, compressed and difference.
func PanelsFor(sel string) ([]PanelKind, error) {
	switch sel {
	case "", "all":
		return []PanelKind{PanelOrig, PanelComp, PanelDiff}, nil
	case "orig":
		return []PanelKind{PanelOrig}, nil
	case "comp":
		return []PanelKind{PanelComp}, nil
	case "diff":
		return []PanelKind{PanelDiff}, nil
	}
	return nil, fmt.Errorf("heatmap: maps message: panel %q: want all, orig, comp or diff", sel)
}

// Rect is a rectangle in canvas pixels.
type Rect struct{ X, Y, W, H int }

// Contains reports whether pixel (x, y) lies in r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// Empty reports whether r has no pixels.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Font is the size of one character of the canvas's monospaced bitmap font,
// in canvas pixels.
type Font struct{ W, H int }

// Box is one panel's place: its caption, the map itself, a band for needle
// marks, the token-class strip and the prefix-position axis (tick marks,
// then their numbers), all sharing the map's columns (same X and W). Axis
// is empty for a stacked panel but the last: stacked panels share their
// columns, and the axis under the last one serves all.
type Box struct {
	Kind                             PanelKind
	Title, Map, Needles, Strip, Axis Rect
}

// Swatch is a legend entry placed on the canvas: its colour patch and its
// name.
type Swatch struct {
	Patch Rect
	LegendEntry
	Label Label
}

// Label is a line of text whose top-left corner is at (X, Y).
type Label struct {
	X, Y int
	Text string
}

// Layout places everything on a W x H canvas: the header line, the panels
// (stacked or side by side, whichever gives the larger cells), the colour
// bar with its ticks, the class swatches and the hover readout line.
type Layout struct {
	W, H     int
	Font     Font
	Header   Rect
	Boxes    []Box
	Stacked  bool
	Bar      Rect // colour bar of the value scale
	BarTicks Rect // line under the bar for the tick labels
	Swatches []Swatch
	Readout  Rect // two lines for the hover readout
}

// MaxChars is how many characters fit in width w.
func (f Font) MaxChars(w int) int {
	if f.W <= 0 {
		return 0
	}
	return max(w/f.W, 0)
}

// NewLayout lays out panels for a rows x cols map on a w x h canvas with
// font f. It never places anything outside the canvas; on a canvas too
// small for the panels their map rectangles are empty.
func NewLayout(w, h int, panels []PanelKind, rows, cols int, f Font) Layout {
	l := Layout{W: w, H: h, Font: f}
	pad := max(f.H/2, 2)
	lh := f.H
	l.Header = Rect{pad, pad, w - 2*pad, lh}
	// Bottom: readout, swatches, ticks, bar (from the bottom up).
	y := h - pad - 2*lh
	l.Readout = Rect{pad, y, w - 2*pad, 2 * lh} // two lines
	l.Swatches = swatches(pad, w-2*pad, f)
	swH := 0
	if n := len(l.Swatches); n > 0 {
		swH = l.Swatches[n-1].Label.Y + lh // relative rows
	}
	y -= swH + pad/2
	for i := range l.Swatches {
		l.Swatches[i].Patch.Y += y
		l.Swatches[i].Label.Y += y
	}
	y -= lh
	l.BarTicks = Rect{pad, y, min(w-2*pad, 64*f.W), lh}
	barH := max(lh*2/3, 4)
	y -= barH
	l.Bar = Rect{pad + f.W, y, l.BarTicks.W - 2*f.W, barH}
	bottom := y - pad
	top := l.Header.Y + lh + pad/2
	if bottom-top < 4*lh {
		// Too small for a legend: the panels get the room.
		l.Swatches, l.Bar, l.BarTicks = nil, Rect{}, Rect{}
		bottom = l.Readout.Y - pad
	}
	n := len(panels)
	if n == 0 {
		return l
	}
	// Per panel, besides the map: title line, needle band, strip, gap;
	// and the axis under the last stacked panel or under each side by side.
	needleH := max(f.H/3, 3)
	stripH := max(f.H*2/3, 4)
	axisH := axisTickH(f) + lh
	extra := lh + needleH + stripH + pad
	availW, availH := w-2*pad, bottom-top
	if (availH-axisH)/n-extra < 2*lh {
		axisH = 0 // too small for an axis: the maps get the room
	}
	// Stacked: n maps of availW x ((availH - axis)/n - extra).
	sw, sh := availW, (availH-axisH)/n-extra
	// Side by side: n maps of (availW - (n-1) pad)/n x (availH - extra - axis).
	bw, bh := (availW-(n-1)*pad)/n, availH-extra-axisH
	cell := func(mw, mh int) float64 {
		if mw <= 0 || mh <= 0 || rows <= 0 || cols <= 0 {
			return 0
		}
		return min(float64(mw)/float64(cols), float64(mh)/float64(rows))
	}
	l.Stacked = n == 1 || cell(sw, sh) >= cell(bw, bh)
	for i, k := range panels {
		var x, y0, mw, mh int
		if l.Stacked {
			x, y0, mw, mh = pad, top+i*(sh+extra), sw, sh
		} else {
			x, y0, mw, mh = pad+i*(bw+pad), top, bw, bh
		}
		mw, mh = max(mw, 0), max(mh, 0)
		b := Box{Kind: k}
		b.Title = Rect{x, y0, mw, lh}
		b.Map = Rect{x, y0 + lh, mw, mh}
		b.Needles = Rect{x, b.Map.Y + mh, mw, needleH}
		b.Strip = Rect{x, b.Needles.Y + needleH, mw, stripH}
		if axisH > 0 && (!l.Stacked || i == n-1) {
			b.Axis = Rect{x, b.Strip.Y + stripH, mw, axisH}
		}
		if mh == 0 || mw == 0 {
			b.Needles.H, b.Strip.H, b.Axis.H = 0, 0, 0
		}
		l.Boxes = append(l.Boxes, b)
	}
	return l
}

// axisTickH is the height of the prefix-position axis's tick marks, above
// their numbers.
func axisTickH(f Font) int { return max(f.H/4, 2) }

// AxisTickCount is how many ticks a prefix-position axis asks AxisTicks
// for, in the browser and in the PNG.
const AxisTickCount = 5

// swatches lays out the class legend (and the needle mark) in rows of
// width w from x, with Y relative to the first row.
func swatches(x0, w int, f Font) []Swatch {
	var out []Swatch
	x, y := x0, 0
	for _, e := range Legend {
		pw := 2 * f.W
		wd := pw + f.W/2 + len(e.Name)*f.W + f.W
		if x > x0 && x+wd > x0+w {
			x, y = x0, y+f.H+f.H/4
		}
		out = append(out, Swatch{
			Patch:       Rect{x, y + f.H/6, pw, f.H * 2 / 3},
			LegendEntry: e,
			Label:       Label{x + pw + f.W/2, y, e.Name},
		})
		x += wd
	}
	return out
}

// Hit is what a canvas pixel shows: a pixel of a panel's map (Rows and Cols
// are the cells it pools) or of a panel's needle band or class strip (Rows
// is then empty).
type Hit struct {
	Box    int // index in Layout.Boxes
	Kind   PanelKind
	InMap  bool
	PX, PY int // pixel within the map (PY only when InMap)
	Rows   Span
	Cols   Span
}

// Hit returns what pixel (x, y) shows under view v, and false when it is
// on no map and no strip.
func (l Layout) Hit(x, y int, v View) (Hit, bool) {
	for i, b := range l.Boxes {
		if b.Map.Empty() || x < b.Map.X || x >= b.Map.X+b.Map.W {
			continue
		}
		inMap := b.Map.Contains(x, y)
		inStrip := y >= b.Needles.Y && y < b.Strip.Y+b.Strip.H
		if !inMap && !inStrip {
			continue
		}
		h := Hit{Box: i, Kind: b.Kind, InMap: inMap, PX: x - b.Map.X}
		h.Cols = AxisSpan(h.PX, b.Map.W, v.C0, v.CSpan, v.Cols)
		if inMap {
			h.PY = y - b.Map.Y
			h.Rows = AxisSpan(h.PY, b.Map.H, v.R0, v.RSpan, v.Rows)
		}
		return h, true
	}
	return Hit{}, false
}

// MapFraction returns the position of pixel (x, y) as fractions of box i's
// map (for zooming about the cursor); ok is false when it is outside.
func (l Layout) MapFraction(x, y int) (fx, fy float64, ok bool) {
	for _, b := range l.Boxes {
		if b.Map.Contains(x, y) {
			return (float64(x-b.Map.X) + 0.5) / float64(b.Map.W), (float64(y-b.Map.Y) + 0.5) / float64(b.Map.H), true
		}
	}
	return 0, 0, false
}

// MapSize is the size of the first panel's map (all panels have the same),
// zero when there is none.
func (l Layout) MapSize() (w, h int) {
	if len(l.Boxes) == 0 {
		return 0, 0
	}
	return l.Boxes[0].Map.W, l.Boxes[0].Map.H
}
