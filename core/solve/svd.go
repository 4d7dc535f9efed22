package solve

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// thinSVD computes the thin SVD of the m x n row-major matrix a (m, n > 0,
// entries finite) with gonum's Dgesvd, the routine behind mat.SVD with
// mat.SVDThin, writing straight into row-major U (m x k), S (k) and VT (k x n),
// k = min(m, n). a is not modified.
func thinSVD(a []float64, m, n int) (u, s, vt []float64, ok bool) {
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

// Decompose returns the thin SVD of the m x n matrix a. Singular values are in
// decreasing order; each singular pair is signed so that the entry of largest
// magnitude in its column of U (the first such entry on ties) is positive,
// which makes the factors reproducible. A zero matrix gives S = 0, and m or n
// = 0 gives K = 0 with empty factors.
func Decompose(a []float64, m, n int) (*SVD, error) {
	if err := checkMatrix("Decompose", "a", a, m, n); err != nil {
		return nil, err
	}
	k := min(m, n)
	d := &SVD{M: m, N: n, K: k}
	if k == 0 {
		d.U, d.S, d.VT = []float64{}, []float64{}, []float64{}
		return d, nil
	}
	u, s, vt, ok := thinSVD(a, m, n)
	if !ok {
		return nil, fmt.Errorf("solve: Decompose: a (%d x %d): %w", m, n, ErrNoConvergence)
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
	d.U, d.S, d.VT = u, s, vt
	return d, nil
}

// RankForEnergy returns the smallest rank r whose leading singular values keep
// at least tau of the squared Frobenius norm (sum of S[i]^2). tau >= 1 (or
// NaN) gives the number of nonzero singular values; tau <= 0 and a zero
// matrix give 0.
//
// Rounding guard: the cumulative energy is compared with tau*total less
// K*eps*total (the rounding error of the sums), and the answer never
// exceeds the number of nonzero singular values, so tau = 1 cannot fail and a
// tau that is met exactly up to rounding is met.
func (s *SVD) RankForEnergy(tau float64) int {
	nz := 0
	total := 0.0
	for _, v := range s.S {
		if v != 0 {
			nz++
		}
		total += v * v
	}
	if nz == 0 || tau <= 0 {
		return 0
	}
	if !(tau < 1) {
		return nz
	}
	want := tau*total - float64(len(s.S))*eps*total
	cum := 0.0
	for r, v := range s.S[:nz] {
		cum += v * v
		if cum >= want {
			return r + 1
		}
	}
	return nz
}

// Reconstruct writes the rank-r approximation U[:, :r] diag(S[:r]) VT[:r, :]
// into dst (M x N). r is clamped to [0, K]. It panics if len(dst) != M*N.
func (s *SVD) Reconstruct(r int, dst []float64) {
	if len(dst) != s.M*s.N {
		panic(fmt.Sprintf("solve: Reconstruct: len(dst) = %d, want M*N = %d (%d x %d)", len(dst), s.M*s.N, s.M, s.N))
	}
	r = max(0, min(r, s.K))
	if r == 0 {
		clear(dst)
		return
	}
	// t = diag(S[:r]) VT[:r, :], then dst = U[:, :r] t.
	t := make([]float64, r*s.N)
	for i := 0; i < r; i++ {
		scaleCopy(t[i*s.N:(i+1)*s.N], s.S[i], s.VT[i*s.N:(i+1)*s.N])
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: s.M, Cols: r, Stride: s.K, Data: s.U},
		blas64.General{Rows: r, Cols: s.N, Stride: s.N, Data: t},
		0, blas64.General{Rows: s.M, Cols: s.N, Stride: s.N, Data: dst})
}
