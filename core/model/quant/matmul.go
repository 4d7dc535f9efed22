package quant

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/haeols/haeols/core/kernel"
)

// panelRows is the number of weight rows decoded together for
// kernel.BlockDots in MatMul (8: one AVX2 register of lanes).
const panelRows = 8

// MatMul multiplies the rows x cols matrix w of type t (stored as MatVec
// takes it) with n vectors at once, as a prefill of n tokens does: for the
// vectors x_j = x[j*cols:(j+1)*cols] it sets dst[j*rows+r] to
// Dot(t, row r of w, x_j), with the same bits. Each block of w is decoded
// once for all n vectors (so decoding costs nothing per token when n is
// large), and the dot products of a panel of decoded rows with the n
// vectors are kernel.BlockDots (its SIMD paths natively and in wasm), which
// sums each block and adds the block sums in block order, as Dot does. Large
// products are split by rows over GOMAXPROCS goroutines; every element is
// computed by one of them, in the same order, so the bits do not depend on
// the number of cores. It panics on sizes that do not match.
func MatMul(t Type, dst []float32, w []byte, rows, cols int, x []float32, n int) {
	rb := mustRow(t, -1, cols)
	if rows < 0 || n < 0 || len(w) != rows*rb || len(x) < n*cols || len(dst) < n*rows {
		panic(fmt.Sprintf("quant: MatMul %s %dx%d by %d vectors: %d bytes of weights (want %d), x %d, dst %d",
			t, rows, cols, n, len(w), rows*rb, len(x), len(dst)))
	}
	if rows == 0 || n == 0 {
		return
	}
	bs := t.BlockSize()
	chunk := bs
	if bs == 1 { // float types: Dot's chunks of 256 elements
		chunk = QKK
	}
	x = x[:n*cols]
	workers := runtime.GOMAXPROCS(0)
	if int64(rows)*int64(cols)*int64(n) < 1<<20 || rows < 2*panelRows {
		workers = 1
	}
	workers = min(workers, rows/panelRows)
	if workers <= 1 {
		matMulRows(t, dst, w, rows, cols, x, n, chunk, 0, rows)
		return
	}
	var wg sync.WaitGroup
	per := (rows + workers - 1) / workers
	per = (per + panelRows - 1) / panelRows * panelRows
	for r0 := 0; r0 < rows; r0 += per {
		wg.Add(1)
		go func(r0, r1 int) {
			defer wg.Done()
			matMulRows(t, dst, w, rows, cols, x, n, chunk, r0, r1)
		}(r0, min(r0+per, rows))
	}
	wg.Wait()
}

// panelBuffers keeps matMulRows's buffers (a panel of decoded rows, its
// packed copy and the padded vectors) between calls: a prefill makes
// hundreds of MatMul calls, whose buffers would otherwise be garbage as
// large as a small model.
var panelBuffers sync.Pool

// matMulRows computes rows [r0, r1) of MatMul's product, a panel of
// panelRows rows at a time, packed a row per vector lane
// (kernel.BlockDotsPacked, which takes their dot products with every
// vector chunk by chunk, Dot's order, and stores them in dst). A type
// whose decoder writes one element at a time (stridedType) decodes its
// rows straight into the packed panel; the others decode row after row
// and are packed (kernel.PackPanel). The vectors are padded to a multiple
// of 4 once, for all panels. A build without vector loops takes
// kernel.BlockDots's portable loops.
func matMulRows(t Type, dst []float32, w []byte, rows, cols int, x []float32, n, chunk, r0, r1 int) {
	rb, _ := t.RowBytes(cols)
	n4 := (n + 3) &^ 3
	// wt is the packed panel (8 cols floats), or BlockDots's work.
	nw := panelRows*cols + kernel.BlockDotsWork(cols)
	need := nw + n4*cols
	buf, _ := panelBuffers.Get().(*[]float32)
	if buf == nil || cap(*buf) < need {
		b := make([]float32, need)
		buf = &b
	}
	defer panelBuffers.Put(buf)
	wp, wt := (*buf)[:panelRows*cols], (*buf)[panelRows*cols:nw]
	xp := x
	if n4 != n {
		xp = (*buf)[nw:need]
		copy(xp, x[:n*cols])
		clear(xp[n*cols:])
	}
	strided := stridedType(t)
	for p := r0; p < r1; p += panelRows {
		pr := min(panelRows, r1-p)
		lanes := kernel.PanelLanes(pr)
		switch {
		case lanes == 0:
			for i := 0; i < pr; i++ {
				dequantRow(t, wp[i*cols:(i+1)*cols], w[(p+i)*rb:(p+i+1)*rb])
			}
			kernel.BlockDots(dst[p:], rows, wp[:pr*cols], pr, x, n, cols, chunk, wt)
			continue
		case strided:
			// Row i, element c at (i/lanes)*lanes*cols + c*lanes + i%lanes;
			// the lanes of the rows past pr are zero.
			end := (pr + lanes - 1) / lanes * lanes
			for i := 0; i < end; i++ {
				at := wt[(i/lanes)*lanes*cols+i%lanes:]
				if i >= pr {
					for c := 0; c < cols; c++ {
						at[c*lanes] = 0
					}
					continue
				}
				dequantStrided(t, at, lanes, cols, w[(p+i)*rb:(p+i+1)*rb])
			}
		default:
			for i := 0; i < pr; i++ {
				dequantRow(t, wp[i*cols:(i+1)*cols], w[(p+i)*rb:(p+i+1)*rb])
			}
			kernel.PackPanel(wt, wp[:pr*cols], pr, cols)
		}
		kernel.BlockDotsPacked(dst[p:], rows, wt, pr, xp, n, cols, chunk)
	}
}
