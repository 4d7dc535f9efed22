package heatmap

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Theme colours of the canvas. The class colours are from the Okabe-Ito
// palette (Okabe and Ito, "Color Universal Design", 2008), chosen to stay
// distinct under the common colour-vision deficiencies: the tokens kept for
// their place in blues (sink dark, recent light), those kept for their
// attention in orange (anchor), summaries in bluish green (two shades,
// alternating by segment), approximations in reddish purple, the evicted in
// grey; vermillion marks the needles and nothing else.
var (
	Background = color.RGBA{0xfa, 0xfa, 0xf7, 0xff}
	Ink        = color.RGBA{0x22, 0x22, 0x22, 0xff}
	Muted      = color.RGBA{0x66, 0x66, 0x66, 0xff}
	NoData     = color.RGBA{0xe4, 0xe4, 0xe0, 0xff}
	Crosshair  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	NeedleMark = color.RGBA{0xd5, 0x5e, 0x00, 0xff} // vermillion
	// ClassColor is the strip colour of each class; summarized tokens
	// alternate between ClassColor[Summarized] and SummarizedAlt by segment.
	ClassColor = [numClasses]color.RGBA{
		Evicted:    {0xc8, 0xc8, 0xc8, 0xff}, // light grey: gone
		Sink:       {0x00, 0x72, 0xb2, 0xff}, // blue
		Recent:     {0x56, 0xb4, 0xe9, 0xff}, // sky blue
		Anchor:     {0xe6, 0x9f, 0x00, 0xff}, // orange
		Summarized: {0x00, 0x9e, 0x73, 0xff}, // bluish green
		Approx:     {0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	}
	SummarizedAlt = color.RGBA{0x7f, 0xce, 0xb9, 0xff} // lighter bluish green
)

// classPriority orders the classes for a strip pixel that covers several
// columns: the rarest, most informative class wins, so a single anchor
// stays visible when zoomed out.
var classPriority = [numClasses]int{Anchor: 5, Sink: 4, Recent: 3, Approx: 2, Summarized: 1, Evicted: 0}

// LegendEntry is one entry of the class legend: a token class, or the
// needle mark, and its name.
type LegendEntry struct {
	Class Class
	// Alt: the patch shows the summarized class's two shades.
	Alt bool
	// Needle: the entry is the needle mark, not a class.
	Needle bool
	Name   string
}

// Legend is the class legend of every heatmap haeols draws, in order: the
// browser's swatches (NewLayout) and the PNG's legend (package figure).
var Legend = []LegendEntry{
	{Class: Sink, Name: "sink"}, {Class: Recent, Name: "recent"}, {Class: Anchor, Name: "anchor"},
	{Class: Summarized, Alt: true, Name: "summarized"}, {Class: Approx, Name: "approx"},
	{Class: Evicted, Name: "evicted"}, {Needle: true, Name: "needle"},
}

// Paint paints e's patch into the rectangle r of img: the class colour
// (the summarized class's two shades side by side), or a needle mark.
func (e LegendEntry) Paint(img *image.RGBA, r Rect) {
	switch {
	case e.Needle:
		fill(img, Rect{r.X + r.W/2 - 1, r.Y, 2, r.H}, NeedleMark)
	case e.Alt:
		fill(img, Rect{r.X, r.Y, r.W / 2, r.H}, ClassColor[e.Class])
		fill(img, Rect{r.X + r.W/2, r.Y, r.W - r.W/2, r.H}, SummarizedAlt)
	default:
		fill(img, r, ClassColor[e.Class])
	}
}

// StripColumn returns the column whose class a strip pixel covering columns
// cs shows: the one of highest class priority (the first on ties).
func (d *Data) StripColumn(cs Span) (int, bool) {
	if d.Classes == nil || cs.Hi <= cs.Lo {
		return 0, false
	}
	best := cs.Lo
	for c := cs.Lo + 1; c < cs.Hi; c++ {
		if classPriority[d.Classes[c]] > classPriority[d.Classes[best]] {
			best = c
		}
	}
	return best, true
}

// ClassColorAt returns the strip colour of column c.
func (d *Data) ClassColorAt(c int) color.RGBA {
	cl, seg, ok := d.Class(c)
	if !ok {
		return NoData
	}
	if cl == Summarized && seg >= 0 && seg%2 == 1 {
		return SummarizedAlt
	}
	return ClassColor[cl]
}

// Readout is the hover readout: the cell under the cursor and its values.
type Readout struct {
	Kind     PanelKind
	InMap    bool
	Row, Col int
	// Value is the hovered panel's value; Orig, Comp and Diff all three.
	Value, Orig, Comp, Diff float32
	Class                   Class
	Segment                 int32
	HasClass                bool
}

// Lookup resolves a Hit on d: in a map, the cell of largest value among the
// cells the pixel pools (the one whose colour the pixel shows); in a strip,
// the column whose class it shows.
func (d *Data) Lookup(h Hit) (Readout, bool) {
	r := Readout{Kind: h.Kind, InMap: h.InMap, Segment: -1}
	if h.InMap {
		row, col, ok := ArgMax(d.Panel(h.Kind), d.Maps.Cols, h.Rows, h.Cols)
		if !ok {
			return r, false
		}
		r.Row, r.Col = row, col
		i := row*d.Maps.Cols + col
		r.Orig, r.Comp, r.Diff = d.Orig[i], d.Comp[i], d.Diff[i]
		r.Value = d.Panel(h.Kind)[i]
	} else {
		col, ok := d.StripColumn(h.Cols)
		if !ok {
			if h.Cols.Hi <= h.Cols.Lo {
				return r, false
			}
			col = h.Cols.Lo
		}
		r.Row, r.Col = -1, col
	}
	r.Class, r.Segment, r.HasClass = d.Class(r.Col)
	return r, true
}

// Text is the one-line readout shown in the canvas.
func (r Readout) Text(d *Data) string {
	var b strings.Builder
	if r.InMap {
		fmt.Fprintf(&b, "query %s | %s | orig %s comp %s diff %s", d.RowLabel(r.Row), d.ColLabel(r.Col),
			FormatValue(r.Orig), FormatValue(r.Comp), FormatValue(r.Diff))
	} else {
		b.WriteString(d.ColLabel(r.Col))
	}
	if r.HasClass {
		fmt.Fprintf(&b, " | %s", r.Class)
		if r.Class == Summarized && r.Segment >= 0 {
			fmt.Fprintf(&b, " #%d", r.Segment)
		}
	}
	if d.Needle(r.Col) {
		b.WriteString(" | needle")
	}
	return b.String()
}

// FormatValue prints an attention value compactly: 3 significant digits,
// exponent form below 0.01.
func FormatValue(v float32) string {
	f := float64(v)
	switch {
	case f != f:
		return "n/a"
	case f == 0:
		return "0"
	case math.Abs(f) < 0.01:
		return fmt.Sprintf("%.2e", f)
	}
	return fmt.Sprintf("%.3f", f)
}

// FormatTick prints a power-of-ten tick: "1e-4", "0.001" style kept short.
func FormatTick(v float64) string {
	e := math.Round(math.Log10(v))
	if math.Abs(v-math.Pow(10, e)) < 1e-12*v {
		if e >= 0 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("1e%.0f", e)
	}
	return fmt.Sprintf("%.2g", v)
}

// Renderer paints the canvas pixels (everything except text) and keeps its
// scratch buffers between frames.
type Renderer struct {
	Colors *Colors
	pool   []float32
	// base is the painting Render copies: the last one it made, or the
	// one Adopt gave it.
	base *Painting
	// maps caches each box's painted map: a new message whose panel holds
	// the same values in the same memory (the original attention, which a
	// ratio change leaves alone; see Data) is copied, not pooled again.
	maps []mapCache
}

// mapCache is one box's painted map pixels and what they show.
type mapCache struct {
	id     uint64 // the panel's values (Data.PanelID)
	view   View
	rect   Rect
	colors *Colors
	pix    []byte // rect.W x rect.H RGBA
}

// NewRenderer maps values through the named colormap on DefaultScale.
func NewRenderer(colormap string) (*Renderer, error) {
	c, err := NewColors(DefaultScale(), colormap)
	if err != nil {
		return nil, err
	}
	return &Renderer{Colors: c}, nil
}

// Render paints layout l for data d (nil: the waiting state, no panels)
// under view v into img, whose bounds must be l's canvas (origin 0, 0).
// hover, when not nil, draws a crosshair at its cell in every panel. d must
// not change after it is rendered (a new message is a new Data).
func (r *Renderer) Render(img *image.RGBA, l Layout, d *Data, v View, hover *Readout) {
	// The maps, strips and legend change with the data, the view and the
	// layout only; hovering redraws the crosshair over a cached copy.
	if !r.base.Shows(l, d, v) || len(r.base.img.Pix) != len(img.Pix) {
		r.base = r.Prepare(r.base, l, d, v)
	}
	copy(img.Pix, r.base.img.Pix)
	if d == nil || hover == nil {
		return
	}
	for _, b := range l.Boxes {
		if b.Map.Empty() {
			continue
		}
		px := CellPixel(hover.Col, b.Map.W, v.C0, v.CSpan)
		if px >= 0 && px < b.Map.W {
			dashV(img, b.Map.X+px, b.Map.Y, b.Map.H, Crosshair)
		}
		if hover.InMap {
			py := CellPixel(hover.Row, b.Map.H, v.R0, v.RSpan)
			if py >= 0 && py < b.Map.H {
				dashH(img, b.Map.X, b.Map.Y+py, b.Map.W, Crosshair)
			}
		}
	}
}

// Painting is a painting of one layout, data and view without the hover
// crosshair: what Render copies into its image before it draws the
// crosshair. Render keeps the last one it made; Prepare makes one off
// screen (for maps that may be shown next) and Adopt gives it to Render.
type Painting struct {
	img   *image.RGBA
	d     *Data
	v     View
	w, h  int
	font  Font
	boxes []Box
}

// Shows reports whether p is the painting of layout l, data d and view v.
func (p *Painting) Shows(l Layout, d *Data, v View) bool {
	return p != nil && p.img != nil && p.d == d && p.v == v && p.w == l.W && p.h == l.H &&
		p.font == l.Font && slices.Equal(p.boxes, l.Boxes)
}

// Prepare paints layout l, data d (nil: the waiting state) and view v
// into p, reusing its memory (a new Painting when p is nil), and returns
// it: the painting Render would make. It updates the panel pixels r keeps
// (see Render), so that a panel both paintings share is pooled once.
func (r *Renderer) Prepare(p *Painting, l Layout, d *Data, v View) *Painting {
	if p == nil {
		p = &Painting{}
	}
	if p.img == nil || p.img.Bounds() != image.Rect(0, 0, l.W, l.H) {
		p.img = image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	}
	r.paintBase(p.img, l, d, v)
	p.d, p.v, p.w, p.h, p.font = d, v, l.W, l.H, l.Font
	p.boxes = append(p.boxes[:0], l.Boxes...)
	return p
}

// Adopt makes p the painting Render copies when it is asked for what p
// shows, and returns the painting Render had (nil when none), whose
// memory Prepare may reuse. p must not be prepared again while r holds it.
func (r *Renderer) Adopt(p *Painting) *Painting {
	old := r.base
	r.base = p
	return old
}

// paintBase paints everything but the hover crosshair.
func (r *Renderer) paintBase(img *image.RGBA, l Layout, d *Data, v View) {
	fill(img, Rect{0, 0, l.W, l.H}, Background)
	if d == nil {
		return
	}
	cols := d.Maps.Cols
	if len(r.maps) < len(l.Boxes) {
		r.maps = append(r.maps, make([]mapCache, len(l.Boxes)-len(r.maps))...)
	}
	for bi, b := range l.Boxes {
		if b.Map.Empty() {
			continue
		}
		cs := AxisSpans(b.Map.W, v.C0, v.CSpan, v.Cols)
		r.paintMap(img, bi, b.Map, d.Panel(b.Kind), d.NaN, d.PanelID(b.Kind), cols, v, cs)
		// A tick left of the map where the probe rows start.
		if c := d.Maps.Calib; c > 0 && c < d.Maps.Rows {
			py := int(math.Floor((float64(c) - v.R0) / v.RSpan * float64(b.Map.H)))
			if py >= 0 && py < b.Map.H {
				w := max(l.Font.W/2, 3)
				fill(img, Rect{b.Map.X - w - 1, b.Map.Y + py, w, max(l.Font.H/8, 1)}, Ink)
			}
		}
		// Needle marks and class strip share the map's column spans.
		for x, sp := range cs {
			if col, ok := d.StripColumn(sp); ok {
				fill(img, Rect{b.Strip.X + x, b.Strip.Y, 1, b.Strip.H}, d.ClassColorAt(col))
			} else if sp.Hi > sp.Lo {
				fill(img, Rect{b.Strip.X + x, b.Strip.Y, 1, b.Strip.H}, NoData)
			}
			for c := sp.Lo; c < sp.Hi; c++ {
				if d.Needle(c) {
					fill(img, Rect{b.Needles.X + x, b.Needles.Y, 1, b.Needles.H}, NeedleMark)
					break
				}
			}
		}
		// The prefix-position axis's tick marks (Labels numbers them).
		if !b.Axis.Empty() {
			for _, t := range AxisTicks(v.C0, v.CSpan, AxisTickCount) {
				if px := CellPixel(t, b.Map.W, v.C0, v.CSpan); px >= 0 && px < b.Map.W {
					fill(img, Rect{b.Axis.X + px, b.Axis.Y, 1, axisTickH(l.Font)}, Muted)
				}
			}
		}
	}
	// Colour bar.
	for x := 0; x < l.Bar.W; x++ {
		t := (float64(x) + 0.5) / float64(l.Bar.W)
		fill(img, Rect{l.Bar.X + x, l.Bar.Y, 1, l.Bar.H}, r.Colors.AtT(t))
	}
	for _, tk := range r.Colors.Scale.Ticks() {
		if l.Bar.Empty() {
			break
		}
		x := l.Bar.X + int(math.Round(r.Colors.Scale.T(tk)*float64(l.Bar.W-1)))
		fill(img, Rect{x, l.Bar.Y + l.Bar.H, 1, max(l.Font.H/4, 2)}, Ink)
	}
	for _, s := range l.Swatches {
		s.Paint(img, s.Patch)
	}
}

// paintMap paints the values src (rows x cols, row-major) under view v
// into the rectangle m of img, pooled (see Pool) over the column spans cs,
// or copies box bi's cached pixels when they show the same values (id)
// the same way. nan is false when src holds no NaN.
func (r *Renderer) paintMap(img *image.RGBA, bi int, m Rect, src []float32, nan bool, id uint64, cols int, v View, cs []Span) {
	mc := &r.maps[bi]
	hit := mc.pix != nil && mc.id == id && mc.view == v && mc.rect == m && mc.colors == r.Colors
	var rs []Span
	if !hit {
		rs = AxisSpans(m.H, v.R0, v.RSpan, v.Rows)
		r.pool = pool(r.pool, src, cols, rs, cs, nan)
	}
	if cap(mc.pix) < 4*m.W*m.H {
		mc.pix = make([]byte, 4*m.W*m.H)
	}
	mc.pix = mc.pix[:4*m.W*m.H]
	for y := 0; y < m.H; y++ {
		o := img.PixOffset(m.X, m.Y+y)
		row := img.Pix[o : o+4*m.W]
		cached := mc.pix[4*m.W*y : 4*m.W*(y+1)]
		if hit {
			copy(row, cached)
			continue
		}
		if y > 0 && rs[y] == rs[y-1] {
			// An upsampled row: the same pooled values as the row above.
			copy(row, mc.pix[4*m.W*(y-1):4*m.W*y])
			copy(cached, row)
			continue
		}
		r.Colors.PixelRow(row, r.pool[y*m.W:(y+1)*m.W])
		copy(cached, row)
	}
	mc.id, mc.view, mc.rect, mc.colors = id, v, m, r.Colors
}

// Labels returns the text to draw on layout l: the header (or the waiting
// message when d is nil), the panel titles, the prefix positions of the
// axes' ticks, the bar's ticks, the swatch
// names and the readout. Text is cut to fit its line.
func (r *Renderer) Labels(l Layout, d *Data, v View, hover *Readout) []Label {
	f := l.Font
	fit := func(x, y, w int, s string) Label {
		if n := f.MaxChars(w); len(s) > n {
			s = s[:max(n, 0)]
		}
		return Label{x, y, s}
	}
	var out []Label
	if d == nil {
		msg := "waiting for data..."
		x := max((l.W-len(msg)*f.W)/2, 0)
		return []Label{fit(x, l.H/2-f.H/2, l.W-x, msg)}
	}
	m := d.Maps
	head := m.Title
	if m.Method != "" {
		head = strings.TrimSpace(fmt.Sprintf("%s  %s at ratio %.2f  err %s", head, m.Method, m.Ratio, FormatValue(float32(m.Err))))
	}
	out = append(out, fit(l.Header.X, l.Header.Y, l.Header.W, head))
	zoom := ""
	if !v.Whole() {
		zoom = fmt.Sprintf("  rows %d-%d, keys %d-%d", int(v.R0), int(math.Ceil(v.R0+v.RSpan))-1, int(v.C0), int(math.Ceil(v.C0+v.CSpan))-1)
	}
	for i, b := range l.Boxes {
		t := b.Kind.Title()
		if i == 0 {
			t += zoom
		}
		out = append(out, fit(b.Title.X, b.Title.Y, b.Title.W, t))
	}
	for _, b := range l.Boxes {
		if b.Axis.Empty() || b.Map.Empty() {
			continue
		}
		for _, t := range AxisTicks(v.C0, v.CSpan, AxisTickCount) {
			px := CellPixel(t, b.Map.W, v.C0, v.CSpan)
			if px < 0 || px >= b.Map.W {
				continue
			}
			s := strconv.Itoa(t)
			x := min(max(b.Axis.X+px-len(s)*f.W/2, 0), l.W-len(s)*f.W)
			out = append(out, Label{x, b.Axis.Y + axisTickH(f), s})
		}
	}
	for _, tk := range r.Colors.Scale.Ticks() {
		if l.Bar.Empty() {
			break
		}
		s := FormatTick(tk)
		x := l.Bar.X + int(math.Round(r.Colors.Scale.T(tk)*float64(l.Bar.W-1))) - len(s)*f.W/2
		x = min(max(x, 0), l.W-len(s)*f.W)
		out = append(out, Label{x, l.BarTicks.Y + max(f.H/4, 2), s})
	}
	for _, s := range l.Swatches {
		out = append(out, fit(s.Label.X, s.Label.Y, l.W-s.Label.X, s.Label.Text))
	}
	ro := "hover: values | wheel: zoom | drag: pan | double-click: all"
	if hover != nil {
		ro = hover.Text(d)
	}
	first, rest := wrap(ro, f.MaxChars(l.Readout.W))
	out = append(out, fit(l.Readout.X, l.Readout.Y, l.Readout.W, first))
	if rest != "" && l.Readout.H >= 2*f.H {
		out = append(out, fit(l.Readout.X, l.Readout.Y+f.H, l.Readout.W, rest))
	}
	return out
}

// wrap splits s into a first line of at most n characters, breaking after
// the last " | " that fits (or at n), and the rest.
func wrap(s string, n int) (string, string) {
	if len(s) <= n || n <= 0 {
		return s, ""
	}
	if i := strings.LastIndex(s[:n], " | "); i > 0 {
		return s[:i], s[i+3:]
	}
	return s[:n], s[n:]
}

func fill(img *image.RGBA, r Rect, c color.RGBA) {
	b := img.Bounds()
	x0, y0 := max(r.X, b.Min.X), max(r.Y, b.Min.Y)
	x1, y1 := min(r.X+r.W, b.Max.X), min(r.Y+r.H, b.Max.Y)
	if x1 <= x0 || y1 <= y0 {
		return
	}
	// The first row pixel by pixel, the others copied from it.
	o := img.PixOffset(x0, y0)
	first := img.Pix[o : o+4*(x1-x0)]
	for i := 0; i < len(first); i += 4 {
		first[i], first[i+1], first[i+2], first[i+3] = c.R, c.G, c.B, c.A
	}
	for y := y0 + 1; y < y1; y++ {
		o := img.PixOffset(x0, y)
		copy(img.Pix[o:o+len(first)], first)
	}
}

func dashV(img *image.RGBA, x, y, h int, c color.RGBA) {
	for i := 0; i < h; i += 4 {
		fill(img, Rect{x, y + i, 1, min(2, h-i)}, c)
	}
}

func dashH(img *image.RGBA, x, y, w int, c color.RGBA) {
	for i := 0; i < w; i += 4 {
		fill(img, Rect{x + i, y, min(2, w-i), 1}, c)
	}
}
