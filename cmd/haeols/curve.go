package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

const curveUsage = `
Usage: haeols curve [-methods all] [-ratios 0.05,0.1,...,1] [-layer L] [-head H] [-o curve.png] [FILE]

Plots err (the mean relative output error on the held-out probe queries;
the lost attention mass on an attention-only sample) against the
compression ratio, one line with points per method: by default
the model-level mean over all heads; -layer and/or -head restrict it to
those heads (one head when both are given). The y axis is logarithmic when
the errors span more than a factor of 10 (-y auto; or -y log, -y linear); on
a log axis, points with err 0 (a lossless cache, e.g. at ratio 1) cannot be
drawn and are left out. A method that cannot fit a ratio at all has no
point there. HAE-OLS is the thick black line; its ablations are dashed.

Example:
  haeols curve -methods hae-ols,topk,snapkv,streaming -o curve.png samples/default.safetensors
`

// defaultCurveRatios is 0.05, 0.1, ..., 1.
const defaultCurveRatios = "0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1"

// methodStyle is a method's line colour, dash pattern, width and glyph.
type methodStyle struct {
	color  color.RGBA
	dashed bool
	width  vg.Length
	glyph  draw.GlyphDrawer
}

var methodStyles = map[string]methodStyle{
	"hae-ols":   {color.RGBA{0x00, 0x00, 0x00, 255}, false, 3, draw.CircleGlyph{}},
	"hae-nosvd": {color.RGBA{0x88, 0x88, 0x88, 255}, true, 2, draw.RingGlyph{}},
	"hae-merge": {color.RGBA{0xCC, 0x79, 0xA7, 255}, true, 2, draw.PlusGlyph{}},
	"entropy":   {color.RGBA{0x56, 0xB4, 0xE9, 255}, true, 2, draw.CrossGlyph{}},
	"topk":      {color.RGBA{0xD5, 0x5E, 0x00, 255}, false, 2, draw.BoxGlyph{}},
	"snapkv":    {color.RGBA{0xE6, 0x9F, 0x00, 255}, false, 2, draw.TriangleGlyph{}},
	"streaming": {color.RGBA{0x00, 0x72, 0xB2, 255}, false, 2, draw.PyramidGlyph{}},
	"lowrank":   {color.RGBA{0x00, 0x9E, 0x73, 255}, false, 2, draw.SquareGlyph{}},
	"quant":     {color.RGBA{0xA6, 0x76, 0x1D, 255}, false, 2, draw.CircleGlyph{}},
	"full":      {color.RGBA{0x44, 0x44, 0x44, 255}, true, 1, draw.RingGlyph{}},
}

func styleOf(method string) methodStyle {
	if s, ok := methodStyles[method]; ok {
		return s
	}
	return methodStyle{color.RGBA{0x55, 0x55, 0x55, 255}, true, 1.5, draw.RingGlyph{}}
}

// logTicks are the ticks of a log10 axis drawn as a linear axis of
// log10(y) (gonum/plot's LogScale places the axis label by the linear
// midpoint, which squeezes the plot): minor ticks at 1..9 x 10^k, labels at
// the decades and, when the axis spans less than three decades, also at 2
// and 5 x 10^k.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	few := hi-lo < 3
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		d := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := math.Log10(float64(m) * d)
			if v < lo-1e-9 || v > hi+1e-9 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (few && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(float64(m)*d, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

func cmdCurve(e *env, args []string) error {
	fs := newFlags("curve")
	methodsFlag := fs.String("methods", "all", methodsHelp())
	ratiosFlag := fs.String("ratios", defaultCurveRatios, "comma-separated compression ratios in (0, 1]")
	layer := fs.Int("layer", -1, "only this layer (-1: all)")
	head := fs.Int("head", -1, "only this query head (-1: all)")
	out := fs.String("o", "curve.png", "output PNG file (- for standard output)")
	yscale := fs.String("y", "auto", "y axis: auto, log or linear")
	workers := fs.Int("workers", 0, "goroutines (0: all CPUs)")
	pf := addParamFlags(fs)
	pos, err := parse(e, fs, args, curveUsage, 1)
	if err != nil {
		return err
	}
	methods, err := parseMethods(*methodsFlag)
	if err != nil {
		return err
	}
	ratios, err := parseRatios("ratios", *ratiosFlag)
	if err != nil {
		return err
	}
	if _, err := pf.params(ratios[0]); err != nil {
		return err
	}
	if *yscale != "auto" && *yscale != "log" && *yscale != "linear" {
		return usagef("-y %q: want auto, log or linear", *yscale)
	}
	s, name, heads, m, err := openModel(e, pos, *layer, *head, *workers, pf)
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{name}, [2]string{"o", *out}); err != nil {
		return err
	}
	prog, endProg := progressBar(e, "curve")
	cells, err := evaluate(m, name, heads, ratios, methods, pf.params, *workers, prog)
	endProg()
	if err != nil {
		return err
	}
	var what string
	switch {
	case len(heads) == 1:
		what = fmt.Sprintf("layer %d, head %d", heads[0].l, heads[0].h)
	case *layer >= 0:
		what = fmt.Sprintf("mean over the %d heads of layer %d", len(heads), *layer)
	default:
		what = fmt.Sprintf("mean over %d heads", len(heads))
	}
	pngData, dropped, err := renderCurve(displayName(name)+": "+errName(metricOf(s))+" against memory ("+what+")", errName(metricOf(s)), ratios, methods, cells, *yscale)
	if err != nil {
		return fmt.Errorf("-o %s: %w", *out, err)
	}
	if dropped > 0 {
		fmt.Fprintf(e.stderr, "haeols: curve: %d point(s) with err 0 left out of the log axis\n", dropped)
	}
	err = writeOutput("o", *out, e.stdout, []string{name}, func(w io.Writer) error {
		_, err := w.Write(pngData)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.reportTo(*out), "wrote %s: %d methods x %d ratios, %s\n", quotePath(*out), len(methods), len(ratios), what)
	return nil
}

// Curve image geometry.
const (
	curveW, curveH = 10 * vg.Inch, 6 * vg.Inch
	curveLegendW   = 1.7 * vg.Inch
	curveDPI       = 160 // 1600 x 960 pixels
)

// renderCurve draws the plot with the legend to its right and encodes it as
// PNG; dropped counts the points left out of a log axis.
func renderCurve(title, yname string, ratios []float64, methods []string, cells []cell, yscale string) ([]byte, int, error) {
	p, leg, dropped, err := curvePlot(title, yname, ratios, methods, cells, yscale)
	if err != nil {
		return nil, 0, err
	}
	c := vgimg.NewWith(vgimg.UseWH(curveW, curveH), vgimg.UseDPI(curveDPI), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -curveLegendW, 0, 0))
	titleH := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	lc := draw.Crop(dc, curveW-curveLegendW+vg.Points(8), 0, 0, -titleH-vg.Points(6))
	leg.Draw(lc)
	if dropped > 0 {
		// A note under the legend: where the err-0 points went.
		sty := leg.TextStyle
		sty.Font.Size = 11
		sty.Color = color.RGBA{0x55, 0x55, 0x55, 255}
		y := leg.Rectangle(lc).Min.Y - vg.Points(18)
		for _, line := range []string{"err 0 (lossless, e.g.", "at ratio 1) is not", "drawn on a log axis"} {
			lc.FillText(sty, vg.Point{X: lc.Min.X, Y: y}, line)
			y -= vg.Points(14)
		}
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, 0, fmt.Errorf("encoding PNG: %w", err)
	}
	return b.Bytes(), dropped, nil
}

// curvePlot builds the plot and, separately, its legend; yname is what err
// measures (errName); dropped counts points left out of a log axis.
func curvePlot(title, yname string, ratios []float64, methods []string, cells []cell, yscale string) (*plot.Plot, plot.Legend, int, error) {
	// y range over the drawable points.
	lo, hi := math.Inf(1), 0.0
	for i := range cells {
		if y := cells[i].Mean(); y > 0 {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	logY := yscale == "log" || (yscale == "auto" && hi > 0 && hi/lo > 10)
	if logY && !(hi > 0) {
		return nil, plot.Legend{}, 0, fmt.Errorf("-y log: no error above 0 to draw")
	}

	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	p := plot.New()
	leg := plot.NewLegend()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 17
	p.Title.Padding = 10
	p.X.Label.Text = "compression ratio (memory kept / full cache)"
	p.Y.Label.Text = yname + " (held-out probes)"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 14
		a.Tick.Label.Font.Size = 12
	}
	leg.TextStyle.Font.Size = 13
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = 36
	leg.Padding = 3
	p.X.Min, p.X.Max = 0, 1
	p.X.Tick.Marker = plot.ConstantTicks(linearTicks())
	ymap := func(y float64) float64 { return y }
	if logY {
		ymap = math.Log10
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = math.Log10(lo/1.3), math.Log10(hi*1.3)
	} else {
		p.Y.Min, p.Y.Max = 0, max(hi*1.08, 1e-6)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.RGBA{0xDD, 0xDD, 0xDD, 255}
	grid.Horizontal.Color = color.RGBA{0xDD, 0xDD, 0xDD, 255}
	p.Add(grid)

	dropped := 0
	for mi, name := range methods {
		var pts plotter.XYs
		for ri, r := range ratios {
			y := cells[ri*len(methods)+mi].Mean()
			switch {
			case math.IsNaN(y): // does not fit
			case logY && y <= 0:
				dropped++
			default:
				pts = append(pts, plotter.XY{X: r, Y: ymap(y)})
			}
		}
		st := styleOf(name)
		label := name
		if len(pts) == 0 {
			label += " (no points)"
		}
		line, err := plotter.NewLine(pts)
		if err != nil && len(pts) > 0 {
			return nil, leg, 0, fmt.Errorf("%s: %w", name, err)
		}
		points, _ := plotter.NewScatter(pts)
		if line == nil {
			line = &plotter.Line{XYs: pts}
		}
		line.Color = st.color
		line.Width = st.width
		if st.dashed {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		if points == nil {
			points = &plotter.Scatter{XYs: pts}
		}
		points.GlyphStyle = draw.GlyphStyle{Color: st.color, Radius: vg.Points(3.2), Shape: st.glyph}
		if name == "hae-ols" {
			points.GlyphStyle.Radius = vg.Points(3.8)
		}
		if len(pts) > 0 {
			p.Add(line, points)
		}
		leg.Add(label, line, points)
	}
	return p, leg, dropped, nil
}

// linearTicks labels 0, 0.1, ..., 1 on the ratio axis.
func linearTicks() []plot.Tick {
	var t []plot.Tick
	for i := 0; i <= 10; i++ {
		v := float64(i) / 10
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return slices.Clip(t)
}
