package wire

import "math"

// The heatmap page's messages to its parent (the app page): plain
// JavaScript objects whose "type" is one of these, with the fields of the
// type of the same name (HeatmapDrawn for "heatmap-drawn", ...). Write sets
// a message's fields on an object; the Read functions read them back.
const (
	TypeHeatmapReady = "heatmap-ready" // once started
	TypeHeatmapDrawn = "heatmap-drawn" // after drawing a new maps message
	TypeHeatmapHover = "heatmap-hover" // when the hovered cell changes
	TypeHeatmapView  = "heatmap-view"  // when the visible cells change
	TypeHeatmapError = "heatmap-error" // when a message is rejected
)

// HeatmapType is the type of a heatmap page's message ("" when it has
// none).
func HeatmapType(f Fields) string { s, _ := f.String("type"); return s }

// HeatmapReady says the heatmap page's program runs.
type HeatmapReady struct{}

// Write sets the message's fields on o.
func (HeatmapReady) Write(o Setter) { o.Set("type", TypeHeatmapReady) }

// HeatmapDrawn says the heatmap page drew new maps: their size, ratio and
// Seq (Maps.Seq, or the show message's), and timings. DrawnAt, ArrivedAt
// (the message that made them drawable taken by the page's thread),
// PostedAt and RelayedAt (the worker's posting and the app page's passing
// on, 0 when not relayed) are performance.timeOrigin + now() in ms, a clock
// every page shares; the rest are ms spent on the page: decoding the maps,
// waiting for the frame, painting (of which PixelsMs the pixels). Ladder
// marks maps of a ladder step drawn for a show message; Prepared maps that
// were decoded and painted before it.
type HeatmapDrawn struct {
	Rows, Cols                              int
	Ratio                                   float64
	Seq                                     int
	DrawnAt, ArrivedAt, PostedAt, RelayedAt float64
	DecodeMs, WaitMs, PaintMs, PixelsMs     float64
	Ladder, Prepared                        bool
}

// Write sets the message's fields on o.
func (d HeatmapDrawn) Write(o Setter) {
	o.Set("type", TypeHeatmapDrawn)
	for k, v := range map[string]any{"rows": d.Rows, "cols": d.Cols, "ratio": d.Ratio, "seq": d.Seq,
		"drawn_at": d.DrawnAt, "arrived_at": d.ArrivedAt, "posted_at": d.PostedAt, "relayed_at": d.RelayedAt,
		"decode_ms": d.DecodeMs, "wait_ms": d.WaitMs, "paint_ms": d.PaintMs, "pixels_ms": d.PixelsMs,
		"ladder": d.Ladder, "prepared": d.Prepared} {
		o.Set(k, v)
	}
}

// ReadHeatmapDrawn reads a "heatmap-drawn" message (missing fields read as
// zero).
func ReadHeatmapDrawn(f Fields) HeatmapDrawn {
	num := func(k string) float64 { x, _ := f.Number(k); return x }
	return HeatmapDrawn{Rows: int(num("rows")), Cols: int(num("cols")), Ratio: num("ratio"), Seq: int(num("seq")),
		DrawnAt: num("drawn_at"), ArrivedAt: num("arrived_at"), PostedAt: num("posted_at"), RelayedAt: num("relayed_at"),
		DecodeMs: num("decode_ms"), WaitMs: num("wait_ms"), PaintMs: num("paint_ms"), PixelsMs: num("pixels_ms"),
		Ladder: f.Bool("ladder"), Prepared: f.Bool("prepared")}
}

// HeatmapHover is the hovered cell: its panel's name, Row and Col (Row -1
// on leaving; Row -1 with a Col: the strip) and the map's value there (NaN,
// null in the message, outside a map).
type HeatmapHover struct {
	Panel    string
	Row, Col int
	Value    float64
}

// Write sets the message's fields on o.
func (h HeatmapHover) Write(o Setter) {
	o.Set("type", TypeHeatmapHover)
	o.Set("panel", h.Panel)
	o.Set("row", h.Row)
	o.Set("col", h.Col)
	if math.IsNaN(h.Value) {
		o.Set("value", nil)
	} else {
		o.Set("value", h.Value)
	}
}

// ReadHeatmapHover reads a "heatmap-hover" message.
func ReadHeatmapHover(f Fields) HeatmapHover {
	num := func(k string) float64 { x, _ := f.Number(k); return x }
	h := HeatmapHover{Row: int(num("row")), Col: int(num("col")), Value: math.NaN()}
	h.Panel, _ = f.String("panel")
	if v, ok := f.Number("value"); ok {
		h.Value = v
	}
	return h
}

// HeatmapView is the part of the maps on screen: Rows x Cols cells, rows
// R0 to R0+RSpan and columns C0 to C0+CSpan (heatmap.View).
type HeatmapView struct {
	Rows, Cols           int
	R0, RSpan, C0, CSpan float64
}

// Write sets the message's fields on o.
func (v HeatmapView) Write(o Setter) {
	o.Set("type", TypeHeatmapView)
	for k, x := range map[string]any{"rows": v.Rows, "cols": v.Cols, "r0": v.R0, "rspan": v.RSpan, "c0": v.C0, "cspan": v.CSpan} {
		o.Set(k, x)
	}
}

// HeatmapError says why a message was rejected; Missing, when set, is the
// key of an unchanging maps part the page does not hold (see the package
// comment).
type HeatmapError struct {
	Error, Missing string
}

// Write sets the message's fields on o.
func (e HeatmapError) Write(o Setter) {
	o.Set("type", TypeHeatmapError)
	o.Set("error", e.Error)
	if e.Missing != "" {
		o.Set("missing", e.Missing)
	}
}

// ReadHeatmapError reads a "heatmap-error" message.
func ReadHeatmapError(f Fields) HeatmapError {
	var e HeatmapError
	e.Error, _ = f.String("error")
	e.Missing, _ = f.String("missing")
	return e
}
