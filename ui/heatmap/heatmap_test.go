package heatmap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/wire"
)

func TestScaleT(t *testing.T) {
	s, err := NewScale(1e-4, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		v, want float64
	}{
		{0, 0}, {-1, 0}, {math.NaN(), 0}, {1e-6, 0}, {1e-4, 0},
		{1e-3, 0.25}, {1e-2, 0.5}, {1e-1, 0.75}, {1, 1}, {5, 1}, {math.Inf(1), 1},
	}
	for _, tt := range tests {
		if got := s.T(tt.v); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("T(%g) = %g, want %g", tt.v, got, tt.want)
		}
		if tt.want > 0 && tt.want < 1 {
			if back := s.Value(tt.want); math.Abs(back-tt.v)/tt.v > 1e-9 {
				t.Errorf("Value(%g) = %g, want %g", tt.want, back, tt.v)
			}
		}
	}
}

func TestNewScale(t *testing.T) {
	tests := []struct {
		floor, top float64
		ok         bool
	}{
		{1e-4, 1, true}, {1e-6, 0.5, true}, {0, 1, false}, {-1, 1, false},
		{1, 1, false}, {1, 0.1, false}, {1e-4, math.Inf(1), false}, {math.NaN(), 1, false},
	}
	for _, tt := range tests {
		_, err := NewScale(tt.floor, tt.top)
		if (err == nil) != tt.ok {
			t.Errorf("NewScale(%g, %g) error %v, want ok=%v", tt.floor, tt.top, err, tt.ok)
		}
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		floor, top float64
		want       []string
	}{
		{1e-4, 1, []string{"1e-4", "1e-3", "1e-2", "1e-1", "1"}},
		{3e-3, 0.5, []string{"1e-2", "1e-1"}},
		{1e-2, 100, []string{"1e-2", "1e-1", "1", "10", "100"}},
	}
	for _, tt := range tests {
		s, err := NewScale(tt.floor, tt.top)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range s.Ticks() {
			got = append(got, FormatTick(v))
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("ticks of [%g, %g] = %v, want %v", tt.floor, tt.top, got, tt.want)
		}
	}
}

func newColors(t *testing.T) *Colors {
	t.Helper()
	c, err := NewColors(DefaultScale(), "viridis")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestColorsEndpoints(t *testing.T) {
	c := newColors(t)
	m, err := assets.Colormap("viridis")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		v    float32
		want color.RGBA
	}{
		{0, m.At(0)}, {float32(math.NaN()), m.At(0)}, {1e-7, m.At(0)}, {DefaultFloor, m.At(0)},
		{1, m.At(1)}, {2, m.At(1)}, {float32(math.Inf(1)), m.At(1)},
		{1e-3, m.At(128.0 / 255)}, // T = 0.5 on [1e-6, 1]; round(0.5*255) = 128
	}
	for _, tt := range tests {
		if got := c.At(tt.v); got != tt.want {
			t.Errorf("At(%g) = %v, want %v", tt.v, got, tt.want)
		}
	}
	if _, err := NewColors(DefaultScale(), "no-such-map"); err == nil || !strings.Contains(err.Error(), "no-such-map") {
		t.Errorf("NewColors with an unknown colormap: error %v, want one naming it", err)
	}
}

// luminance is the relative luminance (WCAG) of an sRGB colour.
func luminance(c color.RGBA) float64 {
	lin := func(u uint8) float64 {
		x := float64(u) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

func TestColorsMonotone(t *testing.T) {
	c := newColors(t)
	prevIdx, prevLum := -1, -1.0
	for e := -8.0; e <= 0.5; e += 0.001 {
		v := float32(math.Pow(10, e))
		i := c.Index(v)
		if want := int(math.Round(c.Scale.T(float64(v)) * 255)); i != want && math.Abs(c.Scale.T(float64(v))*255-math.Floor(c.Scale.T(float64(v))*255)-0.5) > 1e-4 {
			t.Fatalf("Index(%g) = %d, want round(T*255) = %d", v, i, want)
		}
		if i < prevIdx {
			t.Fatalf("Index(%g) = %d < %d of a smaller value", v, i, prevIdx)
		}
		// Lightness rises with the value (up to the 8-bit rounding of
		// the table: 1% of relative luminance).
		if l := luminance(c.At(v)); l < prevLum*0.99 {
			t.Fatalf("luminance of At(%g) = %g falls below %g: not monotone", v, l, prevLum)
		} else {
			prevLum = max(prevLum, l)
		}
		prevIdx = i
	}
	if prevIdx != 255 {
		t.Errorf("largest value reaches index %d, want 255", prevIdx)
	}
}

func TestAxisSpans(t *testing.T) {
	tests := []struct {
		name         string
		n            int
		start, count float64
		total        int
		oneToOne     bool
	}{
		{"whole, zoomed out", 100, 0, 1000, 1000, false},
		{"whole, uneven", 97, 0, 1000, 1000, false},
		{"whole, exact", 64, 0, 64, 64, true},
		{"zoomed in 4x", 40, 10, 10, 100, true},
		{"zoomed in fractional", 33, 2.5, 7.25, 20, true},
		{"zoomed out window", 50, 300.5, 400, 1000, false},
		{"slightly more cells than pixels", 99, 0, 100, 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := AxisSpans(tt.n, tt.start, tt.count, tt.total)
			if len(sp) != tt.n {
				t.Fatalf("%d spans, want %d", len(sp), tt.n)
			}
			covered := map[int]bool{}
			for p, s := range sp {
				if s.Hi <= s.Lo {
					t.Fatalf("pixel %d: empty span %v", p, s)
				}
				if tt.oneToOne && s.Hi-s.Lo != 1 {
					t.Fatalf("pixel %d: span %v, want exactly one cell when zoomed in", p, s)
				}
				if p > 0 && (s.Lo < sp[p-1].Lo || s.Hi < sp[p-1].Hi) {
					t.Fatalf("spans not monotone at pixel %d: %v after %v", p, s, sp[p-1])
				}
				for c := s.Lo; c < s.Hi; c++ {
					covered[c] = true
				}
				// Every covered cell's centre pixel is a pixel whose span
				// holds it (hit-test round trip along one axis).
				for c := s.Lo; c < s.Hi; c++ {
					q := CellPixel(c, tt.n, tt.start, tt.count)
					if q >= 0 && q < tt.n && (c < sp[q].Lo || c >= sp[q].Hi) {
						t.Fatalf("cell %d: centre pixel %d has span %v", c, q, sp[q])
					}
				}
			}
			lo, hi := int(math.Floor(tt.start)), int(math.Ceil(tt.start+tt.count))
			for c := lo; c < hi; c++ {
				centre := float64(c) + 0.5
				if !tt.oneToOne && !covered[c] {
					t.Fatalf("cell %d in view is covered by no pixel", c)
				}
				if tt.oneToOne && centre >= tt.start+0.5*tt.count/float64(tt.n) && centre < tt.start+tt.count-0.5*tt.count/float64(tt.n) && !covered[c] {
					t.Fatalf("zoomed in: cell %d in view is shown by no pixel", c)
				}
			}
		})
	}
}

func TestPoolKeepsSpike(t *testing.T) {
	tests := []struct {
		rows, cols, w, h int
		r, c             int
	}{
		{96, 1024, 100, 30, 17, 513},
		{96, 1024, 100, 30, 0, 0},
		{96, 1024, 100, 30, 95, 1023},
		{96, 1984, 313, 41, 60, 1977},
		{8, 8, 3, 2, 7, 4},
		{1, 5000, 7, 1, 0, 4999},
	}
	for _, tt := range tests {
		src := make([]float32, tt.rows*tt.cols)
		for i := range src {
			src[i] = 1e-4 * float32(1+i%7)
		}
		src[tt.r*tt.cols+tt.c] = 0.9
		rs := AxisSpans(tt.h, 0, float64(tt.rows), tt.rows)
		cs := AxisSpans(tt.w, 0, float64(tt.cols), tt.cols)
		dst := Pool(nil, src, tt.cols, rs, cs)
		n := 0
		for _, v := range dst {
			if v == 0.9 {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%dx%d -> %dx%d: the spike at (%d, %d) vanished", tt.rows, tt.cols, tt.w, tt.h, tt.r, tt.c)
		}
		px, py := CellPixel(tt.c, tt.w, 0, float64(tt.cols)), CellPixel(tt.r, tt.h, 0, float64(tt.rows))
		if got := dst[py*tt.w+px]; got != 0.9 {
			t.Errorf("%dx%d -> %dx%d: pixel (%d, %d) of the spike shows %g, want 0.9", tt.rows, tt.cols, tt.w, tt.h, px, py, got)
		}
	}
}

// TestPoolAgainstBlockMax compares Pool with the maximum over each
// pixel's block taken cell by cell, on maps with NaN cells (some rows and
// columns all NaN) and -Inf, at sizes where pixels cover one, two, three
// or many cells, zoomed and not: the same value, NaN where every cell of
// the block is NaN or the block is empty. Its NaN-free path gets the same
// maps with the NaN cells replaced by numbers.
func TestPoolAgainstBlockMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	nan, negInf := float32(math.NaN()), float32(math.Inf(-1))
	for _, tc := range []struct {
		rows, cols, w, h int
		v                View
	}{
		{192, 1024, 988, 86, View{}},
		{192, 1024, 330, 300, View{}},
		{192, 1024, 253, 180, View{}}, // the app's panels: spans of 4-5 cells
		{192, 1024, 500, 100, View{}}, // 2-3
		{192, 1024, 60, 50, View{}},   // 17-19
		{192, 1024, 2, 3, View{}},     // 512-513
		{192, 1024, 1500, 700, View{}},
		{40, 500, 97, 13, View{}},
		{40, 500, 400, 90, View{R0: 5.5, RSpan: 11.25, C0: 100.3, CSpan: 37.9}},
		{7, 9, 30, 30, View{R0: -2, RSpan: 12, C0: 3, CSpan: 20}},
	} {
		src := make([]float32, tc.rows*tc.cols)
		for i := range src {
			src[i] = rng.Float32()
			switch {
			case i/tc.cols == 3, i%tc.cols == 4, rng.IntN(50) == 0:
				src[i] = nan
			case rng.IntN(500) == 0:
				src[i] = negInf
			}
		}
		v := tc.v
		if v.RSpan == 0 {
			v = NewView(tc.rows, tc.cols)
		}
		rs := AxisSpans(tc.h, v.R0, v.RSpan, tc.rows)
		cs := AxisSpans(tc.w, v.C0, v.CSpan, tc.cols)
		checkPool(t, Pool(nil, src, tc.cols, rs, cs), src, tc.cols, rs, cs)
		for i, x := range src {
			if x != x {
				src[i] = rng.Float32()
			}
		}
		checkPool(t, pool(nil, src, tc.cols, rs, cs, false), src, tc.cols, rs, cs)
	}
}

// checkPool compares the pooled map got with the maximum over each
// pixel's block taken cell by cell.
func checkPool(t *testing.T, got, src []float32, cols int, rs, cs []Span) {
	t.Helper()
	nan, negInf := float32(math.NaN()), float32(math.Inf(-1))
	w := len(cs)
	for y, r := range rs {
		for x, c := range cs {
			want, any := negInf, false
			for i := r.Lo; i < r.Hi; i++ {
				for j := c.Lo; j < c.Hi; j++ {
					if e := src[i*cols+j]; e == e {
						any = true
						want = max(want, e)
					}
				}
			}
			if !any {
				want = nan
			}
			if g := got[y*w+x]; g != want && !(g != g && want != want) {
				t.Fatalf("%d x %d cells -> %d x %d pixels: pixel (%d, %d) over rows %v cols %v = %v, want %v", len(src)/cols, cols, w, len(rs), x, y, r, c, g, want)
			}
		}
	}
}

func TestPoolOneToOne(t *testing.T) {
	const rows, cols = 6, 10
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(i)
	}
	// Whole map at exactly one pixel per cell: the identity.
	dst := Pool(nil, src, cols, AxisSpans(rows, 0, rows, rows), AxisSpans(cols, 0, cols, cols))
	for i := range src {
		if dst[i] != src[i] {
			t.Fatalf("1:1 pooling changed cell %d: %g, want %g", i, dst[i], src[i])
		}
	}
	// Rows 2..4, columns 3..7 at 3 pixels per cell: each pixel is one cell.
	v := View{Rows: rows, Cols: cols, R0: 2, RSpan: 3, C0: 3, CSpan: 5}
	w, h := 15, 9
	dst = Pool(dst, src, cols, AxisSpans(h, v.R0, v.RSpan, rows), AxisSpans(w, v.C0, v.CSpan, cols))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			want := src[(2+y/3)*cols+3+x/3]
			if got := dst[y*w+x]; got != want {
				t.Fatalf("zoomed pixel (%d, %d) = %g, want cell value %g", x, y, got, want)
			}
		}
	}
}

func TestViewZoomPan(t *testing.T) {
	tests := []struct {
		name     string
		rows     int
		cols     int
		factor   float64
		fx, fy   float64
		clamped  bool // the anchor may move
		wantCols float64
	}{
		{"in at centre", 96, 1024, 2, 0.5, 0.5, false, 512},
		{"in at left edge", 96, 1024, 4, 0, 0.3, false, 256},
		{"in at right edge", 96, 1024, 4, 1, 1, false, 256},
		{"out of whole", 96, 1024, 0.5, 0.5, 0.5, true, 1024},
		{"deepest", 96, 1024, 1e6, 0.3, 0.7, false, MinSpan},
		{"tiny map", 3, 2, 10, 0.5, 0.5, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewView(tt.rows, tt.cols)
			z := v.Zoom(tt.factor, tt.fx, tt.fy)
			if z.CSpan != tt.wantCols {
				t.Errorf("column span %g, want %g", z.CSpan, tt.wantCols)
			}
			checkView(t, z)
			if !tt.clamped {
				if a, b := v.C0+tt.fx*v.CSpan, z.C0+tt.fx*z.CSpan; math.Abs(a-b) > 1e-9 {
					t.Errorf("cell under the cursor moved from column %g to %g", a, b)
				}
			}
			if z.Clamp() != z {
				t.Errorf("Clamp is not idempotent: %+v -> %+v", z, z.Clamp())
			}
			back := z.Zoom(1/tt.factor, tt.fx, tt.fy)
			if !tt.clamped && tt.factor < 100 && tt.rows >= MinSpan && (math.Abs(back.C0-v.C0) > 1e-9 || math.Abs(back.CSpan-v.CSpan) > 1e-9) {
				t.Errorf("zoom in then out: %+v, want %+v", back, v)
			}
			// Panning never leaves the map.
			for _, d := range [][2]float64{{10, 0}, {-10, 0}, {0, 10}, {0, -10}, {0.25, -0.25}} {
				p := z.Pan(d[0], d[1])
				checkView(t, p)
				if d[0] > 0 && p.C0 > z.C0 || d[0] < 0 && p.C0 < z.C0 {
					t.Errorf("pan right by %g moved C0 the wrong way: %g -> %g", d[0], z.C0, p.C0)
				}
			}
		})
	}
}

func checkView(t *testing.T, v View) {
	t.Helper()
	if v.C0 < 0 || v.R0 < 0 || v.C0+v.CSpan > float64(v.Cols)+1e-9 || v.R0+v.RSpan > float64(v.Rows)+1e-9 {
		t.Fatalf("view %+v leaves the map", v)
	}
	if v.CSpan < math.Min(MinSpan, float64(v.Cols))-1e-9 || v.RSpan < math.Min(MinSpan, float64(v.Rows))-1e-9 {
		t.Fatalf("view %+v is deeper than MinSpan", v)
	}
}

// testData is a rows x cols message with a spike, every class, segments
// and token text.
func testData(t testing.TB, rows, cols, calib int) *Data {
	t.Helper()
	orig := make([]byte, 4*rows*cols)
	comp := make([]byte, 4*rows*cols)
	for i := 0; i < rows*cols; i++ {
		o := float32(1) / float32(cols) * float32(1+(i*7919)%5)
		c := o
		if (i%cols)%3 == 0 {
			c = 0
		}
		binary.LittleEndian.PutUint32(orig[4*i:], math.Float32bits(o))
		binary.LittleEndian.PutUint32(comp[4*i:], math.Float32bits(c))
	}
	binary.LittleEndian.PutUint32(orig[4*((rows-1)*cols+cols/2):], math.Float32bits(0.8))
	classes := make([]byte, cols)
	segs := make([]byte, 4*cols)
	for c := range classes {
		classes[c] = byte(c % int(numClasses))
		seg := int32(-1)
		if Class(classes[c]) == Summarized {
			seg = int32(c / 20)
		}
		binary.LittleEndian.PutUint32(segs[4*c:], uint32(seg))
	}
	var text []string
	for i := 0; i < cols+rows-calib; i++ {
		text = append(text, "tok"+strings.Repeat("x", i%3))
	}
	d, err := Decode(wire.Maps{Title: "L0 H0", Method: "hae-ols", Ratio: 0.3, Err: 0.0123, Rows: rows, Cols: cols, Calib: calib,
		TokenText: text, Needles: []int{cols / 3}, Panel: "all"}, orig, comp, classes, segs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecodeErrors(t *testing.T) {
	m := wire.Maps{Rows: 2, Cols: 3, Calib: 1}
	f := make([]byte, 24)
	tests := []struct {
		name                      string
		m                         wire.Maps
		orig, comp, classes, segs []byte
		want                      string
	}{
		{"ok", m, f, f, make([]byte, 3), make([]byte, 12), ""},
		{"ok without classes", m, f, f, nil, nil, ""},
		{"no rows", wire.Maps{Cols: 3}, f, f, nil, nil, "rows 0"},
		{"calib", wire.Maps{Rows: 2, Cols: 3, Calib: 3}, f, f, nil, nil, "calib 3"},
		{"short orig", m, f[:20], f, nil, nil, `buffer "orig"`},
		{"long comp", m, f, append(f, 0), nil, nil, `buffer "comp"`},
		{"classes", m, f, f, make([]byte, 2), nil, `buffer "classes"`},
		{"bad class", m, f, f, []byte{0, 9, 0}, nil, "entry 1 is 9"},
		{"segments", m, f, f, nil, make([]byte, 8), `buffer "segments"`},
		{"needle", wire.Maps{Rows: 2, Cols: 3, Needles: []int{3}}, f, f, nil, nil, "needle 3"},
		{"panel", wire.Maps{Rows: 2, Cols: 3, Panel: "side"}, f, f, nil, nil, `panel "side"`},
	}
	for _, tt := range tests {
		_, err := Decode(tt.m, tt.orig, tt.comp, tt.classes, tt.segs)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestDecodeValues(t *testing.T) {
	d := testData(t, 5, 40, 2)
	for i := range d.Diff {
		if want := float32(math.Abs(float64(d.Comp[i] - d.Orig[i]))); d.Diff[i] != want {
			t.Fatalf("diff[%d] = %g, want %g", i, d.Diff[i], want)
		}
	}
	if got := d.Orig[4*40+20]; got != 0.8 {
		t.Errorf("spike decoded as %g", got)
	}
	if cl, seg, ok := d.Class(28); !ok || cl != Summarized || seg != 1 {
		t.Errorf("Class(28) = %v %d %v, want summarized 1 true", cl, seg, ok)
	}
	if cl, seg, ok := d.Class(24); !ok || cl != Evicted || seg != -1 {
		t.Errorf("Class(24) = %v %d %v, want evicted -1 true", cl, seg, ok)
	}
	tests := []struct {
		row  int
		want string
	}{{0, "calib 0"}, {1, "calib 1"}, {2, `probe 0 "tokx"`}, {4, `probe 2 "tok"`}}
	for _, tt := range tests {
		if got := d.RowLabel(tt.row); got != tt.want {
			t.Errorf("RowLabel(%d) = %q, want %q", tt.row, got, tt.want)
		}
	}
	if got := d.ColLabel(13); got != `key 13 "tokx"` {
		t.Errorf("ColLabel(13) = %q", got)
	}
}

func TestClassMatchesCore(t *testing.T) {
	for _, c := range []core.Class{core.Evicted, core.Sink, core.Recent, core.Anchor, core.Summarized, core.Approx} {
		if Class(c).String() != c.String() {
			t.Errorf("class %d: heatmap says %q, core says %q", c, Class(c), c)
		}
	}
	if Class(numClasses).String() != core.Class(numClasses).String() {
		t.Errorf("core has more classes than heatmap (%d)", numClasses)
	}
}

var font7x13 = Font{7, 13}

func TestLayout(t *testing.T) {
	tests := []struct {
		w, h, rows, cols int
		panel            string
		stacked          bool
	}{
		{700, 420, 96, 1024, "all", true},
		{1200, 700, 96, 1024, "all", true},
		{1400, 500, 128, 128, "all", false},
		{320, 240, 96, 1024, "all", true},
		{600, 300, 96, 1024, "diff", true},
		{80, 60, 96, 1024, "all", true},
	}
	for _, tt := range tests {
		panels, err := PanelsFor(tt.panel)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLayout(tt.w, tt.h, panels, tt.rows, tt.cols, font7x13)
		if l.Stacked != tt.stacked {
			t.Errorf("%dx%d %dx%d: stacked %v, want %v", tt.w, tt.h, tt.rows, tt.cols, l.Stacked, tt.stacked)
		}
		if len(l.Boxes) != len(panels) {
			t.Fatalf("%d boxes for %d panels", len(l.Boxes), len(panels))
		}
		inside := func(what string, r Rect) {
			if r.Empty() {
				return
			}
			if r.X < 0 || r.Y < 0 || r.X+r.W > tt.w || r.Y+r.H > tt.h {
				t.Errorf("%dx%d: %s %+v leaves the canvas", tt.w, tt.h, what, r)
			}
		}
		inside("bar", l.Bar)
		inside("readout", l.Readout)
		for _, s := range l.Swatches {
			inside("swatch", s.Patch)
		}
		var maps []Rect
		axes := 0
		for _, b := range l.Boxes {
			if b.Map.Empty() {
				if tt.w >= 300 {
					t.Errorf("%dx%d: empty map", tt.w, tt.h)
				}
				continue
			}
			inside("map", b.Map)
			inside("strip", b.Strip)
			if b.Strip.X != b.Map.X || b.Strip.W != b.Map.W || b.Needles.X != b.Map.X || b.Needles.W != b.Map.W {
				t.Errorf("strip %+v and needles %+v not aligned with map %+v", b.Strip, b.Needles, b.Map)
			}
			if b.Strip.Y < b.Map.Y+b.Map.H || b.Strip.Y+b.Strip.H > l.Bar.Y {
				t.Errorf("strip %+v not between its map %+v and the legend %+v", b.Strip, b.Map, l.Bar)
			}
			if !b.Axis.Empty() {
				axes++
				inside("axis", b.Axis)
				if b.Axis.X != b.Map.X || b.Axis.W != b.Map.W || b.Axis.Y < b.Strip.Y+b.Strip.H || b.Axis.Y+b.Axis.H > l.Bar.Y {
					t.Errorf("axis %+v not under its strip %+v, above the legend %+v", b.Axis, b.Strip, l.Bar)
				}
			}
			for _, o := range maps {
				if overlap(o, b.Map) || overlap(o, b.Strip) {
					t.Errorf("panels overlap: %+v and %+v", o, b)
				}
			}
			maps = append(maps, b.Map)
		}
		// An axis under each panel side by side, under the last stacked.
		if want := map[bool]int{true: 1, false: len(panels)}[l.Stacked]; tt.h >= 300 && axes != want {
			t.Errorf("%dx%d: %d axes, want %d", tt.w, tt.h, axes, want)
		}
	}
}

func overlap(a, b Rect) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func TestHitRoundTrip(t *testing.T) {
	const rows, cols, calib = 40, 300, 24
	d := testData(t, rows, cols, calib)
	panels, _ := PanelsFor("all")
	l := NewLayout(900, 600, panels, rows, cols, font7x13)
	views := map[string]View{
		"whole":     NewView(rows, cols),
		"zoomed in": NewView(rows, cols).Zoom(20, 0.4, 0.6),
		"middle":    NewView(rows, cols).Zoom(1.5, 0.5, 0.5),
	}
	for name, v := range views {
		for bi, b := range l.Boxes {
			rs := AxisSpans(b.Map.H, v.R0, v.RSpan, rows)
			cs := AxisSpans(b.Map.W, v.C0, v.CSpan, cols)
			pooled := Pool(nil, d.Panel(b.Kind), cols, rs, cs)
			for py := 0; py < b.Map.H; py += 3 {
				for px := 0; px < b.Map.W; px += 5 {
					h, ok := l.Hit(b.Map.X+px, b.Map.Y+py, v)
					if !ok || h.Box != bi || h.Kind != b.Kind || !h.InMap {
						t.Fatalf("%s: pixel (%d, %d) of box %d: hit %+v %v", name, px, py, bi, h, ok)
					}
					r, ok := d.Lookup(h)
					if !ok {
						t.Fatalf("%s: no cell under pixel (%d, %d)", name, px, py)
					}
					// The readout is the value the pixel shows...
					if r.Value != pooled[py*b.Map.W+px] {
						t.Fatalf("%s: readout %g, pixel shows %g", name, r.Value, pooled[py*b.Map.W+px])
					}
					// ...of a cell the pixel covers, whose centre maps back
					// to a pixel covering it.
					if r.Row < h.Rows.Lo || r.Row >= h.Rows.Hi || r.Col < h.Cols.Lo || r.Col >= h.Cols.Hi {
						t.Fatalf("%s: cell (%d, %d) outside the pixel's block %v x %v", name, r.Row, r.Col, h.Rows, h.Cols)
					}
					qx, qy := CellPixel(r.Col, b.Map.W, v.C0, v.CSpan), CellPixel(r.Row, b.Map.H, v.R0, v.RSpan)
					if qx < 0 || qx >= b.Map.W || qy < 0 || qy >= b.Map.H {
						// Zoomed in, an edge pixel may show a cell whose
						// centre is just outside the view.
						continue
					}
					h2, ok := l.Hit(b.Map.X+qx, b.Map.Y+qy, v)
					if !ok || r.Col < h2.Cols.Lo || r.Col >= h2.Cols.Hi || r.Row < h2.Rows.Lo || r.Row >= h2.Rows.Hi {
						t.Fatalf("%s: cell (%d, %d) -> pixel (%d, %d) -> block %v x %v", name, r.Row, r.Col, qx, qy, h2.Rows, h2.Cols)
					}
					if name == "zoomed in" && (qx != px && math.Abs(float64(qx-px)) > float64(b.Map.W)/v.CSpan+1) {
						t.Fatalf("%s: pixel %d -> cell %d -> pixel %d", name, px, r.Col, qx)
					}
				}
			}
			// The strip reports a column and its class.
			h, ok := l.Hit(b.Strip.X+b.Strip.W/2, b.Strip.Y, v)
			if !ok || h.InMap {
				t.Fatalf("%s: strip hit %+v %v", name, h, ok)
			}
			if r, ok := d.Lookup(h); !ok || !r.HasClass || r.Col < h.Cols.Lo || r.Col >= h.Cols.Hi {
				t.Fatalf("%s: strip readout %+v %v", name, r, ok)
			}
		}
		if _, ok := l.Hit(0, 0, v); ok {
			t.Errorf("%s: the corner hits a panel", name)
		}
	}
}

func TestStripKeepsAnchor(t *testing.T) {
	d := testData(t, 2, 600, 1)
	for c := range d.Classes {
		d.Classes[c] = Evicted
	}
	d.Classes[377] = Anchor
	cs := AxisSpans(50, 0, 600, 600)
	n := 0
	for _, s := range cs {
		if col, ok := d.StripColumn(s); ok && d.Classes[col] == Anchor {
			n++
		}
	}
	if n == 0 {
		t.Error("a single anchor vanished from the strip at 12 columns per pixel")
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		s           string
		n           int
		first, rest string
	}{
		{"short", 10, "short", ""},
		{"query calib 3 | key 7 | orig 0.5", 20, "query calib 3", "key 7 | orig 0.5"},
		{"query calib 3 | key 7 | orig 0.5", 24, "query calib 3 | key 7", "orig 0.5"},
		{"abcdefghij", 4, "abcd", "efghij"},
	}
	for _, tt := range tests {
		if f, r := wrap(tt.s, tt.n); f != tt.first || r != tt.rest {
			t.Errorf("wrap(%q, %d) = %q, %q; want %q, %q", tt.s, tt.n, f, r, tt.first, tt.rest)
		}
	}
}

func TestRender(t *testing.T) {
	const rows, cols = 40, 1000
	d := testData(t, rows, cols, 24)
	r, err := NewRenderer("viridis")
	if err != nil {
		t.Fatal(err)
	}
	panels, _ := PanelsFor("all")
	for _, size := range [][2]int{{700, 420}, {300, 200}, {1500, 900}} {
		l := NewLayout(size[0], size[1], panels, rows, cols, font7x13)
		img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
		v := NewView(rows, cols)
		r.Render(img, l, d, v, nil)
		spike := r.Colors.At(0.8)
		found := false
		b := l.Boxes[0].Map
		for y := b.Y; y < b.Y+b.H && !found; y++ {
			for x := b.X; x < b.X+b.W; x++ {
				if img.RGBAAt(x, y) == spike {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("%v: the spike's colour is nowhere in the original panel", size)
		}
		h, ok := l.Hit(b.X+b.W/2, b.Y+b.H/2, v)
		if !ok {
			t.Fatalf("%v: no hit in the middle of the first map", size)
		}
		ro, ok := d.Lookup(h)
		if !ok {
			t.Fatalf("%v: no readout for %+v", size, h)
		}
		r.Render(img, l, d, v, &ro)
		for _, lb := range r.Labels(l, d, v, &ro) {
			if lb.X < 0 || lb.Y < 0 || lb.X+len(lb.Text)*font7x13.W > l.W || lb.Y+font7x13.H > l.H {
				t.Errorf("%v: label %+v leaves the canvas", size, lb)
			}
		}
		r.Render(img, l, nil, v, nil)
		if img.RGBAAt(b.X+b.W/2, b.Y+b.H/2) != Background {
			t.Errorf("%v: waiting state draws a map", size)
		}
		if lbs := r.Labels(l, nil, v, nil); len(lbs) != 1 || !strings.Contains(lbs[0].Text, "waiting") {
			t.Errorf("%v: waiting labels %+v", size, lbs)
		}
	}
}

// TestRenderCache: hovering over a cached painting gives the same pixels as
// painting from scratch, and moving the view repaints.
func TestRenderCache(t *testing.T) {
	const rows, cols = 40, 500
	d := testData(t, rows, cols, 24)
	panels, _ := PanelsFor("all")
	l := NewLayout(640, 400, panels, rows, cols, font7x13)
	v := NewView(rows, cols)
	h, _ := l.Hit(l.Boxes[1].Map.X+30, l.Boxes[1].Map.Y+10, v)
	ro, _ := d.Lookup(h)
	cached, err := NewRenderer("viridis")
	if err != nil {
		t.Fatal(err)
	}
	a := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	b := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	steps := []struct {
		v     View
		hover *Readout
	}{{v, nil}, {v, &ro}, {v.Zoom(3, 0.2, 0.5), &ro}, {v.Zoom(3, 0.2, 0.5).Pan(0.1, 0), nil}, {v, nil}}
	for i, st := range steps {
		cached.Render(a, l, d, st.v, st.hover)
		fresh, _ := NewRenderer("viridis")
		fresh.Render(b, l, d, st.v, st.hover)
		if !bytes.Equal(a.Pix, b.Pix) {
			t.Fatalf("step %d: cached painting differs from a fresh one", i)
		}
	}
}

// TestPrepareAdopt: a painting prepared off screen and adopted is what
// Render copies (the crosshair drawn over it), without painting anew; one
// that shows other data or another view is painted over; and Adopt hands
// back the painting Render had.
func TestPrepareAdopt(t *testing.T) {
	const rows, cols = 40, 500
	d1 := testData(t, rows, cols, 24)
	d2 := testData(t, rows, cols, 24)
	for i := range d2.Comp {
		d2.Comp[i] *= 0.5
	}
	d2, err := NewData(d2.Maps, d1.Orig, d2.Comp, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d2.ShareOrig(d1)
	panels, _ := PanelsFor("all")
	l := NewLayout(640, 400, panels, rows, cols, font7x13)
	v := NewView(rows, cols)
	h, _ := l.Hit(l.Boxes[0].Map.X+30, l.Boxes[0].Map.Y+10, v)
	ro, _ := d2.Lookup(h)
	want := func(d *Data, v View, hover *Readout) []byte {
		fresh, _ := NewRenderer("viridis")
		img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
		fresh.Render(img, l, d, v, hover)
		return img.Pix
	}
	r, _ := NewRenderer("viridis")
	img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	r.Render(img, l, d1, v, nil)
	first := r.base
	p := r.Prepare(nil, l, d2, v)
	if !p.Shows(l, d2, v) || p.Shows(l, d1, v) || p.Shows(l, d2, v.Zoom(2, 0.5, 0.5)) {
		t.Fatalf("Shows is wrong about the prepared painting")
	}
	if !bytes.Equal(p.img.Pix, want(d2, v, nil)) {
		t.Fatalf("the prepared painting differs from a fresh renderer's")
	}
	// Rendering d1 again still copies d1's painting: preparing d2 left it.
	r.Render(img, l, d1, v, nil)
	if !bytes.Equal(img.Pix, want(d1, v, nil)) {
		t.Fatalf("preparing other data changed the painting on screen")
	}
	if old := r.Adopt(p); old != first {
		t.Fatalf("Adopt handed back %p, want the painting Render made (%p)", old, first)
	}
	// Mark the adopted painting: Render must copy it, not paint anew.
	p.img.Pix[0] ^= 0xff
	r.Render(img, l, d2, v, &ro)
	if img.Pix[0] != p.img.Pix[0] {
		t.Fatalf("Render painted anew instead of copying the adopted painting")
	}
	p.img.Pix[0] ^= 0xff
	r.Render(img, l, d2, v, &ro)
	if !bytes.Equal(img.Pix, want(d2, v, &ro)) {
		t.Fatalf("the adopted painting with the crosshair differs from a fresh renderer's")
	}
	// An adopted painting of other data, or of another view, is painted over.
	zoom := v.Zoom(2, 0.5, 0.5)
	for i, st := range []struct {
		d *Data
		v View
	}{{d1, v}, {d2, zoom}} {
		r.Adopt(r.Prepare(nil, l, d2, v))
		r.Render(img, l, st.d, st.v, nil)
		if !bytes.Equal(img.Pix, want(st.d, st.v, nil)) {
			t.Fatalf("case %d: Render copied a painting of something else", i)
		}
	}
}

// TestShareOrig checks that a message whose original map equals the one
// shown shares it (and its panel id), that one that differs does not, and
// that a renderer reusing the shared panel's painting paints what a fresh
// renderer paints, through a zoom and back.
func TestShareOrig(t *testing.T) {
	const rows, cols = 40, 500
	d1 := testData(t, rows, cols, 24)
	d2 := testData(t, rows, cols, 24)
	for i := range d2.Comp {
		d2.Comp[i] *= 0.5 // another ratio: same original, new compressed map
	}
	d2.Diff = nil
	d2, err := NewData(d2.Maps, d2.Orig, d2.Comp, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d2.PanelID(PanelOrig) == d1.PanelID(PanelOrig) {
		t.Fatalf("two messages share a panel id before ShareOrig")
	}
	if !d2.ShareOrig(d1) || d2.PanelID(PanelOrig) != d1.PanelID(PanelOrig) || &d2.Orig[0] != &d1.Orig[0] {
		t.Fatalf("equal original maps are not shared")
	}
	if d2.PanelID(PanelComp) == d1.PanelID(PanelComp) {
		t.Errorf("the compressed maps share an id")
	}
	d3 := testData(t, rows, cols, 24)
	d3.Orig[7] += 1
	if d3.ShareOrig(d1) || d3.PanelID(PanelOrig) == d1.PanelID(PanelOrig) {
		t.Errorf("different original maps are shared")
	}
	// A message that refers to the original map on screen (it came
	// without one) is made from the same slice: shared without comparing.
	d4, err := NewData(d2.Maps, d1.Orig, d2.Comp, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d4.ShareOrig(d1) || d4.PanelID(PanelOrig) != d1.PanelID(PanelOrig) {
		t.Errorf("the same original map is not shared")
	}
	panels, _ := PanelsFor("all")
	l := NewLayout(640, 400, panels, rows, cols, font7x13)
	v := NewView(rows, cols)
	cached, _ := NewRenderer("viridis")
	a := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	b := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	for i, st := range []struct {
		d *Data
		v View
	}{{d1, v}, {d2, v}, {d3, v}, {d2, v.Zoom(2, 0.5, 0.5)}, {d1, v}} {
		cached.Render(a, l, st.d, st.v, nil)
		fresh, _ := NewRenderer("viridis")
		fresh.Render(b, l, st.d, st.v, nil)
		if !bytes.Equal(a.Pix, b.Pix) {
			t.Fatalf("step %d: the painting with reused panels differs from a fresh one", i)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	for _, sz := range []struct {
		name                    string
		rows, cols, calib, w, h int
	}{
		// The needle sample on a large canvas, and the default sample on
		// the app's heatmap frame (788 x 340 CSS pixels in the e2e tests).
		{"192x1984-on-1400x900", 192, 1984, 128, 1400, 900},
		{"192x960-on-788x340", 192, 960, 128, 788, 340},
	} {
		d := testData(b, sz.rows, sz.cols, sz.calib)
		r, _ := NewRenderer("viridis")
		panels, _ := PanelsFor("all")
		l := NewLayout(sz.w, sz.h, panels, sz.rows, sz.cols, font7x13)
		img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
		v := NewView(sz.rows, sz.cols)
		h, _ := l.Hit(l.Boxes[0].Map.X+100, l.Boxes[0].Map.Y+20, v)
		ro, _ := d.Lookup(h)
		// New data each time (what a slider move sends): alternating between
		// two copies defeats the painting cache; a new ratio of the same head
		// (sharing the original map) repaints two panels of three.
		d2 := *d
		d2.ids[PanelOrig], d2.ids[PanelComp], d2.ids[PanelDiff] = lastID.Add(1), lastID.Add(1), lastID.Add(1)
		d3 := *d
		d3.ids[PanelComp], d3.ids[PanelDiff] = lastID.Add(1), lastID.Add(1)
		for _, bc := range []struct {
			name  string
			other *Data
		}{{"repaint", &d2}, {"repaint-same-orig", &d3}} {
			b.Run(sz.name+"/"+bc.name, func(b *testing.B) {
				pair := [2]*Data{d, bc.other}
				for i := 0; b.Loop(); i++ {
					r.Render(img, l, pair[i%2], v, nil)
				}
			})
		}
		b.Run(sz.name+"/hover", func(b *testing.B) {
			for b.Loop() {
				r.Render(img, l, d, v, &ro)
			}
		})
	}
}

// TestColorsIndexByPrefix checks Index, which narrows its search by the
// float's top bits, against the plain binary search over the thresholds
// for floats of every bit prefix (and the thresholds themselves).
func TestColorsIndexByPrefix(t *testing.T) {
	c, err := NewColors(DefaultScale(), "viridis")
	if err != nil {
		t.Fatal(err)
	}
	plain := func(v float32) int {
		if !(v > c.thresholds[1]) {
			if v == c.thresholds[1] {
				return 1
			}
			return 0
		}
		return c.search(v, 1, lutSize-1)
	}
	var vs []float32
	for p := uint32(0); p < 1<<16; p++ {
		for _, low := range []uint32{0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff, (p * 2654435761) & 0xffff} {
			vs = append(vs, math.Float32frombits(p<<16|low))
		}
	}
	for _, th := range c.thresholds {
		vs = append(vs, th, math.Nextafter32(th, 0), math.Nextafter32(th, 2))
	}
	for _, v := range vs {
		if got, want := c.Index(v), plain(v); got != want {
			t.Fatalf("Index(%g [%#08x]) = %d, binary search %d", v, math.Float32bits(v), got, want)
		}
	}
}

// TestColorsPrefixTables checks the prefix tables, built by one sweep over
// the thresholds, against a search and a slow lookup per prefix end.
func TestColorsPrefixTables(t *testing.T) {
	for _, name := range assets.ColormapNames() {
		c, err := NewColors(DefaultScale(), name)
		if err != nil {
			t.Fatal(err)
		}
		for p := range c.pixel {
			lo, hi := math.Float32frombits(uint32(p)<<16), math.Float32frombits(uint32(p)<<16|0xffff)
			if got, want := c.byPrefix[p], uint16(c.search(lo, 1, lutSize-1))|uint16(c.search(hi, 1, lutSize-1))<<8; got != want {
				t.Fatalf("%s: byPrefix[%#04x] = %#04x, by search %#04x", name, p, got, want)
			}
			plo, phi := c.slowPixel(lo), c.slowPixel(hi)
			want := uint16(mixed)
			switch {
			case plo == phi:
				want = uint16(plo)
			case phi == plo+1 && phi < lutSize:
				want = split + uint16(plo)
			}
			if c.pixel[p] != want {
				t.Fatalf("%s: pixel[%#04x] = %#04x, by slowPixel %#04x", name, p, c.pixel[p], want)
			}
		}
	}
}

// TestColorsPixelByPrefix checks Pixel, which reads most floats' colour
// from a table by their top bits, against the comparison with the
// thresholds (slowPixel) for floats of every bit prefix, both signs,
// NaNs and infinities included, and the thresholds themselves.
func TestColorsPixelByPrefix(t *testing.T) {
	for _, name := range assets.ColormapNames() {
		c, err := NewColors(DefaultScale(), name)
		if err != nil {
			t.Fatal(err)
		}
		var vs []float32
		for p := uint32(0); p < 1<<16; p++ {
			for _, low := range []uint32{0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff, (p * 2654435761) & 0xffff} {
				vs = append(vs, math.Float32frombits(p<<16|low))
			}
		}
		for _, th := range c.thresholds {
			vs = append(vs, th, math.Nextafter32(th, 0), math.Nextafter32(th, 2), -th)
		}
		vs = append(vs, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0, float32(math.Copysign(0, -1)))
		for _, v := range vs {
			if got, want := c.Pixel(v), c.px[c.slowPixel(v)]; got != want {
				t.Fatalf("%s: Pixel(%g [%#08x]) = %v, by comparison %v", name, v, math.Float32bits(v), got, want)
			}
		}
		row := make([]byte, 4*len(vs))
		c.PixelRow(row, vs)
		for i, v := range vs {
			if got, want := [4]byte(row[4*i:4*i+4]), c.Pixel(v); got != want {
				t.Fatalf("%s: PixelRow at %g [%#08x] wrote %v, Pixel %v", name, v, math.Float32bits(v), got, want)
			}
		}
		if got := c.Pixel(float32(math.NaN())); got != [4]byte{NoData.R, NoData.G, NoData.B, 255} {
			t.Errorf("%s: Pixel(NaN) = %v, want NoData", name, got)
		}
	}
}

// TestNewDataReusesDiff checks NewData: Diff is |comp - orig| written into
// the buffer given when it has room, wrong lengths and shapes are errors.
func TestNewDataReusesDiff(t *testing.T) {
	m := wire.Maps{Rows: 2, Cols: 3, Calib: 1, Panel: "all"}
	orig := []float32{0.1, 0.2, 0.7, 0.5, 0.25, 0.25}
	comp := []float32{0.3, 0.1, 0.6, 0.5, float32(math.NaN()), 0}
	diff := make([]float32, 8)
	d, err := NewData(m, orig, comp, diff, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if &d.Diff[0] != &diff[0] {
		t.Errorf("Diff was not written into the buffer given")
	}
	if !d.NaN {
		t.Errorf("NaN is false for a compressed map with a NaN cell")
	}
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name       string
		orig, comp []float32
		nan        bool
	}{
		{"no NaN", orig, orig, false},
		{"infinities", []float32{0.1, 0.2, inf, 0.5, 0.25, -inf}, []float32{inf, 0.1, 0.6, -inf, 0, 0}, false},
		{"NaN in orig", []float32{0.1, 0.2, 0.7, float32(math.NaN()), 0.25, 0.25}, orig, true},
		{"inf minus inf", []float32{inf, 0.2, 0.7, 0.5, 0.25, 0.25}, []float32{inf, 0.1, 0.6, 0.5, 0, 0}, true},
	} {
		if d2, err := NewData(m, tc.orig, tc.comp, nil, nil, nil); err != nil || d2.NaN != tc.nan {
			t.Errorf("%s: NaN %v, error %v; want %v, nil", tc.name, d2 != nil && d2.NaN, err, tc.nan)
		}
	}
	for i := range orig {
		want := float32(math.Abs(float64(comp[i] - orig[i])))
		if got := d.Diff[i]; got != want && !(got != got && want != want) {
			t.Errorf("Diff[%d] = %v, want %v", i, got, want)
		}
	}
	for _, tc := range []struct {
		name       string
		m          wire.Maps
		orig, comp []float32
		want       string
	}{
		{"short comp", m, orig, comp[:5], `buffer "comp": 5 values`},
		{"zero rows", wire.Maps{Rows: 0, Cols: 3, Panel: "all"}, nil, nil, "rows 0"},
		{"absurd", wire.Maps{Rows: 1 << 20, Cols: 1 << 20, Panel: "all"}, nil, nil, "more than"},
	} {
		if _, err := NewData(tc.m, tc.orig, tc.comp, nil, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeFactored checks DecodeFactored's errors, each naming the
// buffer or field, and that a good message expands as attnmap says.
func TestDecodeFactored(t *testing.T) {
	m := wire.Maps{Rows: 1, Cols: 3, Calib: 1, Panel: "all", Factored: true, Syn: 1}
	src := i32(-1, 0, -2)
	good := [][]byte{f32(2), f32(0.5), f32(0.5), f32(0, 1, 0), src}
	f, err := DecodeFactored(m, good[0], good[1], good[2], good[3], good[4])
	if err != nil {
		t.Fatal(err)
	}
	comp := make([]float32, 3)
	f.Expand(comp, []float32{0.25, 0.5, 0.25})
	if comp[0] != 0.5 || comp[1] != 0.25 || comp[2] != 0 {
		t.Errorf("expanded %v, want [0.5 0.25 0]", comp)
	}
	for _, tc := range []struct {
		name string
		m    wire.Maps
		bufs [][]byte
		want string
	}{
		{"short scale", m, [][]byte{nil, good[1], good[2], good[3], good[4]}, `buffer "scale"`},
		{"short syn", m, [][]byte{good[0], good[1], f32(1, 2), good[3], good[4]}, `buffer "syn"`},
		{"short share", m, [][]byte{good[0], good[1], good[2], f32(1), good[4]}, `buffer "share"`},
		{"short source", m, [][]byte{good[0], good[1], good[2], good[3], src[:8]}, `buffer "source"`},
		{"source out of range", wire.Maps{Rows: 1, Cols: 3, Panel: "all", Factored: true, Syn: 0}, [][]byte{good[0], good[1], nil, good[3], good[4]}, "column 1: source 0"},
		{"negative syn", wire.Maps{Rows: 1, Cols: 3, Panel: "all", Factored: true, Syn: -1}, good, "syn -1"},
		{"no rows", wire.Maps{Rows: 0, Cols: 3, Panel: "all", Factored: true}, good, "rows 0"},
	} {
		if _, err := DecodeFactored(tc.m, tc.bufs[0], tc.bufs[1], tc.bufs[2], tc.bufs[3], tc.bufs[4]); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestAxisTicks(t *testing.T) {
	for _, c := range []struct {
		start, count float64
		want         string
	}{
		{0, 56, "[0 10 20 30 40 50]"}, {0, 960, "[0 200 400 600 800]"}, {0, 1, "[0]"}, {0, 5, "[0 1 2 3 4]"},
		{0, 1984, "[0 500 1000 1500]"},
		// Zoomed in: the multiples of the step among the visible cells
		// (101 to 150).
		{100.5, 50, "[110 120 130 140 150]"}, {3.2, 4, "[4 5 6 7]"},
		{0, 0, "[]"},
	} {
		if got := fmt.Sprint(AxisTicks(c.start, c.count, 5)); got != c.want {
			t.Errorf("AxisTicks(%g, %g) = %s, want %s", c.start, c.count, got, c.want)
		}
	}
}

// TestLegend: the legend names every class once, in its colour, and the
// needle mark.
func TestLegend(t *testing.T) {
	seen := map[Class]bool{}
	needles := 0
	for _, e := range Legend {
		img := image.NewRGBA(image.Rect(0, 0, 16, 10))
		e.Paint(img, Rect{0, 0, 16, 10})
		switch {
		case e.Needle:
			needles++
			if got := img.RGBAAt(8, 5); got != NeedleMark {
				t.Errorf("needle patch %v, want %v", got, NeedleMark)
			}
		default:
			if seen[e.Class] {
				t.Errorf("class %s twice", e.Class)
			}
			seen[e.Class] = true
			if e.Name != e.Class.String() {
				t.Errorf("class %s named %q", e.Class, e.Name)
			}
			if got := img.RGBAAt(2, 5); got != ClassColor[e.Class] {
				t.Errorf("%s patch %v, want %v", e.Class, got, ClassColor[e.Class])
			}
			if got, want := img.RGBAAt(14, 5), ClassColor[e.Class]; e.Alt {
				want = SummarizedAlt
				if got != want {
					t.Errorf("%s patch's right half %v, want %v", e.Class, got, want)
				}
			}
		}
	}
	if len(seen) != int(numClasses) || needles != 1 {
		t.Errorf("legend has %d classes of %d and %d needle marks", len(seen), numClasses, needles)
	}
}

// TestAxisLabels: each axis numbers the prefix positions of its ticks,
// under a mark, for the whole map and for a zoomed view.
func TestAxisLabels(t *testing.T) {
	const rows, cols = 40, 1000
	d := testData(t, rows, cols, 24)
	r, err := NewRenderer(Colormap)
	if err != nil {
		t.Fatal(err)
	}
	panels, _ := PanelsFor("all")
	for _, size := range [][2]int{{1400, 500}, {700, 420}} {
		l := NewLayout(size[0], size[1], panels, rows, cols, font7x13)
		img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
		for _, v := range []View{NewView(rows, cols), NewView(rows, cols).Zoom(8, 0.3, 0.5)} {
			r.Render(img, l, d, v, nil)
			labels := r.Labels(l, d, v, nil)
			n := 0
			for _, b := range l.Boxes {
				if b.Axis.Empty() {
					continue
				}
				n++
				ticks := AxisTicks(v.C0, v.CSpan, AxisTickCount)
				if len(ticks) < 3 {
					t.Errorf("%v view %+v: ticks %v", size, v, ticks)
				}
				for _, tk := range ticks {
					px := b.Axis.X + CellPixel(tk, b.Map.W, v.C0, v.CSpan)
					if got := img.RGBAAt(px, b.Axis.Y); got != Muted {
						t.Errorf("%v: tick %d at x %d: %v, want the mark", size, tk, px, got)
					}
					s := strconv.Itoa(tk)
					found := false
					for _, lb := range labels {
						if lb.Text == s && lb.Y == b.Axis.Y+axisTickH(l.Font) && abs(lb.X+len(s)*l.Font.W/2-px) <= l.Font.W {
							found = true
						}
					}
					if !found {
						t.Errorf("%v view %+v: no label %q under x %d", size, v, s, px)
					}
				}
			}
			if n == 0 {
				t.Errorf("%v: no axis", size)
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// BenchmarkNewColors is the heatmap page's colour tables, built at its
// start (run a process's first under Node to see V8's baseline code).
func BenchmarkNewColors(b *testing.B) {
	for b.Loop() {
		if _, err := NewColors(DefaultScale(), Colormap); err != nil {
			b.Fatal(err)
		}
	}
}
