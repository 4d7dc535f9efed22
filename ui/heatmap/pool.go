package heatmap

import "math"

// Span is a half-open range [Lo, Hi) of cell indices along one axis.
type Span struct{ Lo, Hi int }

// AxisSpans returns, for each of the n pixels along an axis that shows the
// cells [start, start+count) of a map with total cells, the cells that pixel
// covers:
//
//   - zoomed out (count > n, a pixel covers more than one cell): every cell
//     the pixel's interval [start + p*count/n, start + (p+1)*count/n)
//     touches, so that pooling over them keeps every cell's value in at
//     least one pixel;
//   - zoomed in (count <= n): exactly one cell, the one under the pixel's
//     centre (1:1, no blending).
//
// Spans are clipped to [0, total); a pixel past the map's edge gets an empty
// span.
func AxisSpans(n int, start, count float64, total int) []Span {
	sp := make([]Span, max(n, 0))
	for p := range sp {
		sp[p] = AxisSpan(p, n, start, count, total)
	}
	return sp
}

// AxisSpan is the span of pixel p alone (see AxisSpans).
func AxisSpan(p, n int, start, count float64, total int) Span {
	if n <= 0 || !(count > 0) {
		return Span{}
	}
	step := count / float64(n)
	var lo, hi int
	if step <= 1 {
		c := int(math.Floor(start + (float64(p)+0.5)*step))
		lo, hi = c, c+1
	} else {
		lo = int(math.Floor(start + float64(p)*step))
		hi = int(math.Ceil(start + float64(p+1)*step))
		if hi <= lo {
			hi = lo + 1
		}
	}
	lo, hi = max(lo, 0), min(hi, total)
	if hi < lo {
		hi = lo
	}
	return Span{lo, hi}
}

// CellPixel returns the pixel along an axis of n pixels showing cells
// [start, start+count) whose interval contains the centre of cell c (it may
// lie outside [0, n) when c is not visible).
func CellPixel(c int, n int, start, count float64) int {
	return int(math.Floor((float64(c) + 0.5 - start) / count * float64(n)))
}

// AxisTicks returns the cells to label along an axis that shows cells
// [start, start+count): the multiples of a step of 1, 2 or 5 times a power
// of ten among the cells visible there, about want of them (the smallest
// such step of at least 0.8 times the visible range over want).
func AxisTicks(start, count float64, want int) []int {
	first, last := int(math.Ceil(start)), int(math.Ceil(start+count))-1
	if last < first {
		return nil
	}
	if last == first {
		return []int{first}
	}
	raw := float64(last-first) / float64(max(want, 1))
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * p
	for _, m := range []float64{1, 2, 5} {
		if m*p >= 0.8*raw {
			step = m * p
			break
		}
	}
	s := max(int(step), 1)
	var out []int
	for v := (first + s - 1) / s * s; v <= last; v += s {
		out = append(out, v)
	}
	return out
}

// Pool max-pools the rows x cols row-major map src onto a w x h grid whose
// pixel (x, y) covers the cells rowSpans[y] x colSpans[x] (see AxisSpans):
// dst[y*w+x] is the maximum over those cells, or NaN where the span is
// empty. dst is reused when it has room; the result is returned. The maximum
// of NaN cells is NaN only when every cell is NaN.
func Pool(dst, src []float32, cols int, rowSpans, colSpans []Span) []float32 {
	return pool(dst, src, cols, rowSpans, colSpans, true)
}

// pool is Pool; with mayNaN false, for a map that holds no NaN (see
// Data.NaN), it skips the search for pixels over NaN cells only.
func pool(dst, src []float32, cols int, rowSpans, colSpans []Span, mayNaN bool) []float32 {
	w, h := len(colSpans), len(rowSpans)
	if cap(dst) < w*h {
		dst = make([]float32, w*h)
	}
	dst = dst[:w*h]
	nan := float32(math.NaN())
	negInf := float32(math.Inf(-1))
	// The columns the pixels use, and per pixel row their maxima over the
	// row span (NaN skipped: it never compares greater, so a column of
	// only NaN cells stays -Inf).
	clo, chi := cols, 0
	for _, cs := range colSpans {
		if cs.Hi > cs.Lo {
			clo, chi = min(clo, cs.Lo), max(chi, cs.Hi)
		}
	}
	colMax := make([]float32, max(chi-clo, 0))
	for y, rs := range rowSpans {
		out := dst[y*w : (y+1)*w]
		if y > 0 && rs == rowSpans[y-1] {
			copy(out, dst[(y-1)*w:y*w]) // an upsampled row: the same cells
			continue
		}
		if rs.Hi <= rs.Lo {
			for x := range out {
				out[x] = nan
			}
			continue
		}
		r0 := rs.Lo
		row := colMax
		switch {
		case mayNaN:
			for c := range colMax {
				colMax[c] = negInf
			}
		case rs.Hi-rs.Lo == 1:
			// One row (the map has no more rows than the panel pixels):
			// pooled where it is.
			row, r0 = src[r0*cols+clo:r0*cols+chi], rs.Hi
		default:
			copy(colMax, src[r0*cols+clo:r0*cols+chi])
			r0++
		}
		for r := r0; r < rs.Hi; r++ {
			maxInto(colMax, src[r*cols+clo:r*cols+chi])
		}
		if narrow := poolSpans(out, row, clo, colSpans); !mayNaN && narrow {
			continue
		}
		// A pixel left at -Inf is all NaN (NaN), holds -Inf, or has no
		// columns (NaN).
		for x, cs := range colSpans {
			if out[x] == negInf && (cs.Hi <= cs.Lo || allNaN(src, cols, rs, cs)) {
				out[x] = nan
			}
		}
	}
	return dst
}

// maxInto raises m[c] to row[c] where that is greater (NaN skipped).
func maxInto(m, row []float32) {
	row = row[:len(m)]
	for c, v := range row {
		if v > m[c] {
			m[c] = v
		}
	}
}

// poolSpans sets out[x] to the largest of colMax over colSpans[x] (colMax
// starts at column lo and holds no NaN), -Inf for an empty span. When every
// span is one or two cells wide, as for a map about as wide as its panel,
// each pixel takes its span's first and last cell, with no inner loop and
// no switch (which cost more than the comparisons in Go's wasm code). It
// reports whether that was so (no span is empty then).
func poolSpans(out, colMax []float32, lo int, colSpans []Span) bool {
	out = out[:len(colSpans)]
	narrow := true
	for _, cs := range colSpans {
		if w := cs.Hi - cs.Lo; w < 1 || w > 2 {
			narrow = false
			break
		}
	}
	if narrow {
		for x, cs := range colSpans {
			m, v := colMax[cs.Lo-lo], colMax[cs.Hi-1-lo]
			if v > m {
				m = v
			}
			out[x] = m
		}
		return true
	}
	negInf := float32(math.Inf(-1))
	for x, cs := range colSpans {
		m := negInf
		if cs.Hi > cs.Lo {
			for _, v := range colMax[cs.Lo-lo : cs.Hi-lo] {
				if v > m {
					m = v
				}
			}
		}
		out[x] = m
	}
	return false
}

// allNaN reports whether every cell of the block rs x cs is NaN.
func allNaN(src []float32, cols int, rs, cs Span) bool {
	for r := rs.Lo; r < rs.Hi; r++ {
		for _, v := range src[r*cols+cs.Lo : r*cols+cs.Hi] {
			if v == v {
				return false
			}
		}
	}
	return true
}

// ArgMax returns the cell (row, col) with the largest value among rows rs x
// columns cs of the rows x cols map src (the first one on ties), and false
// when the block is empty.
func ArgMax(src []float32, cols int, rs, cs Span) (row, col int, ok bool) {
	if rs.Hi <= rs.Lo || cs.Hi <= cs.Lo {
		return 0, 0, false
	}
	row, col = rs.Lo, cs.Lo
	best := src[row*cols+col]
	for r := rs.Lo; r < rs.Hi; r++ {
		for c := cs.Lo; c < cs.Hi; c++ {
			if v := src[r*cols+c]; v > best || best != best {
				best, row, col = v, r, c
			}
		}
	}
	return row, col, true
}
