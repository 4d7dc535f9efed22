package quant

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/haeols/haeols/core/kernel"
)

// panelRows is the number of weight rows decoded together for
// kernel.Logits in MatMul.
const panelRows = 8

// MatMul multiplies the rows x cols matrix w of type t (stored as MatVec
// takes it) with n vectors at once, as a prefill of n tokens does: for the
// vectors x_j = x[j*cols:(j+1)*cols] it sets dst[j*rows+r] to
// Dot(t, row r of w, x_j), with the same bits. Each block of w is decoded
// once for all n vectors (so decoding costs nothing per token when n is
// large), the dot products of a panel of decoded rows with the n vectors'
// matching segments are kernel.Logits (its SIMD path on amd64), and the
// block partial sums are added in block order, as Dot adds them. Large
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
	// The vectors' segments, chunk by chunk: the chunk of columns [c0,
	// c0+cw) of vector j at xp[c0*n+j*cw:], so that each chunk is one
	// contiguous n x cw block for kernel.Logits, shared by every worker.
	bs := t.BlockSize()
	chunk := bs
	if bs == 1 {
		chunk = QKK
	}
	xp := make([]float32, n*cols)
	for c0 := 0; c0 < cols; c0 += chunk {
		cw := min(chunk, cols-c0)
		for j := 0; j < n; j++ {
			copy(xp[c0*n+j*cw:c0*n+(j+1)*cw], x[j*cols+c0:j*cols+c0+cw])
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if int64(rows)*int64(cols)*int64(n) < 1<<20 || rows < 2*panelRows {
		workers = 1
	}
	workers = min(workers, rows/panelRows)
	if workers <= 1 {
		matMulRows(t, dst, w, rows, cols, xp, n, chunk, 0, rows)
		return
	}
	var wg sync.WaitGroup
	per := (rows + workers - 1) / workers
	per = (per + panelRows - 1) / panelRows * panelRows
	for r0 := 0; r0 < rows; r0 += per {
		wg.Add(1)
		go func(r0, r1 int) {
			defer wg.Done()
			matMulRows(t, dst, w, rows, cols, xp, n, chunk, r0, r1)
		}(r0, min(r0+per, rows))
	}
	wg.Wait()
}

// matMulRows computes rows [r0, r1) of MatMul's product from the packed
// vectors xp, a panel of panelRows rows at a time: the panel's partial sums
// (one per row and vector, in block order) stay in a small buffer while
// the chunks pass, and are stored in dst once.
func matMulRows(t Type, dst []float32, w []byte, rows, cols int, xp []float32, n, chunk, r0, r1 int) {
	rb, _ := t.RowBytes(cols)
	bs, bb := t.BlockSize(), t.BlockBytes()
	wp := make([]float32, panelRows*chunk)
	tmp := make([]float32, panelRows*n)
	acc := make([]float32, panelRows*n)
	for p := r0; p < r1; p += panelRows {
		pr := min(panelRows, r1-p)
		acc := acc[:pr*n]
		clear(acc)
		for c0 := 0; c0 < cols; c0 += chunk {
			cw := min(chunk, cols-c0)
			off, nb := c0/bs*bb, cw/bs*bb
			for i := 0; i < pr; i++ {
				at := (p+i)*rb + off
				dequantRow(t, wp[i*cw:(i+1)*cw], w[at:at+nb])
			}
			kernel.Logits(tmp, wp[:pr*cw], pr, xp[c0*n:c0*n+n*cw], n, cw, 1)
			for i, v := range tmp[:pr*n] {
				acc[i] += v
			}
		}
		for i := 0; i < pr; i++ {
			for j, v := range acc[i*n : (i+1)*n] {
				dst[j*rows+p+i] = v
			}
		}
	}
}
