package heatmap

import "math"

// MinSpan is the fewest cells a view shows along an axis (fewer when the map
// itself is smaller): the deepest zoom.
const MinSpan = 4

// View is the visible part of a Rows x Cols map: rows [R0, R0+RSpan) and
// columns [C0, C0+CSpan), in fractional cells. All panels share one View so
// that their columns line up. Methods return a new, clamped View.
type View struct {
	Rows, Cols   int
	R0, C0       float64
	RSpan, CSpan float64
}

// NewView shows the whole rows x cols map.
func NewView(rows, cols int) View {
	return View{Rows: rows, Cols: cols, RSpan: float64(rows), CSpan: float64(cols)}
}

// Whole reports whether the view shows the whole map.
func (v View) Whole() bool {
	return v.R0 == 0 && v.C0 == 0 && v.RSpan == float64(v.Rows) && v.CSpan == float64(v.Cols)
}

// Clamp limits the spans to [min(MinSpan, size), size] and keeps the visible
// range inside the map.
func (v View) Clamp() View {
	v.R0, v.RSpan = clampAxis(v.R0, v.RSpan, v.Rows)
	v.C0, v.CSpan = clampAxis(v.C0, v.CSpan, v.Cols)
	return v
}

func clampAxis(start, span float64, size int) (float64, float64) {
	total := float64(size)
	if size <= 0 {
		return 0, 0
	}
	lo := math.Min(MinSpan, total)
	if !(span >= lo) { // also NaN
		span = lo
	}
	span = math.Min(span, total)
	if !(start >= 0) {
		start = 0
	}
	start = math.Min(start, total-span)
	return start, span
}

// Zoom scales both axes by factor (> 1 zooms in) about the point at
// fractions (fx, fy) of the panel's width and height, which keeps showing
// the same cell position where possible (clamping may move it at the edges).
func (v View) Zoom(factor, fx, fy float64) View {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return v.Clamp()
	}
	v.C0, v.CSpan = zoomAxis(v.C0, v.CSpan, v.Cols, factor, fx)
	v.R0, v.RSpan = zoomAxis(v.R0, v.RSpan, v.Rows, factor, fy)
	return v
}

func zoomAxis(start, span float64, size int, factor, f float64) (float64, float64) {
	f = min(max(f, 0), 1)
	anchor := start + f*span
	_, ns := clampAxis(0, span/factor, size)
	return clampAxis(anchor-f*ns, ns, size)
}

// Pan moves the view by (dx, dy) fractions of the panel (a drag of dx panel
// widths to the right shows cells further left).
func (v View) Pan(dx, dy float64) View {
	v.C0 -= dx * v.CSpan
	v.R0 -= dy * v.RSpan
	return v.Clamp()
}
