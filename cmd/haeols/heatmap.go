package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"strings"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/ui/heatmap"
	"github.com/haeols/haeols/ui/heatmap/figure"
	"github.com/haeols/haeols/wire"
)

const heatmapUsage = `
Usage: haeols heatmap [-layer 0] [-head 0] [-method hae-ols] [-ratio 0.3] [-o heatmap.png] [FILE]

Draws one query head's attention as a PNG with three panels side by side:
the original (full cache) attention, the compressed cache's attention (a
summary token's probability spread over its segment in proportion to
salience; an evicted token shows nothing), and |original - compressed|.
Rows are the head's calibration queries, then (from the tick left of the
first panel) its held-out probe queries; columns are the prefix positions.
On an attention-only sample the original is the stored attention and the
compressed panel the kept tokens' probabilities renormalised per row; only
the methods that need no keys and values apply (entropy, topk, snapkv,
streaming, full).

Colour: viridis on a log10 scale of the attention probability, clipped below
at -floor (default 1e-6) and above at 1; all three panels share the scale
and the colour bar. Size: each panel is at most 560 x 420 pixels; a smaller
map is enlarged by whole pixels per cell, a larger one max-pooled (a pixel
shows the largest value of the cells it covers), so a single sharp spike
such as a needle stays visible. Under each panel, vermillion marks the needles
(triangles above the panels too, and left of the probe queries that ask for
one) and the strip shows what the method did with each prefix position:
sink, recent, anchor, summarized (two shades alternating by segment),
approximate or evicted; a pixel covering several positions shows the rarest
class among them (anchor, sink, recent, approximate, summarized, evicted).
The maps, strips and colours are those of the browser's heatmap (package
ui/heatmap draws both).

Example:
  haeols heatmap -layer 1 -head 3 -method topk -ratio 0.2 -o topk.png samples/default.safetensors
`

// headFigure is the figure of one head's maps: the title names the sample,
// the head, the method and its ratio, the subtitle its metrics and what it
// kept.
func headFigure(sample string, layer, head int, method string, mt core.Metrics, c *core.Cache, g *core.Group, am *core.AttentionMaps, floor float64) (figure.Figure, error) {
	if am.Rows <= am.Calib || am.Cols < 1 || len(c.Class) != am.Cols {
		return figure.Figure{}, fmt.Errorf("attention maps have a bad shape (%d rows, %d calibration, %d cols, %d classes)", am.Rows, am.Calib, am.Cols, len(c.Class))
	}
	d, err := heatmap.NewData(wire.Maps{Method: method, Ratio: mt.Ratio, Rows: am.Rows, Cols: am.Cols, Calib: am.Calib, Needles: g.Needles},
		am.Orig, am.Comp, nil, classBytes(c.Class), segmentBytes(c.Segment))
	if err != nil {
		return figure.Figure{}, err
	}
	title := fmt.Sprintf("%s \u00b7 layer %d, head %d \u00b7 %s at ratio %g (used %.3f)", sample, layer, head, method, mt.Asked, mt.Ratio)
	sub := fmt.Sprintf("held-out err %s (max %s, p95 %s) \u00b7 calibration err %s \u00b7 cos %s", fmtFloat(mt.Err), fmtFloat(mt.ErrMax), fmtFloat(mt.ErrP95), fmtFloat(mt.ErrCal), fmtFloat(mt.Cos))
	if mt.Metric == core.MetricLostMass {
		sub = fmt.Sprintf("attention only \u00b7 held-out lost attention mass %s (max %s, p95 %s) \u00b7 calibration %s", fmtFloat(mt.Err), fmtFloat(mt.ErrMax), fmtFloat(mt.ErrP95), fmtFloat(mt.ErrCal))
	}
	if !math.IsNaN(mt.NeedleErr) {
		sub += " \u00b7 needle " + errName(mt.Metric) + " " + fmtFloat(mt.NeedleErr)
	}
	st := c.Stages
	sub += fmt.Sprintf(" \u00b7 kept exact: %d sinks, %d recent, %d anchors", st.Sinks, st.Recent, st.Anchors)
	if st.Summaries > 0 {
		sub += fmt.Sprintf(", %d summaries of %d tokens", st.Summaries, st.Bin)
	}
	return figure.Figure{Data: d, Title: title, Subtitle: sub, NeedleProbes: g.NeedleProbes, Floor: floor}, nil
}

// classBytes is the maps message's "classes" buffer: one byte per prefix
// position (heatmap.Class numbers classes as core does).
func classBytes(cl []core.Class) []byte {
	b := make([]byte, len(cl))
	for i, c := range cl {
		b[i] = byte(c)
	}
	return b
}

// segmentBytes is the maps message's "segments" buffer: little-endian
// int32 per prefix position; nil when there are none.
func segmentBytes(seg []int32) []byte {
	if len(seg) == 0 {
		return nil
	}
	b := make([]byte, 4*len(seg))
	for i, s := range seg {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(s))
	}
	return b
}

func cmdHeatmap(e *env, args []string) error {
	fs := newFlags("heatmap")
	layer := fs.Int("layer", 0, "layer")
	head := fs.Int("head", 0, "query head")
	method := fs.String("method", "hae-ols", "method: "+strings.Join(core.MethodNames(), ", "))
	ratio := fs.Float64("ratio", core.DefaultRatio, "compression ratio in (0, 1]")
	out := fs.String("o", "heatmap.png", "output PNG file (- for standard output)")
	floor := fs.Float64("floor", heatmap.DefaultFloor, "lowest attention shown, in (0, 0.1]: the colour scale is log10 from it to 1")
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
	fig, err := headFigure(displayName(name), *layer, *head, *method, mt, cache, g, g.Maps(cache, hi), *floor)
	if err != nil {
		return fmt.Errorf("%s: %w", quotePath(name), err)
	}
	img, err := figure.Draw(fig)
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
