package kernel

import "unsafe"

// BlockDotsWork is the number of floats of the work buffer BlockDots needs
// for rows of d elements: the panel packed transposed (8d) and up to 4
// vectors (4d).
func BlockDotsWork(d int) int { return 12 * d }

// BlockDots sets dst[j*ldd+i] to the blocked dot product of row i of w
// (m x d, row-major, m <= 8) and row j of x (n x d), for i < m and j < n:
// the columns are taken in blocks of bs (the last may be shorter), the
// products of a block are summed in index order starting from 0 (Dot), and
// the block sums are added to 0 in block order. Every product is rounded
// (no fused multiply-add). These are the bits of a quantized row's dot
// product taken block by block (core/model/quant's Dot), for a panel of
// rows and many vectors at once: with archsimd a lane runs one row's sums,
// 8 or 4 rows at a time over 4 vectors, with the rows packed transposed
// into work (at least BlockDotsWork(d) floats); fewer than 4 vectors (a
// matrix-vector product) are padded to 4 with zero vectors in work. Every
// path gives the portable loops' bits.
func BlockDots(dst []float32, ldd int, w []float32, m int, x []float32, n, d, bs int, work []float32) {
	if m <= 0 || n <= 0 || d <= 0 {
		return
	}
	if m > 8 || bs <= 0 || ldd < m {
		panic("kernel: BlockDots: more than 8 rows, a block size <= 0 or ldd < m")
	}
	w, x = w[:m*d], x[:n*d]
	_ = dst[(n-1)*ldd+m-1]
	if vecLanes == 0 {
		blockDotsGo(dst, ldd, w, m, x, n, d, bs)
		return
	}
	if n < 4 {
		// Four vectors, the last zero; the results of the real ones are
		// copied out.
		x4 := work[8*d : 12*d]
		copy(x4, x)
		clear(x4[n*d:])
		var out [4 * 8]float32
		BlockDots(out[:], 8, w, m, x4, 4, d, bs, work[:8*d])
		for j := 0; j < n; j++ {
			copy(dst[j*ldd:j*ldd+m], out[j*8:j*8+m])
		}
		return
	}
	lanes := vecLanes
	if m <= 4 {
		lanes = 4
	}
	n4 := n &^ 3
	for r0 := 0; r0 < m; r0 += lanes {
		rows := min(lanes, m-r0)
		wt := work[:lanes*d]
		packRows(wt, lanes, w[r0*d:(r0+rows)*d], rows, d)
		if lanes == 8 {
			blockDotsT8(dst[r0:], ldd, rows, wt, x, n4, d, bs)
		} else {
			blockDotsT4(dst[r0:], ldd, rows, wt, x, n4, d, bs)
		}
	}
	if n4 < n {
		blockDotsGo(dst[n4*ldd:], ldd, w, m, x[n4*d:], n-n4, d, bs)
	}
}

// blockDotsGo is BlockDots in portable Go: the definition.
func blockDotsGo(dst []float32, ldd int, w []float32, m int, x []float32, n, d, bs int) {
	for j := 0; j < n; j++ {
		xj := x[j*d : (j+1)*d]
		for i := 0; i < m; i++ {
			wi := w[i*d : (i+1)*d]
			var s float32
			for b0 := 0; b0 < d; b0 += bs {
				b1 := min(b0+bs, d)
				s += Dot(wi[b0:b1], xj[b0:b1])
			}
			dst[j*ldd+i] = s
		}
	}
}

// packRows sets wt[lanes*c+r] to w[r*d+c] for the rows < lanes of w (d
// columns each) and to 0 for the missing rows r >= rows: the panel
// transposed, a row per lane.
func packRows(wt []float32, lanes int, w []float32, rows, d int) {
	wt, w = wt[:lanes*d], w[:rows*d]
	for r := 0; r < lanes; r++ {
		p := unsafe.Pointer(&wt[r])
		if r >= rows {
			for c := 0; c < d; c++ {
				*(*float32)(unsafe.Add(p, 4*lanes*c)) = 0
			}
			continue
		}
		for c, v := range w[r*d : (r+1)*d] {
			*(*float32)(unsafe.Add(p, 4*lanes*c)) = v
		}
	}
}
