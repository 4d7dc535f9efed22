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
// into work (at least BlockDotsWork(d) floats); vectors short of a
// multiple of 4 (a matrix-vector product) are padded with zero vectors
// in work. Every path gives the portable loops' bits.
func BlockDots(dst []float32, ldd int, w []float32, m int, x []float32, n, d, bs int, work []float32) {
	if m <= 0 || n <= 0 || d <= 0 {
		return
	}
	if m > 8 || bs <= 0 || ldd < m {
		panic("kernel: BlockDots: more than 8 rows, a block size <= 0 or ldd < m")
	}
	w, x = w[:m*d], x[:n*d]
	_ = dst[(n-1)*ldd+m-1]
	lanes := PanelLanes(m)
	if lanes == 0 {
		blockDotsGo(dst, ldd, w, m, x, n, d, bs)
		return
	}
	wt := work[:8*d]
	PackPanel(wt, w, m, d)
	var tail []float32
	if n4 := n &^ 3; n4 < n {
		tail = work[8*d : 12*d]
		copy(tail, x[n4*d:])
		clear(tail[(n-n4)*d:])
	}
	blockDotsPacked(dst, ldd, wt, lanes, m, x, n, d, bs, tail)
}

// PanelLanes is how many rows of a panel of m rows (m <= 8) BlockDots
// and BlockDotsPacked take side by side: 8 or 4, or 0 where this build
// has no vector loops (BlockDotsPacked is then not to be called).
func PanelLanes(m int) int {
	if vecLanes == 0 {
		return 0
	}
	if m <= 4 {
		return 4
	}
	return vecLanes
}

// PackPanel packs the m rows of w (m x d, row-major, m <= 8) into wt in
// BlockDotsPacked's layout (len(wt) >= 8d); PanelLanes(m) must be > 0.
func PackPanel(wt, w []float32, m, d int) {
	lanes := PanelLanes(m)
	for r0 := 0; r0 < m; r0 += lanes {
		rows := min(lanes, m-r0)
		packRows(wt[r0*d:(r0+lanes)*d], lanes, w[r0*d:(r0+rows)*d], rows, d)
	}
}

// BlockDotsPacked is BlockDots for a panel its caller packed, with the
// vectors padded: with lanes = PanelLanes(m) > 0, element c of row i is
// wt[(i/lanes)*lanes*d + c*lanes + i%lanes], the lanes of rows m and above
// are zero (len(wt) >= lanes*d*ceil(m/lanes)), and x holds n vectors
// rounded up to a multiple of 4 (the vectors past n may hold anything:
// their sums are discarded). A decoder that writes one element at a time
// can write its rows there directly (core/model/quant), and a caller
// that runs many panels over the same vectors pads them once.
func BlockDotsPacked(dst []float32, ldd int, wt []float32, m int, x []float32, n, d, bs int) {
	if m <= 0 || n <= 0 || d <= 0 {
		return
	}
	lanes := PanelLanes(m)
	if m > 8 || bs <= 0 || ldd < m || lanes == 0 {
		panic("kernel: BlockDotsPacked: more than 8 rows, a block size <= 0, ldd < m or no vector loops")
	}
	n4 := n &^ 3
	var tail []float32
	if n4 < n {
		tail = x[n4*d : (n4+4)*d]
	}
	_ = dst[(n-1)*ldd+m-1]
	_ = wt[((m+lanes-1)/lanes)*lanes*d-1]
	blockDotsPacked(dst, ldd, wt, lanes, m, x[:n4*d], n, d, bs, tail)
}

// blockDotsPacked runs the vector kernels over the packed panel wt, four
// vectors of x at a time; the last n mod 4 vectors come padded to four in
// tail (4d floats), their sums copied out.
func blockDotsPacked(dst []float32, ldd int, wt []float32, lanes, m int, x []float32, n, d, bs int, tail []float32) {
	n4 := n &^ 3
	for r0 := 0; r0 < m; r0 += lanes {
		rows := min(lanes, m-r0)
		sub := wt[r0*d : (r0+lanes)*d]
		kern := blockDotsT4
		if lanes == 8 {
			kern = blockDotsT8
		}
		if n4 > 0 {
			kern(dst[r0:], ldd, rows, sub, x, n4, d, bs)
		}
		if n4 < n {
			var out [4 * 8]float32
			kern(out[:], 8, rows, sub, tail, 4, d, bs)
			for j := 0; j < n-n4; j++ {
				copy(dst[(n4+j)*ldd+r0:(n4+j)*ldd+r0+rows], out[j*8:j*8+rows])
			}
		}
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
	if packVec(wt, lanes, w, rows, d) {
		return
	}
	step := uintptr(4 * lanes)
	for r := 0; r < lanes; r++ {
		p := unsafe.Pointer(&wt[r])
		var off uintptr // 4*lanes*c, stepped: no multiply in the loop
		if r >= rows {
			for c := 0; c < d; c++ {
				*(*float32)(unsafe.Add(p, off)) = 0
				off += step
			}
			continue
		}
		src := w[r*d : (r+1)*d]
		for c := 0; c+4 <= len(src); c += 4 {
			s := src[c : c+4 : c+4]
			*(*float32)(unsafe.Add(p, off)) = s[0]
			*(*float32)(unsafe.Add(p, off+step)) = s[1]
			*(*float32)(unsafe.Add(p, off+2*step)) = s[2]
			*(*float32)(unsafe.Add(p, off+3*step)) = s[3]
			off += 4 * step
		}
		for _, v := range src[len(src)&^3:] {
			*(*float32)(unsafe.Add(p, off)) = v
			off += step
		}
	}
}
