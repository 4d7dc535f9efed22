package figure

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/ui/heatmap"
	"github.com/haeols/haeols/wire"
)

func TestNewLayout(t *testing.T) {
	for _, c := range []struct{ rows, cols, mw, mh int }{
		{36, 56, 560, 396},    // enlarged: 10 x 11 px a cell
		{192, 1984, 560, 384}, // pooled along the positions
		{1000, 5000, 560, 420},
		{3, 2, 560, 420},
		{421, 561, 560, 420},
		{420, 280, 560, 420},
		{211, 281, 281, 211}, // one pixel a cell
	} {
		l := NewLayout(c.rows, c.cols)
		if len(l.Boxes) != 3 {
			t.Fatalf("%v: %d boxes", c, len(l.Boxes))
		}
		for i, b := range l.Boxes {
			if b.Map.W != c.mw || b.Map.H != c.mh {
				t.Errorf("%v: panel %d map %dx%d, want %dx%d", c, i, b.Map.W, b.Map.H, c.mw, c.mh)
			}
			for _, r := range []heatmap.Rect{b.Title, b.Map, b.Needles, b.Strip} {
				if r.X < marginL || r.Y < 0 || r.X+r.W > l.W-marginR || r.Y+r.H > l.H-belowMaps {
					t.Errorf("%v: panel %d rectangle %+v outside the panels' part of %dx%d", c, i, r, l.W, l.H)
				}
			}
			if b.Needles.Y <= b.Map.Y+b.Map.H || b.Strip.Y < b.Needles.Y+b.Needles.H {
				t.Errorf("%v: panel %d: map %+v, needles %+v and strip %+v overlap", c, i, b.Map, b.Needles, b.Strip)
			}
			if i > 0 && l.Boxes[i-1].Map.X+l.Boxes[i-1].Map.W >= b.Map.X {
				t.Errorf("%v: panels %d and %d overlap", c, i-1, i)
			}
		}
	}
}

// testFigure is a 10 x 40 head: a diagonal of spikes over a floor, the
// compressed map missing every fourth column, a needle at 20.
func testFigure(t *testing.T) Figure {
	t.Helper()
	const rows, cols = 10, 40
	orig, comp := make([]float32, rows*cols), make([]float32, rows*cols)
	classes := make([]byte, cols)
	for r := range rows {
		for c := range cols {
			v := float32(1e-5)
			if c == 4*r {
				v = 0.9
			}
			orig[r*cols+c] = v
			if c%4 != 3 {
				comp[r*cols+c] = v
			}
		}
	}
	for c := range classes {
		classes[c] = byte([]heatmap.Class{heatmap.Sink, heatmap.Anchor, heatmap.Recent, heatmap.Evicted}[c%4])
	}
	d, err := heatmap.NewData(wire.Maps{Rows: rows, Cols: cols, Calib: 6, Needles: []int{20}, Method: "topk"}, orig, comp, nil, classes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Figure{Data: d, Title: "test head", Subtitle: "err 0.1", NeedleProbes: []int{1}}
}

func TestDraw(t *testing.T) {
	f := testFigure(t)
	img, err := Draw(f)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(10, 40)
	if b := img.Bounds(); b.Dx() != l.W || b.Dy() != l.H {
		t.Fatalf("size %v, want %dx%d", b.Size(), l.W, l.H)
	}
	cmap, err := assets.Colormap(heatmap.Colormap)
	if err != nil {
		t.Fatal(err)
	}
	// 40 x 10 cells on 560 x 420: 14 x 42 px each. The spike of row 2 at
	// column 8, the floor next to it.
	m := l.Boxes[0].Map
	cell := func(b heatmap.Box, r, c int) color.RGBA { return img.RGBAAt(b.Map.X+14*c+7, b.Map.Y+42*r+21) }
	colors, _ := heatmap.NewColors(heatmap.DefaultScale(), heatmap.Colormap)
	if got, want := cell(l.Boxes[0], 2, 8), colors.At(0.9); got != want {
		t.Errorf("spike %v, want %v", got, want)
	}
	if got, want := cell(l.Boxes[0], 2, 9), colors.At(1e-5); got != want {
		t.Errorf("floor cell %v, want %v", got, want)
	}
	if got, want := cell(l.Boxes[1], 2, 3), colors.At(0); got != want {
		t.Errorf("evicted cell of the compressed map %v, want %v", got, want)
	}
	// The strip shows each column's class.
	s := l.Boxes[1].Strip
	for c, want := range []color.RGBA{heatmap.ClassColor[heatmap.Sink], heatmap.ClassColor[heatmap.Anchor], heatmap.ClassColor[heatmap.Recent], heatmap.ClassColor[heatmap.Evicted]} {
		if got := img.RGBAAt(s.X+14*c+7, s.Y+s.H/2); got != want {
			t.Errorf("strip column %d: %v, want %v", c, got, want)
		}
	}
	// The colour bar runs from the colormap's top to its bottom.
	bx := l.Boxes[2].Map.X + l.Boxes[2].Map.W + 28 + colorbarW/2
	if got := img.RGBAAt(bx, m.Y); got != cmap.At(1) {
		t.Errorf("colour bar top %v, want %v", got, cmap.At(1))
	}
	if got := img.RGBAAt(bx, m.Y+m.H-1); got != cmap.At(0) {
		t.Errorf("colour bar bottom %v, want %v", got, cmap.At(0))
	}
	// The legend's first patch is the sink's colour.
	if got := img.RGBAAt(marginL+8, l.H-42-5); got != heatmap.ClassColor[heatmap.Legend[0].Class] {
		t.Errorf("legend patch %v, want %v", got, heatmap.ClassColor[heatmap.Legend[0].Class])
	}
	// Text is drawn above the maps: ink in the title line.
	ink := false
	for x := marginL; x < marginL+100 && !ink; x++ {
		for y := 10; y < 32; y++ {
			if img.RGBAAt(x, y) == heatmap.Ink {
				ink = true
				break
			}
		}
	}
	if !ink {
		t.Error("no title")
	}
}

// TestDrawFloor: a higher floor maps the 1e-5 cells to the colormap's
// bottom; a floor outside (0, 1) is an error.
func TestDrawFloor(t *testing.T) {
	f := testFigure(t)
	f.Floor = 1e-4
	img, err := Draw(f)
	if err != nil {
		t.Fatal(err)
	}
	cmap, _ := assets.Colormap(heatmap.Colormap)
	m := NewLayout(10, 40).Boxes[0].Map
	if got := img.RGBAAt(m.X+14*9+7, m.Y+42*2+21); got != cmap.At(0) {
		t.Errorf("1e-5 under floor 1e-4: %v, want the bottom colour %v", got, cmap.At(0))
	}
	for _, fl := range []float64{-1, 1, 2, math.NaN()} {
		f.Floor = fl
		if _, err := Draw(f); err == nil {
			t.Errorf("floor %v: no error", fl)
		}
	}
	if _, err := Draw(Figure{}); err == nil {
		t.Error("a figure without maps: no error")
	}
}

func ExampleNewLayout() {
	// A head of 128 calibration and 64 probe queries over 1984 prefix
	// positions: each map is 560 px wide (pooled) and 2 px a query high.
	l := NewLayout(192, 1984)
	fmt.Printf("%dx%d, maps %dx%d\n", l.W, l.H, l.Boxes[0].Map.W, l.Boxes[0].Map.H)
	// Output: 1920x618, maps 560x384
}
