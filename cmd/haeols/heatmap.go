package main

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core"
)

const heatmapUsage = `
Usage: haeols heatmap [-layer 0] [-head 0] [-method hae-ols] [-ratio 0.3] [-o heatmap.png] [FILE]

Draws one query head's attention as a PNG with three panels side by side:
the original (full cache) attention, the compressed cache's attention (a
summary token's probability spread over its segment in proportion to
salience; an evicted token shows nothing), and |original - compressed|.
Rows are the head's calibration queries, then (below the white separator)
its held-out probe queries; columns are the prefix positions. On an
attention-only sample the original is the stored attention and the
compressed panel the kept tokens' probabilities renormalised per row; only
the methods that need no keys and values apply (entropy, topk, snapkv,
streaming, full).

Colour: viridis on a log10 scale of the attention probability, clipped below
at -floor (default 1e-4) and above at 1; all three panels share the scale
and the colour bar. Size: each panel is at most 560 x 420 pixels; when the
map is larger, prefix positions (and query rows, per block) are max-pooled
in groups, so a single sharp spike such as a needle stays visible; a
smaller map is enlarged by whole pixels. The strip under each panel shows
what the method did with each prefix position (sink, recent, anchor,
summarized in alternating shades by segment, evicted, approximate), the
majority class of a pooled group; black triangles mark needles and the
probe queries that ask for one.

Example:
  haeols heatmap -layer 1 -head 3 -method topk -ratio 0.2 -o topk.png samples/default.safetensors
`

// Heatmap geometry, in pixels.
const (
	maxPanelW  = 560
	maxPanelH  = 420
	blockGap   = 4 // between the calibration and probe blocks
	panelGap   = 28
	marginL    = 64
	marginR    = 120
	marginTop  = 100
	stripH     = 14
	marginBot  = 132
	colorbarW  = 22
	defaultLog = 1e-4
)

// heatLayout is the geometry of a heatmap for a map of rows x cols with
// calib calibration rows.
type heatLayout struct {
	cf, rf         int // prefix positions and query rows per pooled cell
	nbC            int // pooled columns
	nbCal, nbProbe int // pooled calibration and probe rows
	sx, sy         int // pixels per pooled cell
	panelW, panelH int
	W, H           int // whole image
}

func newHeatLayout(rows, calib, cols int) heatLayout {
	var l heatLayout
	l.cf = (cols + maxPanelW - 1) / maxPanelW
	l.nbC = (cols + l.cf - 1) / l.cf
	l.sx = max(1, maxPanelW/l.nbC)
	probes := rows - calib
	h := maxPanelH - blockGap
	l.rf = (rows + h - 1) / h
	l.nbCal = (calib + l.rf - 1) / l.rf
	l.nbProbe = (probes + l.rf - 1) / l.rf
	for l.nbCal+l.nbProbe > h { // rounding up both blocks can overshoot
		l.rf++
		l.nbCal = (calib + l.rf - 1) / l.rf
		l.nbProbe = (probes + l.rf - 1) / l.rf
	}
	l.sy = max(1, h/(l.nbCal+l.nbProbe))
	l.panelW = l.nbC * l.sx
	l.panelH = (l.nbCal+l.nbProbe)*l.sy + blockGap
	l.W = marginL + 3*l.panelW + 2*panelGap + marginR
	l.H = marginTop + l.panelH + marginBot
	return l
}

// panel is the rectangle of panel i (0, 1, 2).
func (l heatLayout) panel(i int) image.Rectangle {
	x := marginL + i*(l.panelW+panelGap)
	return image.Rect(x, marginTop, x+l.panelW, marginTop+l.panelH)
}

// rowY is the top pixel of pooled row r (calibration rows first).
func (l heatLayout) rowY(r int) int {
	y := marginTop + r*l.sy
	if r >= l.nbCal {
		y += blockGap
	}
	return y
}

// pool max-pools rows [r0, r1) of the rows x cols map into
// ceil((r1-r0)/rf) x ceil(cols/cf) cells.
func pool(x []float32, cols, r0, r1, rf, cf int) [][]float32 {
	nr, nc := (r1-r0+rf-1)/rf, (cols+cf-1)/cf
	out := make([][]float32, nr)
	for i := range out {
		out[i] = make([]float32, nc)
	}
	for r := r0; r < r1; r++ {
		o := out[(r-r0)/rf]
		row := x[r*cols : (r+1)*cols]
		for j, v := range row {
			o[j/cf] = max(o[j/cf], v)
		}
	}
	return out
}

// logScale maps attention in [lo, 1] to [0, 1] by log10.
type logScale struct{ lo float64 }

func (s logScale) at(v float64) float64 {
	if !(v > s.lo) {
		return 0
	}
	return min(1, (math.Log10(v)-math.Log10(s.lo))/-math.Log10(s.lo))
}

// Class colours: the Okabe-Ito palette (colour-blind safe).
var classColors = map[core.Class]color.RGBA{
	core.Sink:       {0xD5, 0x5E, 0x00, 255}, // vermillion
	core.Recent:     {0x00, 0x72, 0xB2, 255}, // blue
	core.Anchor:     {0x00, 0x9E, 0x73, 255}, // bluish green
	core.Summarized: {0xE6, 0x9F, 0x00, 255}, // orange
	core.Approx:     {0xCC, 0x79, 0xA7, 255}, // reddish purple
	core.Evicted:    {0xDD, 0xDD, 0xDD, 255}, // light grey
}

// summarizedAlt is the shade of odd-numbered summary segments.
var summarizedAlt = color.RGBA{0xF0, 0xE4, 0x42, 255} // yellow

var (
	ink   = color.RGBA{0x20, 0x20, 0x20, 255}
	muted = color.RGBA{0x60, 0x60, 0x60, 255}
)

// classPriority breaks majority ties: the rarer, more telling class wins.
var classPriority = map[core.Class]int{core.Sink: 5, core.Anchor: 4, core.Recent: 3, core.Summarized: 2, core.Approx: 1, core.Evicted: 0}

// stripColors returns the colour of each pooled column: the majority class
// of its positions (ties to the higher classPriority), summarized in
// alternating shades by segment.
func stripColors(c *core.Cache, cf int) []color.RGBA {
	n := len(c.Class)
	out := make([]color.RGBA, (n+cf-1)/cf)
	for b := range out {
		count := map[core.Class]int{}
		seg := int32(-1)
		for j := b * cf; j < min(n, (b+1)*cf); j++ {
			count[c.Class[j]]++
			if c.Class[j] == core.Summarized && seg < 0 && j < len(c.Segment) {
				seg = c.Segment[j]
			}
		}
		best, bestN := core.Evicted, -1
		for cl, k := range count {
			if k > bestN || (k == bestN && classPriority[cl] > classPriority[best]) {
				best, bestN = cl, k
			}
		}
		out[b] = classColors[best]
		if best == core.Summarized && seg%2 == 1 {
			out[b] = summarizedAlt
		}
	}
	return out
}

// heatmapInput is everything drawn in a heatmap.
type heatmapInput struct {
	Sample       string
	Layer, Head  int
	Method       string
	Metrics      core.Metrics
	Cache        *core.Cache
	Maps         *core.AttentionMaps
	Needles      []int // prefix positions
	NeedleProbes []int // probe indices
	Floor        float64
}

// renderHeatmap draws the three-panel heatmap.
func renderHeatmap(in heatmapInput) (*image.RGBA, error) {
	cmap, err := assets.Colormap("viridis")
	if err != nil {
		return nil, err
	}
	am := in.Maps
	if am.Rows <= am.Calib || am.Cols < 1 || len(am.Orig) != am.Rows*am.Cols || len(am.Comp) != am.Rows*am.Cols {
		return nil, fmt.Errorf("attention maps have a bad shape (%d rows, %d calibration, %d cols)", am.Rows, am.Calib, am.Cols)
	}
	l := newHeatLayout(am.Rows, am.Calib, am.Cols)
	cv := newCanvas(l.W, l.H)
	scale := logScale{in.Floor}

	diff := make([]float32, len(am.Orig))
	for i := range diff {
		diff[i] = float32(math.Abs(float64(am.Orig[i]) - float64(am.Comp[i])))
	}
	maps := [][]float32{am.Orig, am.Comp, diff}
	titles := []string{
		"original (full cache)",
		fmt.Sprintf("compressed: %s", in.Method),
		"|original \u2212 compressed|",
	}
	strip := stripColors(in.Cache, l.cf)
	for pi, x := range maps {
		pr := l.panel(pi)
		blocks := [][][]float32{
			pool(x, am.Cols, 0, am.Calib, l.rf, l.cf),
			pool(x, am.Cols, am.Calib, am.Rows, l.rf, l.cf),
		}
		r := 0
		for _, blk := range blocks {
			for _, row := range blk {
				y := l.rowY(r)
				for j, v := range row {
					x0 := pr.Min.X + j*l.sx
					cv.fill(image.Rect(x0, y, x0+l.sx, y+l.sy), cmap.At(scale.at(float64(v))))
				}
				r++
			}
		}
		cv.frame(pr, ink)
		cv.text(pr.Min.X+pr.Dx()/2, marginTop-16, titles[pi], 17, true, alignCenter, ink)

		// Class strip, needles and the position axis.
		sy := pr.Max.Y + 6
		for b, col := range strip {
			x0 := pr.Min.X + b*l.sx
			cv.fill(image.Rect(x0, sy, x0+l.sx, sy+stripH), col)
		}
		cv.frame(image.Rect(pr.Min.X, sy, pr.Max.X, sy+stripH), muted)
		for _, pos := range in.Needles {
			if pos >= 0 && pos < am.Cols {
				x := pr.Min.X + (pos/l.cf)*l.sx + l.sx/2
				cv.triangle(x, sy+stripH+2, 9, -1, ink)
				cv.triangle(x, pr.Min.Y-2, 7, 1, ink)
			}
		}
		ty := sy + stripH + 26
		for _, t := range niceTicks(am.Cols, 5) {
			x := pr.Min.X + (t/l.cf)*l.sx + l.sx/2
			cv.fill(image.Rect(x, sy+stripH+1, x+1, sy+stripH+5), muted)
			cv.text(x, ty, strconv.Itoa(t), 13, false, alignCenter, muted)
		}
		cv.text(pr.Min.X+pr.Dx()/2, ty+19, "prefix position", 14, false, alignCenter, ink)
	}

	// Row labels and needle probes, left of the first panel.
	p0 := l.panel(0)
	calTop, calBot := l.rowY(0), l.rowY(l.nbCal-1)+l.sy
	prTop, prBot := l.rowY(l.nbCal), l.rowY(l.nbCal+l.nbProbe-1)+l.sy
	label := func(top, bot int, long, short string) {
		s := long
		if cv.textWidth(s, 14, false) > bot-top-4 {
			s = short
		}
		if cv.textWidth(s, 14, false) <= bot-top-4 {
			cv.textUp(p0.Min.X-40, (top+bot)/2, s, 14, false, ink)
		} else {
			cv.text(p0.Min.X-12, (top+bot)/2+5, short, 12, false, alignRight, ink)
		}
	}
	label(calTop, calBot, fmt.Sprintf("calibration queries (%d)", am.Calib), "calib.")
	label(prTop, prBot, fmt.Sprintf("probe queries (%d)", am.Rows-am.Calib), "probes")
	for _, i := range in.NeedleProbes {
		if i >= 0 && i < am.Rows-am.Calib {
			y := l.rowY(l.nbCal+i/l.rf) + l.sy/2
			cv.triangle(p0.Min.X-4, y, 8, 0, ink)
		}
	}

	// Colour bar.
	bx := l.panel(2).Max.X + 28
	bar := image.Rect(bx, marginTop, bx+colorbarW, marginTop+l.panelH)
	for y := bar.Min.Y; y < bar.Max.Y; y++ {
		t := 1 - float64(y-bar.Min.Y)/float64(bar.Dy()-1)
		cv.fill(image.Rect(bar.Min.X, y, bar.Max.X, y+1), cmap.At(t))
	}
	cv.frame(bar, ink)
	decades := int(math.Round(-math.Log10(in.Floor)))
	for k := 0; k <= decades; k++ {
		v := math.Pow(10, -float64(k))
		if v < in.Floor*0.999 {
			break
		}
		y := bar.Max.Y - 1 - int(math.Round(scale.at(v)*float64(bar.Dy()-1)))
		cv.fill(image.Rect(bar.Max.X, y, bar.Max.X+5, y+1), ink)
		cv.text(bar.Max.X+8, y+5, strconv.FormatFloat(v, 'g', -1, 64), 13, false, alignLeft, ink)
	}
	cv.text(bar.Min.X+colorbarW/2, marginTop-16, "attention", 14, true, alignCenter, ink)
	cv.text(bar.Min.X+colorbarW/2, bar.Max.Y+22, "log scale", 13, false, alignCenter, muted)

	// Title.
	mt := in.Metrics
	title := fmt.Sprintf("%s \u00b7 layer %d, head %d \u00b7 %s at ratio %g (used %.3f)", in.Sample, in.Layer, in.Head, in.Method, mt.Asked, mt.Ratio)
	cv.text(marginL, 28, title, 20, true, alignLeft, ink)
	sub := fmt.Sprintf("held-out err %s (max %s, p95 %s) \u00b7 calibration err %s \u00b7 cos %s", fmtFloat(mt.Err), fmtFloat(mt.ErrMax), fmtFloat(mt.ErrP95), fmtFloat(mt.ErrCal), fmtFloat(mt.Cos))
	if mt.Metric == core.MetricLostMass {
		sub = fmt.Sprintf("attention only \u00b7 held-out lost attention mass %s (max %s, p95 %s) \u00b7 calibration %s", fmtFloat(mt.Err), fmtFloat(mt.ErrMax), fmtFloat(mt.ErrP95), fmtFloat(mt.ErrCal))
	}
	if !math.IsNaN(mt.NeedleErr) {
		sub += " \u00b7 needle " + errName(mt.Metric) + " " + fmtFloat(mt.NeedleErr)
	}
	st := in.Cache.Stages
	sub += fmt.Sprintf(" \u00b7 kept exact: %d sinks, %d recent, %d anchors", st.Sinks, st.Recent, st.Anchors)
	if st.Summaries > 0 {
		sub += fmt.Sprintf(", %d summaries of %d tokens", st.Summaries, st.Bin)
	}
	cv.text(marginL, 52, sub, 15, false, alignLeft, muted)

	// Legend.
	ly := l.H - 42
	x := marginL
	item := func(col color.RGBA, name string) {
		r := image.Rect(x, ly-12, x+16, ly+2)
		cv.fill(r, col)
		cv.frame(r, muted)
		x += 22
		cv.text(x, ly, name, 14, false, alignLeft, ink)
		x += cv.textWidth(name, 14, false) + 18
	}
	item(classColors[core.Sink], "sink")
	item(classColors[core.Recent], "recent")
	item(classColors[core.Anchor], "anchor (kept exact)")
	r := image.Rect(x, ly-12, x+8, ly+2)
	cv.fill(r, classColors[core.Summarized])
	cv.fill(image.Rect(x+8, ly-12, x+16, ly+2), summarizedAlt)
	cv.frame(image.Rect(x, ly-12, x+16, ly+2), muted)
	x += 22
	cv.text(x, ly, "summarized (by segment)", 14, false, alignLeft, ink)
	x += cv.textWidth("summarized (by segment)", 14, false) + 18
	item(classColors[core.Approx], "approximate")
	item(classColors[core.Evicted], "evicted")
	cv.triangle(x+7, ly-12, 11, -1, ink)
	x += 22
	cv.text(x, ly, "needle", 14, false, alignLeft, ink)
	note := fmt.Sprintf("Colour: viridis on log10 attention, clipped below at %g; all three panels share the scale.", in.Floor)
	if l.cf > 1 || l.rf > 1 {
		note += fmt.Sprintf(" Each cell is the maximum over %d prefix position(s) x %d query row(s).", l.cf, l.rf)
	}
	cv.text(marginL, l.H-14, note, 13, false, alignLeft, muted)
	return cv.img, nil
}

func cmdHeatmap(e *env, args []string) error {
	fs := newFlags("heatmap")
	layer := fs.Int("layer", 0, "layer")
	head := fs.Int("head", 0, "query head")
	method := fs.String("method", "hae-ols", "method: "+strings.Join(core.MethodNames(), ", "))
	ratio := fs.Float64("ratio", 0.3, "compression ratio in (0, 1]")
	out := fs.String("o", "heatmap.png", "output PNG file (- for standard output)")
	floor := fs.Float64("floor", defaultLog, "lowest attention shown, in (0, 0.1]: the colour scale is log10 from it to 1")
	pf := addParamFlags(fs)
	pos, err := parse(e, fs, args, heatmapUsage, 1)
	if err != nil {
		return err
	}
	if err := checkRatio("ratio", *ratio); err != nil {
		return err
	}
	if _, err := core.Lookup(*method); err != nil {
		return usagef("-method: unknown method %q (valid: %s)", *method, strings.Join(core.MethodNames(), ", "))
	}
	if !(*floor > 0 && *floor <= 0.1) {
		return usagef("-floor %v outside (0, 0.1]", *floor)
	}
	p, err := pf.params(*ratio)
	if err != nil {
		return err
	}
	s, name, err := loadSample(e, pos)
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{name}, [2]string{"o", *out}); err != nil {
		return err
	}
	if _, err := selectHeads(s, *layer, *head, name); err != nil || *layer < 0 || *head < 0 {
		if err == nil {
			err = usagef("-layer %d / -head %d: want one head (layers 0..%d, heads 0..%d)", *layer, *head, s.L-1, s.H-1)
		}
		return err
	}
	m, err := newModel(s, name, *pf.maxMem)
	if err != nil {
		return err
	}
	g, hi, err := m.Head(*layer, *head)
	if err != nil {
		return fmt.Errorf("%s: %w", quotePath(name), err)
	}
	mt, cache, err := m.Run(*method, p, *layer, *head)
	if errors.Is(err, core.ErrDoesNotFit) {
		return usagef("-ratio %g: %s cannot fit it (%s)", *ratio, *method, naReason(err))
	}
	if errors.Is(err, core.ErrNeedsKV) {
		var ok []string
		for _, n := range core.MethodNames() {
			if _, err := g.Compress(n, p); err == nil {
				ok = append(ok, n)
			}
		}
		return usagef("-method %s needs q, k and v; %s holds attention only (methods that work on it: %s)", *method, name, strings.Join(ok, ", "))
	}
	if err == nil {
		err = mt.CheckFinite()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", quotePath(name), err)
	}
	img, err := renderHeatmap(heatmapInput{
		Sample: displayName(name), Layer: *layer, Head: *head, Method: *method, Metrics: mt, Cache: cache,
		Maps: g.Maps(cache, hi), Needles: g.Needles, NeedleProbes: g.NeedleProbes, Floor: *floor,
	})
	if err != nil {
		return err
	}
	err = writeOutput("o", *out, e.stdout, []string{name}, func(w io.Writer) error {
		if err := png.Encode(w, img); err != nil {
			return fmt.Errorf("encoding PNG: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.reportTo(*out), "wrote %s (%dx%d): layer %d head %d, %s at ratio %g, %s %s\n", quotePath(*out), img.Bounds().Dx(), img.Bounds().Dy(), *layer, *head, *method, *ratio, errName(mt.Metric), fmtFloat(mt.Err))
	return nil
}
