package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

// ErrScale maps held-out errors to [0, 1] on a log scale for the grid's
// colours: Lo and below is 0, Hi and above is 1. It is fixed (not fitted to
// the data) so that a colour means the same error at every ratio.
type ErrScale struct{ Lo, Hi float64 }

// GridScale is the grid's colour scale: 0.1% to 1000% relative error.
var GridScale = ErrScale{Lo: 1e-3, Hi: 10}

// Pos is x's position on the scale, in [0, 1]; NaN stays NaN.
func (s ErrScale) Pos(x float64) float64 {
	if math.IsNaN(x) {
		return math.NaN()
	}
	if x <= s.Lo {
		return 0
	}
	p := math.Log(x/s.Lo) / math.Log(s.Hi/s.Lo)
	return min(p, 1)
}

// NAColor is the colour of a cell without a number (the method does not fit
// the ratio, or the cell is not computed yet).
const NAColor = "#d9d9d9"

var viridis = mustColormap("viridis")

func mustColormap(name string) *assets.Map {
	m, err := assets.Colormap(name)
	if err != nil {
		panic("ui: colormap " + name + ": " + err.Error())
	}
	return m
}

// Hex is the CSS colour of position p in [0, 1] of the viridis colormap.
func Hex(p float64) string {
	c := viridis.At(p)
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

// CellColor is the CSS colour of an error on the grid scale.
func CellColor(err result.Num) string {
	p := GridScale.Pos(float64(err))
	if math.IsNaN(p) {
		return NAColor
	}
	return Hex(p)
}

// TextColor is a readable text colour over CellColor(err).
func TextColor(err result.Num) string {
	p := GridScale.Pos(float64(err))
	if math.IsNaN(p) || p > 0.6 {
		return "#111"
	}
	return "#fff"
}

// Tick is a labelled position on a legend.
type Tick struct {
	Label string
	Pos   float64 // in [0, 1]
}

// LegendTicks are the decades of the grid scale.
func LegendTicks() []Tick {
	var ts []Tick
	for x := GridScale.Lo; x <= GridScale.Hi*1.0001; x *= 10 {
		ts = append(ts, Tick{Label: Fmt(result.Num(x)), Pos: GridScale.Pos(x)})
	}
	return ts
}

// LegendGradient is a CSS linear-gradient of the colormap, left to right.
func LegendGradient() string {
	const stops = 16
	parts := make([]string, stops+1)
	for i := range parts {
		p := float64(i) / stops
		parts[i] = fmt.Sprintf("%s %.1f%%", Hex(p), 100*p)
	}
	return "linear-gradient(to right, " + strings.Join(parts, ", ") + ")"
}

// Fmt formats a metric for people: 4 significant digits, "n/a" for NaN.
func Fmt(x result.Num) string {
	f := float64(x)
	switch {
	case math.IsNaN(f):
		return "n/a"
	case f == 0:
		return "0"
	case math.Abs(f) >= 1e4 || math.Abs(f) < 1e-3:
		return fmt.Sprintf("%.2e", f)
	}
	s := fmt.Sprintf("%.4g", f)
	return s
}

// Pct formats a share in [0, 1] as a percentage.
func Pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// Series colours for the compared methods in charts (colour-blind-safe
// Okabe-Ito palette); the primary method is drawn thicker.
var seriesColors = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// SeriesColor is the chart colour of the i-th compared method.
func SeriesColor(i int) string { return seriesColors[i%len(seriesColors)] }

// chart geometry shared by the SVG charts.
const (
	chartW, chartH              = 440, 200
	padL, padR, padT, padB      = 48, 12, 10, 30
	plotW, plotH                = chartW - padL - padR, chartH - padT - padB
	minLogErr, maxLogErrDefault = 1e-4, 1.0
)

// logRange is the [lo, hi] decade range covering the finite positive values.
func logRange(vals []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 1e-2, maxLogErrDefault
	}
	lo = math.Pow(10, math.Floor(math.Log10(max(lo, minLogErr))))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func logY(v, lo, hi float64) float64 {
	v = min(max(v, lo), hi)
	return padT + plotH*(1-math.Log(v/lo)/math.Log(hi/lo))
}

// yAxis adds the decade grid lines and labels of [lo, hi] and the axes.
func yAxis(c *svgChart, lo, hi float64) {
	for d := lo; d <= hi*1.0001; d *= 10 {
		y := logY(d, lo, hi)
		c.add("line", "", "", "x1", strconv.Itoa(padL), "x2", strconv.Itoa(padL+plotW), "y1", f1(y), "y2", f1(y), "stroke", "#e5e5e5")
		c.add("text", strconv.FormatFloat(d, 'g', 3, 64), "", "x", strconv.Itoa(padL-4), "y", f1(y+3), "text-anchor", "end", "font-size", "10", "fill", "#444")
	}
	c.add("line", "", "", "x1", strconv.Itoa(padL), "x2", strconv.Itoa(padL), "y1", strconv.Itoa(padT), "y2", strconv.Itoa(padT+plotH), "stroke", "#888", "stroke-width", "1")
	c.add("line", "", "", "x1", strconv.Itoa(padL), "x2", strconv.Itoa(padL+plotW), "y1", strconv.Itoa(padT+plotH), "y2", strconv.Itoa(padT+plotH), "stroke", "#888", "stroke-width", "1")
}

// xLabel adds a label centred under the plot.
func xLabel(c *svgChart, s string) {
	c.add("text", s, "", "x", strconv.Itoa(padL+plotW/2), "y", strconv.Itoa(chartH-4), "text-anchor", "middle", "font-size", "10", "fill", "#444")
}

// ProfileSVG is a bar chart of the per-probe-query error (log scale), with
// the probes that ask for a needle marked by a triangle under their bar.
func ProfileSVG(profile []float64, needleProbes []int) string {
	return profileChart(profile, needleProbes).HTML()
}

func profileChart(vals []float64, needleProbes []int) *svgChart {
	c := &svgChart{Label: "error of each held-out probe query"}
	lo, hi := logRange(vals)
	yAxis(c, lo, hi)
	n := len(vals)
	if n > 0 {
		bw := float64(plotW) / float64(n)
		for i, v := range vals {
			if math.IsNaN(v) || v <= 0 {
				continue
			}
			x := float64(padL) + float64(i)*bw
			y := logY(v, lo, hi)
			c.add("rect", "", "probe "+strconv.Itoa(i)+": "+Fmt(result.Num(v)),
				"x", f2(x+0.1*bw), "y", f2(y), "width", f2(max(0.8*bw, 0.5)), "height", f2(float64(padT+plotH)-y), "fill", Hex(GridScale.Pos(v)))
		}
		for _, p := range needleProbes {
			if p < 0 || p >= n {
				continue
			}
			x := float64(padL) + (float64(p)+0.5)*bw
			c.add("path", "", "probe "+strconv.Itoa(p)+" asks for a needle", "d", "M"+f1(x)+" "+strconv.Itoa(padT+plotH+1)+" l-4 7 h8 z", "fill", "#D55E00")
		}
	}
	xLabel(c, "probe query (held out, in order)")
	return c
}

// CurveSVG is error vs ratio (log error) for each method of c, the primary
// method drawn thicker and the current ratio marked by a vertical line. An
// error of exactly 0 (every token the head attends to kept) is drawn on
// the bottom edge, below every decade; a method that cannot run at a ratio
// (NaN) leaves a gap.
func CurveSVG(c *wire.Curve, ratio float64, primary string) string {
	return curveChart(c, ratio, primary).HTML()
}

func curveChart(c *wire.Curve, ratio float64, primary string) *svgChart {
	ch := &svgChart{Label: "error against compression ratio"}
	var vals []float64
	for _, row := range c.Err {
		for _, v := range row {
			vals = append(vals, float64(v))
		}
	}
	lo, hi := logRange(vals)
	yAxis(ch, lo, hi)
	rx := func(r float64) float64 { return float64(padL) + float64(plotW)*min(max(r, 0), 1) }
	for _, t := range []float64{0, 0.25, 0.5, 0.75, 1} {
		ch.add("text", strconv.FormatFloat(t, 'g', -1, 64), "", "x", f1(rx(t)), "y", strconv.Itoa(padT+plotH+12), "text-anchor", "middle", "font-size", "10", "fill", "#444")
	}
	xLabel(ch, "ratio (memory kept)")
	for mi, m := range c.Methods {
		if mi >= len(c.Err) {
			break
		}
		w := 1.5
		if m == primary {
			w = 3
		}
		var d strings.Builder
		pen := false
		for ri, r := range c.Ratios {
			if ri >= len(c.Err[mi]) {
				break
			}
			v := float64(c.Err[mi][ri])
			if math.IsNaN(v) || v < 0 {
				pen = false
				continue
			}
			v = max(v, lo) // 0 on the bottom edge
			cmd := "L"
			if !pen {
				cmd = "M"
			}
			d.WriteString(cmd + f1(rx(r)) + " " + f1(logY(v, lo, hi)) + " ")
			pen = true
		}
		ch.add("path", "", m, "d", d.String(), "fill", "none", "stroke", SeriesColor(mi), "stroke-width", strconv.FormatFloat(w, 'g', -1, 64))
	}
	x := rx(ratio)
	ch.add("line", "", "", "x1", f1(x), "x2", f1(x), "y1", strconv.Itoa(padT), "y2", strconv.Itoa(padT+plotH), "stroke", "#c00", "stroke-dasharray", "3 2")
	ch.add("text", fmt.Sprintf("%.2f", ratio), "", "x", f1(x+3), "y", strconv.Itoa(padT+9), "text-anchor", "start", "font-size", "10", "fill", "#c00")
	return ch
}

// CurveRatios are the ratios of the error-vs-ratio curves.
func CurveRatios() []float64 {
	return []float64{0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
}

// Explain tells, in plain sentences for a teacher, what each stage of the
// compression did to this head, with the head's own numbers. Sentences for
// stages the method does not have are left out.
func Explain(hr *wire.HeadResult, prefix int) []string {
	if hr == nil {
		return nil
	}
	if hr.NA != "" {
		return []string{fmt.Sprintf("%s cannot run at this ratio: %s.", hr.Method, hr.NA)}
	}
	st := hr.Stages
	var out []string
	kept := st.Sinks + st.Recent + st.Anchors
	if kept > 0 || st.Bin > 0 {
		s := fmt.Sprintf("Selection: of the %d cached tokens, %s kept exact: the first %d (attention sinks), the last %d (the recent window)",
			prefix, plural(kept, "token is", "tokens are"), st.Sinks, st.Recent)
		if st.Anchors > 0 {
			s += fmt.Sprintf(" and %s %s", plural(st.Anchors, "anchor", "anchors"), core.AnchorReason(hr.Method))
		}
		s += "."
		if st.Bin > 0 {
			s += fmt.Sprintf(" The other %s went to the recycle bin.", plural(st.Bin, "token", "tokens"))
		}
		out = append(out, s)
	}
	if fitted := st.Summaries + st.Dropped; fitted > 0 {
		s := fmt.Sprintf("Reconstruction: instead of deleting the bin, %s fitted by least squares so that the calibration queries see the bin's attention mass and values",
			plural(fitted, "summary token is", "summary tokens are"))
		if st.Bin > 0 {
			s += fmt.Sprintf(" (about %d bin tokens each)", (st.Bin+fitted-1)/fitted)
		}
		s += "."
		if st.Dropped > 0 {
			s += fmt.Sprintf(" %d of them got zero weight and %s dropped, leaving %d.", st.Dropped, isAre(st.Dropped), st.Summaries)
		}
		if !math.IsNaN(st.FitResidual) && st.FitResidual > 0 {
			s += fmt.Sprintf(" The fit leaves a relative residual of %s.", Pct(st.FitResidual))
		}
		out = append(out, s)
	}
	if st.Summaries > 0 {
		var s string
		switch {
		case st.RankK >= st.Summaries && st.RankV >= st.Summaries:
			s = fmt.Sprintf("Compression: the SVD keeps full rank (%d) here, so the summaries are stored without factoring (τ = 1 turns this stage off).", st.RankK)
		case st.RankK > 0 || st.RankV > 0:
			s = fmt.Sprintf("Compression: the summary keys are stored %s and the values %s.", rankText(st.RankK, st.EnergyK), rankText(st.RankV, st.EnergyV))
		default:
			s = "Compression: the summaries are stored dense (the SVD stage is off, or a factorization would not save memory)."
		}
		if st.ExtraAnchors > 0 {
			s += fmt.Sprintf(" The slots the summaries leave unused (dropped or factored) buy %s.", plural(st.ExtraAnchors, "more exact anchor", "more exact anchors"))
		}
		out = append(out, s)
	}
	if st.QuantBits > 0 {
		out = append(out, fmt.Sprintf("Quantization: older keys and values are stored with %d bits per number; the recent window stays at 16 bits.", st.QuantBits))
	}
	if st.LowRank > 0 {
		out = append(out, fmt.Sprintf("Low rank: the whole key and value matrices are stored at rank %d.", st.LowRank))
	}
	if hr.FullBits > 0 {
		used := st.ExactBits + st.SummaryBits
		s := fmt.Sprintf("Memory: the full cache of this head needs %s; the budget at this ratio is %s",
			bits(hr.FullBits), bits(hr.BudgetBits))
		switch {
		case st.SummaryBits > 0:
			s += fmt.Sprintf(", and %s used (%s exact tokens, %s summaries)", bits(used), bits(st.ExactBits), bits(st.SummaryBits))
		case used > 0:
			s += fmt.Sprintf(", and %s used", bits(used))
		}
		s += fmt.Sprintf(". The ratio actually used is %s.", Pct(hr.Metrics.Ratio))
		out = append(out, s)
	}
	out = append(out, fmt.Sprintf("Result: on the held-out probe queries the output error is %s on average and %s at worst (calibration queries: %s).",
		Pct(hr.Metrics.Err), Pct(hr.Metrics.ErrMax), Pct(hr.Metrics.ErrCal)))
	return out
}

func rankText(rank int, energy float64) string {
	if rank == 0 {
		return "dense"
	}
	return fmt.Sprintf("at SVD rank %d (keeping %s of their energy)", rank, Pct(energy))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func isAre(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// bits formats a bit count as bytes for people.
func bits(b int64) string {
	by := float64(b) / 8
	switch {
	case by >= 1<<20:
		return fmt.Sprintf("%.2f MiB", by/(1<<20))
	case by >= 1<<10:
		return fmt.Sprintf("%.1f KiB", by/(1<<10))
	}
	return fmt.Sprintf("%.0f bytes", by)
}
