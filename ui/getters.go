package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

// The methods below feed root.vugu; they only read the state.

// Layers are the layer indices of the loaded sample.
func (c *Root) Layers() []int { return seq(c.Info, true) }

// HeadsList are the query head indices of the loaded sample.
func (c *Root) HeadsList() []int { return seq(c.Info, false) }

// sliderAttrs are a slider's min, max and step attributes.
type sliderAttrs struct{ Min, Max, Step string }

// Slider is the range of the slider of the parameter name (wire.Sliders)
// as the template renders it.
func (c *Root) Slider(name string) sliderAttrs {
	sl, _ := wire.SliderOf(name)
	return sliderAttrs{state.Fmt(sl.Min), state.Fmt(sl.Max), state.Fmt(sl.Step)}
}

func seq(in *wire.Info, layers bool) []int {
	if in == nil {
		return nil
	}
	n := in.Heads
	if layers {
		n = in.Layers
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// primaryGrid is the grid of the primary method (nil before any part).
func (c *Root) primaryGrid() *gridRes {
	if c.Info == nil {
		return nil
	}
	return c.grids[c.S.Method]
}

// CellStyle is a grid cell's inline style.
func (c *Root) CellStyle(l, h int) string {
	col := NAColor
	if g := c.primaryGrid(); g != nil {
		col = g.color[l*c.Info.Heads+h]
	}
	return "background:" + col
}

// CellClass marks the selected cell.
func (c *Root) CellClass(l, h int) string {
	if l == c.S.Layer && h == c.S.Head {
		return "cell selected"
	}
	return "cell"
}

// CellLabel is the short number printed in a cell.
func (c *Root) CellLabel(l, h int) string {
	if g := c.primaryGrid(); g != nil {
		if e := g.cells[l*c.Info.Heads+h].Err; !math.IsNaN(e) {
			return Pct(e)
		}
	}
	return "…"
}

// CellText is the colour of a cell's label.
func (c *Root) CellText(l, h int) string {
	if g := c.primaryGrid(); g != nil {
		return "color:" + TextColor(result.Num(g.cells[l*c.Info.Heads+h].Err))
	}
	return ""
}

// GridNA says why the primary method has no grid at this ratio.
func (c *Root) GridNA() string {
	if g := c.primaryGrid(); g != nil {
		return g.na
	}
	return ""
}

// HoverLines are the readout of the cell under the pointer, or of the
// selected head.
func (c *Root) HoverLines() []string {
	if c.Info == nil {
		return nil
	}
	i := c.hover
	if i < 0 {
		i = c.S.Layer*c.Info.Heads + c.S.Head
	}
	l, h := i/c.Info.Heads, i%c.Info.Heads
	title := fmt.Sprintf("Layer %d, head %d (%s)", l, h, c.S.Method)
	g := c.primaryGrid()
	if g == nil || i >= len(g.cells) {
		return []string{title, "computing…"}
	}
	cell := g.cells[i]
	out := []string{title,
		"err " + Fmt(result.Num(cell.Err)) + " · err_max " + Fmt(result.Num(cell.ErrMax)),
		"needle_err " + Fmt(result.Num(cell.NeedleErr)) + " · row entropy " + Fmt(result.Num(cell.RowEntropy)),
	}
	return out
}

// summaryRow is one compared method in the model-level summary.
type summaryRow struct {
	Method, Mean, Swatch, Note string
	Primary                    bool
}

// Summary is the model-level mean error of each compared method at the
// current parameters (from the grid responses).
func (c *Root) Summary() []summaryRow {
	var out []summaryRow
	p := c.S.Params()
	for i, m := range c.S.Methods {
		r := summaryRow{Method: m, Mean: "…", Swatch: "background:" + SeriesColor(i), Primary: m == c.S.Method}
		if g := c.grids[m]; g != nil && g.params == p {
			switch {
			case g.na != "":
				r.Mean, r.Note = "n/a", g.na
			case g.done:
				r.Mean = Pct(float64(g.mean))
			}
		}
		out = append(out, r)
	}
	return out
}

// LegendStyle is the legend bar's background.
func (c *Root) LegendStyle() string { return "background:" + LegendGradient() }

// TickStyle places a legend tick.
func (c *Root) TickStyle(t Tick) string { return fmt.Sprintf("left:%.1f%%", 100*t.Pos) }

// chart returns the chart an element shows ("profile": the selected
// head's per-probe error, "curve": error vs ratio of the compared methods),
// nil for none yet.
func (c *Root) chart(which string) *svgChart {
	switch which {
	case "profile":
		if c.head == nil || c.head.NA != "" {
			return nil
		}
		var np []int
		if c.Info != nil {
			np = c.Info.NeedleProbes
		}
		return profileChart(c.head.Metrics.Profile, np)
	case "curve":
		if c.curve == nil {
			return nil
		}
		return curveChart(c.curve, c.S.Ratio, c.S.Method)
	}
	return nil
}

// chartKey is what a chart is made from.
type chartKey struct {
	head   *wire.HeadResult
	curve  *wire.Curve
	info   *wire.Info
	ratio  float64
	method string
}

// SyncHTML shows a chart in its element (a vg-js-populate callback, run on
// every render): not at all when it is unchanged, by changing the
// attributes and texts that differ when its shape is the same (a new
// profile, the curve's current-ratio marker), else by writing its SVG.
// vg-html would make the browser parse the SVG again on every render, and
// renders happen on every answer while a person scrubs.
func (c *Root) SyncHTML(el js.Value, which string) {
	const mark = "haeolsShown" // set on the element: a re-made element is empty
	shown := el.Get(mark).Truthy()
	// What the chart is made from: the same inputs make the same chart.
	key := chartKey{c.head, c.curve, c.Info, c.S.Ratio, c.S.Method}
	if which == "profile" {
		key.curve, key.ratio, key.method = nil, 0, ""
	} else {
		key.head = nil
	}
	if shown && c.shownKey[which] == key {
		return
	}
	ch := c.chart(which)
	if c.shownChart == nil {
		c.shownChart, c.shownKey = map[string]*svgChart{}, map[string]chartKey{}
	}
	c.shownKey[which] = key
	old := c.shownChart[which]
	switch {
	case shown && old == nil && ch == nil:
		return
	case shown && ch != nil && old != nil && ch.Patch(el, old):
	case ch == nil:
		el.Set("innerHTML", "")
	default:
		el.Set("innerHTML", ch.HTML())
	}
	c.shownChart[which] = ch
	el.Set(mark, true)
}

// CurveLegend lists the curve's methods with their colours.
func (c *Root) CurveLegend() []summaryRow {
	if c.curve == nil {
		return nil
	}
	var out []summaryRow
	for i, m := range c.curve.Methods {
		out = append(out, summaryRow{Method: m, Swatch: "background:" + SeriesColor(i), Primary: m == c.S.Method})
	}
	return out
}

// Explanation is the three stages in plain sentences.
func (c *Root) Explanation() []string {
	n := 0
	if c.Info != nil {
		n = c.Info.Prefix
	}
	return Explain(c.head, n)
}

// HeadTitle names the selected head and its numbers.
func (c *Root) HeadTitle() string {
	s := fmt.Sprintf("Layer %d, head %d — %s at ratio %s", c.S.Layer, c.S.Head, c.S.Method, state.Fmt(c.S.Ratio))
	if c.head != nil && c.head.NA == "" && c.S.Budget != wire.Budgets[0] && c.head.Metrics.Asked > 0 {
		s = fmt.Sprintf("Layer %d, head %d — %s, its %s share %s of ratio %s", c.S.Layer, c.S.Head, c.S.Method, c.S.Budget, Fmt2(c.head.Metrics.Asked), state.Fmt(c.S.Ratio))
	}
	if c.head != nil && c.head.NA == "" {
		s += " — err " + Pct(c.head.Metrics.Err)
	}
	return s
}

// Show is class, plus "hide" when show is false. Elements that come and go
// are hidden rather than left out, so that the elements after them keep
// their DOM nodes (the heatmap iframe must never be re-made).
func (c *Root) Show(show bool, class string) string {
	if show {
		return class
	}
	return class + " hide"
}

// Fmt2 formats a parameter for its slider label.
func Fmt2(x float64) string { return fmt.Sprintf("%.2f", x) }

// MethodDescribe is the one-sentence description of a method.
func (c *Root) MethodDescribe(m string) string {
	if c.Info != nil {
		for _, x := range c.Info.Methods {
			if x.Name == m {
				return x.Describe
			}
		}
	}
	return ""
}

// Methods are the methods the worker offers.
func (c *Root) Methods() []wire.Method {
	if c.Info == nil {
		return nil
	}
	return c.Info.Methods
}

// SampleInfo is one line about the loaded sample.
func (c *Root) SampleInfo() string {
	in := c.Info
	if in == nil {
		return ""
	}
	return fmt.Sprintf("%s — %s: %d layers × %d query heads (%d KV heads), %d cached tokens, head dim %d.",
		sampleLabel(c.S.Sample), in.Model, in.Layers, in.Heads, in.KVHeads, in.Prefix, in.Dim)
}

// ComputeNote says where the numbers are computed: the GPU adapter, or why
// the GPU is not used (nothing when the CPU was chosen).
func (c *Root) ComputeNote() string {
	cp := c.Compute
	switch {
	case c.S.Compute == "cpu" && (cp == nil || cp.Device == "cpu"):
		return ""
	case cp == nil && c.S.Compute == "auto":
		return "looking for a GPU…"
	case cp == nil:
		return "starting WebGPU…"
	case cp.Device == "gpu" && cp.Software:
		return "on " + cp.Adapter + " (a software adapter: the same numbers, slower than the CPU)"
	case cp.Device == "gpu":
		return "on " + cp.Adapter
	}
	return cp.Note
}

// ComputeNoteClass marks the note as a warning when the GPU was chosen and
// is not used.
func (c *Root) ComputeNoteClass() string {
	if c.S.Compute == "gpu" && c.Compute != nil && c.Compute.Note != "" {
		return "warn"
	}
	return ""
}

// SampleAbout is the loaded sample's description.
func (c *Root) SampleAbout() string {
	if c.Info == nil {
		return ""
	}
	return c.Info.Description
}

// IsLocal reports whether the view shows a local file (which a link cannot
// reopen).
func (c *Root) IsLocal() bool {
	return strings.HasPrefix(c.S.Sample, state.FilePrefix)
}

// Timing is the latest measured latencies, for the curious (and the tests).
func (c *Root) Timing() string {
	if c.headMS == 0 {
		return ""
	}
	s := fmt.Sprintf("head %.0f ms", c.headMS)
	if c.drawnMS > 0 {
		s += fmt.Sprintf(" · heatmap %.0f ms", c.drawnMS)
	}
	if c.gridMS > 0 {
		s += fmt.Sprintf(" · grid %.0f ms", c.gridMS)
		if c.gridWorkers > 1 {
			s += fmt.Sprintf(" on %d workers", c.gridWorkers)
		}
	}
	return s
}

// PanelClass marks the chosen panel button.
func (c *Root) PanelClass(p string) string {
	if p == c.S.Panel {
		return "seg on"
	}
	return "seg"
}

// Panels are the heatmap panels with labels.
func (c *Root) Panels() [][2]string {
	return [][2]string{{"all", "all three"}, {"orig", "original"}, {"comp", "compressed"}, {"diff", "difference"}}
}

// ProgressStyle is the progress bar's width.
func (c *Root) ProgressStyle() string { return fmt.Sprintf("width:%.0f%%", 100*c.Progress) }

// Busy reports whether a grid pass is running.
func (c *Root) Busy() bool { return c.gridMethod != "" }

// AppClass highlights the page while a file is dragged over it.
func (c *Root) AppClass() string {
	if c.dragOver {
		return "app dragging"
	}
	return "app"
}

// LineClass styles the readout's title line.
func (c *Root) LineClass(i int) string {
	if i == 0 {
		return "rtitle"
	}
	return "rline"
}

// RowClass marks the primary method's row.
func (c *Root) RowClass(primary bool) string {
	if primary {
		return "primary"
	}
	return ""
}

// CurveNote says when the curves are being computed.
func (c *Root) CurveNote() string {
	if c.curveWanted || c.curvePending {
		if c.curve == nil {
			return "computing…"
		}
		return "updating…"
	}
	return ""
}

// CellAria names a grid cell for screen readers.
func (c *Root) CellAria(l, h int) string {
	return fmt.Sprintf("layer %d, head %d: error %s", l, h, c.CellLabel(l, h))
}
