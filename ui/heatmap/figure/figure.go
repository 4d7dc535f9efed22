// Package figure draws one head's attention heatmap as a figure that
// stands on its own, for a file: haeols heatmap's PNG.
//
// The maps, their token-class strips, needle marks and the calibration
// tick are painted by package heatmap's Renderer, the painter of the
// browser's heatmap, so the figure's map areas are pixel for pixel what the
// browser shows of the same head at the same size: one colormap, one
// scale, one pooling rule, one class table. Around them the figure draws
// what a picture in a blog post needs: a title, the panel titles, the
// prefix-position axis and the query blocks, a colour bar and the class
// legend, in anti-aliased Liberation Sans (gonum/plot's fonts; the browser
// draws its labels in a bitmap font instead, to keep its wasm small).
package figure

import (
	"errors"
	"fmt"
	"image"
	"math"
	"strconv"

	"github.com/haeols/haeols/ui/heatmap"
)

// Figure geometry, in pixels.
const (
	// MaxMapW and MaxMapH bound each panel's map; a smaller map is
	// enlarged by whole pixels per cell (see NewLayout).
	MaxMapW = 560
	MaxMapH = 420

	panelGap  = 28
	marginL   = 64
	marginR   = 120
	marginTop = 100
	needleH   = 6   // the needle band under a map
	stripH    = 14  // the class strip under the needle band
	belowMaps = 112 // from the strip's bottom to the figure's: axis, legend, note
	colorbarW = 22
)

// Figure is what a figure shows.
type Figure struct {
	// Data holds the head's maps, classes and needles: the three panels
	// (original, compressed, difference) are drawn from it.
	Data *heatmap.Data
	// Title and Subtitle are the two lines above the panels.
	Title, Subtitle string
	// NeedleProbes are the probe queries, by index among the probes, that
	// ask for a needle: a triangle marks their rows.
	NeedleProbes []int
	// Floor is the lowest attention the colour scale tells apart, in
	// (0, 1); 0 means heatmap.DefaultFloor.
	Floor float64
}

// mapSize is the pixels along an axis of n cells: n times the largest whole
// number of pixels per cell that fits in most, or most when n > most (a
// pixel then pools several cells).
func mapSize(n, most int) int {
	if n >= most {
		return most
	}
	return n * (most / n)
}

// NewLayout is the figure's layout for a rows x cols map: the canvas
// (W x H) and the three panels' boxes (their Title rectangles are the
// lines of the panel titles). Its Bar and Swatches are empty: the figure
// draws its own colour bar and legend (see Draw).
func NewLayout(rows, cols int) heatmap.Layout {
	mw, mh := mapSize(cols, MaxMapW), mapSize(rows, MaxMapH)
	l := heatmap.Layout{
		W: marginL + 3*mw + 2*panelGap + marginR,
		H: marginTop + mh + 2 + needleH + stripH + belowMaps,
		// The calibration tick's size follows the font (see
		// heatmap.Renderer).
		Font: heatmap.Font{W: 8, H: 16},
	}
	for i, k := range []heatmap.PanelKind{heatmap.PanelOrig, heatmap.PanelComp, heatmap.PanelDiff} {
		x := marginL + i*(mw+panelGap)
		b := heatmap.Box{Kind: k, Title: heatmap.Rect{X: x, Y: marginTop - 34, W: mw, H: 24}}
		b.Map = heatmap.Rect{X: x, Y: marginTop, W: mw, H: mh}
		// A pixel row for the map's frame, one of background, then the
		// needle band and the strip.
		b.Needles = heatmap.Rect{X: x, Y: b.Map.Y + mh + 2, W: mw, H: needleH}
		b.Strip = heatmap.Rect{X: x, Y: b.Needles.Y + needleH, W: mw, H: stripH}
		// The renderer marks the axis's ticks at its top; Draw numbers them.
		b.Axis = heatmap.Rect{X: x, Y: b.Strip.Y + stripH + 1, W: mw, H: 44}
		l.Boxes = append(l.Boxes, b)
	}
	return l
}

// Draw draws the figure.
func Draw(f Figure) (*image.RGBA, error) {
	d := f.Data
	if d == nil {
		return nil, errors.New("figure: no maps to draw")
	}
	floor := f.Floor
	if floor == 0 {
		floor = heatmap.DefaultFloor
	}
	scale, err := heatmap.NewScale(floor, 1)
	if err != nil {
		return nil, fmt.Errorf("figure: %w", err)
	}
	colors, err := heatmap.NewColors(scale, heatmap.Colormap)
	if err != nil {
		return nil, fmt.Errorf("figure: %w", err)
	}
	m := d.Maps
	l := NewLayout(m.Rows, m.Cols)
	img := image.NewRGBA(image.Rect(0, 0, l.W, l.H))
	r := &heatmap.Renderer{Colors: colors}
	r.Render(img, l, d, heatmap.NewView(m.Rows, m.Cols), nil)
	cv := newCanvas(img)
	ink, muted := heatmap.Ink, heatmap.Muted

	for _, b := range l.Boxes {
		mp := rect(b.Map)
		cv.frame(mp, ink)
		title := b.Kind.Title()
		if b.Kind == heatmap.PanelComp && m.Method != "" {
			title += ": " + m.Method
		}
		cv.text(mp.Min.X+mp.Dx()/2, b.Title.Y+b.Title.H-6, title, 17, true, alignCenter, ink)
		for _, pos := range m.Needles {
			x := mp.Min.X + heatmap.CellPixel(pos, b.Map.W, 0, float64(m.Cols))
			cv.triangle(x, mp.Min.Y-3, 7, 1, heatmap.NeedleMark)
		}
		// The numbers of the prefix-position axis's ticks (marked by the
		// renderer: the same ticks as in the browser).
		ty := b.Axis.Y + 21
		for _, t := range heatmap.AxisTicks(0, float64(m.Cols), heatmap.AxisTickCount) {
			x := mp.Min.X + heatmap.CellPixel(t, b.Map.W, 0, float64(m.Cols))
			cv.text(x, ty, strconv.Itoa(t), 13, false, alignCenter, muted)
		}
		cv.text(mp.Min.X+mp.Dx()/2, ty+19, "prefix position", 14, false, alignCenter, ink)
	}

	// The query blocks and needle probes, left of the first panel; the
	// probe rows start at the renderer's calibration tick.
	m0 := l.Boxes[0].Map
	split := m0.Y + int(math.Floor(float64(m.Calib)/float64(m.Rows)*float64(m0.H)))
	label := func(top, bot int, long, short string) {
		if bot-top < 8 {
			return
		}
		s := long
		if cv.textWidth(s, 14, false) > bot-top-4 {
			s = short
		}
		if cv.textWidth(s, 14, false) <= bot-top-4 {
			cv.textUp(m0.X-40, (top+bot)/2, s, 14, false, ink)
		} else {
			cv.text(m0.X-12, (top+bot)/2+5, short, 12, false, alignRight, ink)
		}
	}
	label(m0.Y, split, fmt.Sprintf("calibration queries (%d)", m.Calib), "calib.")
	label(split, m0.Y+m0.H, fmt.Sprintf("probe queries (%d)", m.Rows-m.Calib), "probes")
	for _, i := range f.NeedleProbes {
		if i >= 0 && i < m.Rows-m.Calib {
			y := m0.Y + heatmap.CellPixel(m.Calib+i, m0.H, 0, float64(m.Rows))
			cv.triangle(m0.X-8, y, 8, 0, heatmap.NeedleMark)
		}
	}

	// The colour bar, right of the last panel: 1 at the top.
	bx := l.Boxes[2].Map.X + l.Boxes[2].Map.W + 28
	bar := image.Rect(bx, m0.Y, bx+colorbarW, m0.Y+m0.H)
	for y := bar.Min.Y; y < bar.Max.Y; y++ {
		t := 1 - float64(y-bar.Min.Y)/float64(max(bar.Dy()-1, 1))
		cv.fill(image.Rect(bar.Min.X, y, bar.Max.X, y+1), colors.AtT(t))
	}
	cv.frame(bar, ink)
	for _, tk := range scale.Ticks() {
		y := bar.Max.Y - 1 - int(math.Round(scale.T(tk)*float64(bar.Dy()-1)))
		cv.fill(image.Rect(bar.Max.X, y, bar.Max.X+5, y+1), ink)
		cv.text(bar.Max.X+8, y+5, heatmap.FormatTick(tk), 13, false, alignLeft, ink)
	}
	cv.text(bar.Min.X+colorbarW/2, marginTop-16, "attention", 14, true, alignCenter, ink)
	cv.text(bar.Min.X+colorbarW/2, bar.Max.Y+22, "log scale", 13, false, alignCenter, muted)

	cv.text(marginL, 28, f.Title, 20, true, alignLeft, ink)
	cv.text(marginL, 52, f.Subtitle, 15, false, alignLeft, muted)

	// The class legend (heatmap.Legend, as in the browser) and a note on
	// the colours.
	ly := l.H - 42
	x := marginL
	for _, e := range heatmap.Legend {
		p := heatmap.Rect{X: x, Y: ly - 12, W: 16, H: 14}
		e.Paint(img, p)
		if !e.Needle {
			cv.frame(rect(p), muted)
		}
		x += 22
		cv.text(x, ly, e.Name, 14, false, alignLeft, ink)
		x += cv.textWidth(e.Name, 14, false) + 18
	}
	note := fmt.Sprintf("Colour: %s on log10 attention from %s to 1, the same scale in all three panels.", heatmap.Colormap, heatmap.FormatTick(floor))
	if m.Cols > m0.W || m.Rows > m0.H {
		note += " A pixel shows the largest value of the cells it covers, its strip the rarest class among them."
	}
	cv.text(marginL, l.H-14, note, 13, false, alignLeft, muted)
	return img, nil
}

// rect is r as an image.Rectangle.
func rect(r heatmap.Rect) image.Rectangle { return image.Rect(r.X, r.Y, r.X+r.W, r.Y+r.H) }
