package main

import (
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/ui/heatmap"
	"github.com/haeols/haeols/ui/heatmap/figure"
	"github.com/haeols/haeols/wire"
)

func TestHeatmap(t *testing.T) {
	p := tinyFile(t)
	out := filepath.Join(t.TempDir(), "h.png")
	code, stdout, stderr := cli(t, "heatmap", "-layer", "0", "-head", "1", "-method", "topk", "-ratio", "0.5", "-o", out, p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("stdout %q", stdout)
	}
	img := decodePNG(t, out)
	// tiny: 28 calibration + 8 probe rows, 56 prefix positions, so each
	// position is 10 px wide (560 px maps) and each row 11 px high (396
	// px maps); 64 + 3*560 + 2*28 + 120 = 1920 wide, 100 + 396 + 2 + 6
	// (needles) + 14 (strip) + 112 = 630 high.
	if b := img.Bounds(); b.Dx() != 1920 || b.Dy() != 630 {
		t.Fatalf("size %v, want 1920x630", b.Size())
	}
	l := figure.NewLayout(36, 56)
	cmap, _ := assets.Colormap(heatmap.Colormap)
	rgba := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	// The colour bar runs from the colormap's top at the top to its floor.
	m := l.Boxes[2].Map
	bx := m.X + m.W + 28 + 11
	if got := rgba(bx, m.Y); got != cmap.At(1) {
		t.Errorf("colour bar top %v, want %v", got, cmap.At(1))
	}
	if got := rgba(bx, m.Y+m.H-1); got != cmap.At(0) {
		t.Errorf("colour bar bottom %v, want %v", got, cmap.At(0))
	}
}

// TestHeatmapMatchesBrowser renders heads both ways: haeols heatmap's PNG,
// and the browser's painting (heatmap.Decode of the maps message's
// buffers, heatmap.NewLayout of each panel on a canvas whose map comes out
// the PNG's size, heatmap.Renderer.Render), and compares their map areas,
// needle bands and class strips pixel for pixel. The tiny sample's maps are enlarged (10 x
// 11 px a cell), the needle sample's pooled (1984 positions on 560 px).
func TestHeatmapMatchesBrowser(t *testing.T) {
	tests := []struct {
		name, file  string
		layer, head int
		method      string
	}{
		{"tiny", "", 0, 1, "hae-ols"},
		{"needle", filepath.Join("..", "..", "samples", "needle.safetensors"), 1, 3, "hae-ols"},
		{"needle-topk", filepath.Join("..", "..", "samples", "needle.safetensors"), 0, 0, "topk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = tinyFile(t)
			}
			out := filepath.Join(t.TempDir(), "h.png")
			args := []string{"heatmap", "-layer", fmt.Sprint(tc.layer), "-head", fmt.Sprint(tc.head), "-method", tc.method, "-o", out, file}
			if code, _, stderr := cli(t, args...); code != 0 {
				t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
			}
			png := decodePNG(t, out)

			// The same head as the browser's worker sends it.
			s, name, err := loadSample(&env{cmd: "test"}, []string{file})
			if err != nil {
				t.Fatal(err)
			}
			m, err := newModel(s, name, 0)
			if err != nil {
				t.Fatal(err)
			}
			g, hi, err := m.Head(tc.layer, tc.head)
			if err != nil {
				t.Fatal(err)
			}
			_, cache, err := m.Run(tc.method, core.DefaultParams(0.3), tc.layer, tc.head)
			if err != nil {
				t.Fatal(err)
			}
			am := g.Maps(cache, hi)
			msg := wire.Maps{Rows: am.Rows, Cols: am.Cols, Calib: am.Calib, Needles: g.Needles, Panel: "all"}
			d, err := heatmap.Decode(msg, le32(am.Orig), le32(am.Comp), classBytes(cache.Class), segmentBytes(cache.Segment))
			if err != nil {
				t.Fatal(err)
			}
			fl := figure.NewLayout(am.Rows, am.Cols)
			r, err := heatmap.NewRenderer(heatmap.Colormap)
			if err != nil {
				t.Fatal(err)
			}
			for i, fb := range fl.Boxes {
				bl := browserLayout(t, fb.Kind, am.Rows, am.Cols, fb.Map.W, fb.Map.H)
				web := image.NewRGBA(image.Rect(0, 0, bl.W, bl.H))
				r.Render(web, bl, d, heatmap.NewView(am.Rows, am.Cols), nil)
				wb := bl.Boxes[0]
				for _, a := range []struct {
					what      string
					png, web  heatmap.Rect
					wantLines bool
				}{{"map", fb.Map, wb.Map, true}, {"needle band", fb.Needles, wb.Needles, false}, {"strip", fb.Strip, wb.Strip, true}} {
					if a.web.H < a.png.H {
						a.png.H = a.web.H // the browser's band and strip are thinner
					}
					if a.png.W != a.web.W || a.png.H != a.web.H {
						t.Fatalf("panel %d %s: PNG %dx%d, browser %dx%d", i, a.what, a.png.W, a.png.H, a.web.W, a.web.H)
					}
					colors := map[color.RGBA]bool{}
					bad := 0
					for y := range a.png.H {
						for x := range a.png.W {
							p := color.RGBAModel.Convert(png.At(a.png.X+x, a.png.Y+y)).(color.RGBA)
							w := web.RGBAAt(a.web.X+x, a.web.Y+y)
							colors[p] = true
							if p != w {
								if bad++; bad <= 3 {
									t.Errorf("panel %d %s pixel (%d, %d): PNG %v, browser %v", i, a.what, x, y, p, w)
								}
							}
						}
					}
					if bad > 0 {
						t.Errorf("panel %d %s: %d of %d pixels differ", i, a.what, bad, a.png.W*a.png.H)
					}
					if a.wantLines && len(colors) < 3 {
						t.Errorf("panel %d %s has %d colours: nothing drawn", i, a.what, len(colors))
					}
				}
			}
		})
	}
}

// browserLayout is the browser's layout (at its font, on its
// device-pixel canvas) of panel k alone on the canvas whose map is mw x
// mh. (With three panels, the browser stacks a long map's panels.)
func browserLayout(t *testing.T, k heatmap.PanelKind, rows, cols, mw, mh int) heatmap.Layout {
	t.Helper()
	f := heatmap.TextFont(1)
	w := mw + 2*(f.H/2) // NewLayout pads the canvas by half a line
	for h := mh; h < mh+400; h++ {
		l := heatmap.NewLayout(w, h, []heatmap.PanelKind{k}, rows, cols, f)
		if b := l.Boxes[0].Map; b.W == mw && b.H == mh {
			return l
		}
	}
	t.Fatalf("no browser canvas %d px wide has a %dx%d map", w, mw, mh)
	return heatmap.Layout{}
}

// le32 is a maps message's float buffer: little-endian float32.
func le32(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
