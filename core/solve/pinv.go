package solve

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// pinvSolve implements PinvSolve; see there.
func pinvSolve(a []float64, m, n int, b []float64, k int, rcond float64, x []float64) (int, error) {
	if err := checkMatrix("PinvSolve", "a", a, m, n); err != nil {
		return 0, err
	}
	if err := checkMatrix("PinvSolve", "b", b, m, k); err != nil {
		return 0, err
	}
	if len(x) != n*k {
		return 0, fmt.Errorf("solve: PinvSolve: len(x) = %d, want n*k = %d (%d x %d): %w", len(x), n*k, n, k, ErrShape)
	}
	if !(rcond >= 0) || math.IsInf(rcond, 1) {
		return 0, fmt.Errorf("solve: PinvSolve: rcond = %v, want a finite value >= 0: %w", rcond, ErrInvalid)
	}
	clear(x)
	q := min(m, n)
	if q == 0 {
		return 0, nil
	}
	u, s, vt, ok := thinSVD(a, m, n)
	if !ok {
		return 0, fmt.Errorf("solve: PinvSolve: SVD of a (%d x %d): %w", m, n, ErrNoConvergence)
	}
	cut := rcond * s[0]
	r := 0
	for r < q && s[r] > cut && s[r] > 0 {
		r++
	}
	if r == 0 || k == 0 {
		return r, nil
	}
	// t = diag(1/S[:r]) U[:, :r]^T B, then x = VT[:r, :]^T t.
	t := make([]float64, r*k)
	tg := blas64.General{Rows: r, Cols: k, Stride: k, Data: t}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: r, Stride: q, Data: u},
		blas64.General{Rows: m, Cols: k, Stride: k, Data: b},
		0, tg)
	for i := 0; i < r; i++ {
		row := t[i*k : i*k+k]
		inv := 1 / s[i]
		for j := range row {
			row[j] *= inv
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1,
		blas64.General{Rows: r, Cols: n, Stride: n, Data: vt},
		tg,
		0, blas64.General{Rows: n, Cols: k, Stride: k, Data: x})
	return r, nil
}
