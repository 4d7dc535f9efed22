package solve

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// The gonum reference: the implementation this package used before its SVD
// became pure Go, kept for accuracy comparisons and benchmarks.

// gonumSVD computes the thin SVD of the m x n row-major matrix a with gonum's
// Dgesvd (LAPACK QR iteration on the bidiagonal form), returning row-major
// U (m x k), S (k) and VT (k x n), k = min(m, n), or ok = false.
func gonumSVD(a []float64, m, n int) (u, s, vt []float64, ok bool) {
	k := min(m, n)
	ac := blas64.General{Rows: m, Cols: n, Stride: n, Data: append([]float64(nil), a...)}
	ug := blas64.General{Rows: m, Cols: k, Stride: k, Data: make([]float64, m*k)}
	vg := blas64.General{Rows: k, Cols: n, Stride: n, Data: make([]float64, k*n)}
	s = make([]float64, k)
	work := []float64{0}
	lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore, ac, ug, vg, s, work, -1)
	work = make([]float64, int(work[0]))
	ok = lapack64.Gesvd(lapack.SVDStore, lapack.SVDStore, ac, ug, vg, s, work, len(work))
	return ug.Data, s, vg.Data, ok
}

// gonumDecompose is Decompose through gonumSVD, with the same sign
// convention.
func gonumDecompose(a []float64, m, n int) (*SVD, bool) {
	k := min(m, n)
	u, s, vt, ok := gonumSVD(a, m, n)
	if !ok {
		return nil, false
	}
	for i := 0; i < k; i++ {
		big, at := -1.0, 0
		for r := 0; r < m; r++ {
			if v := math.Abs(u[r*k+i]); v > big {
				big, at = v, r
			}
		}
		if u[at*k+i] < 0 {
			for r := 0; r < m; r++ {
				u[r*k+i] = -u[r*k+i]
			}
			for j := range vt[i*n : i*n+n] {
				vt[i*n+j] = -vt[i*n+j]
			}
		}
	}
	return &SVD{M: m, N: n, K: k, U: u, S: s, VT: vt}, true
}

// gonumPinvSolve is PinvSolve through gonumSVD: x = V_r diag(1/s) U_r^T B
// with r = #{s_i > rcond s_0, s_i > 0}. Inputs are assumed valid.
func gonumPinvSolve(a []float64, m, n int, b []float64, k int, rcond float64, x []float64) (int, bool) {
	clear(x)
	q := min(m, n)
	if q == 0 {
		return 0, true
	}
	u, s, vt, ok := gonumSVD(a, m, n)
	if !ok {
		return 0, false
	}
	cut := rcond * s[0]
	r := 0
	for r < q && s[r] > cut && s[r] > 0 {
		r++
	}
	if r == 0 || k == 0 {
		return r, true
	}
	t := make([]float64, r*k)
	tg := blas64.General{Rows: r, Cols: k, Stride: k, Data: t}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: r, Stride: q, Data: u},
		blas64.General{Rows: m, Cols: k, Stride: k, Data: b},
		0, tg)
	for i := 0; i < r; i++ {
		inv := 1 / s[i]
		for j := range t[i*k : i*k+k] {
			t[i*k+j] *= inv
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1,
		blas64.General{Rows: r, Cols: n, Stride: n, Data: vt},
		tg,
		0, blas64.General{Rows: n, Cols: k, Stride: k, Data: x})
	return r, true
}
