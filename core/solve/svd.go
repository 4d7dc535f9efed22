package solve

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// svdWork holds the scratch memory of one SVD; svdPool recycles them.
type svdWork struct {
	qr   qrPivot
	bd   bidiag
	c    []float64 // PinvSolve: Q^T B or the left singular vectors
	t    []float64 // transposed singular vectors of the small SVD
	y    []float64 // PinvSolve: the projected right-hand side and solution
	work []float64 // bdsqr
}

// svdPool recycles svdWork values across calls.
var svdPool = sync.Pool{New: func() any { return new(svdWork) }}

// lastSVD holds the svdWork put back last, out of the pool, which drops
// what it holds at garbage collections: a caller that solves one problem
// at a time (the browser's worker) keeps its grown buffers.
var lastSVD atomic.Pointer[svdWork]

// getSVDWork returns an svdWork; give it back with putSVDWork.
func getSVDWork() *svdWork {
	if ws := lastSVD.Swap(nil); ws != nil {
		return ws
	}
	return svdPool.Get().(*svdWork)
}

// putSVDWork returns ws for reuse.
func putSVDWork(ws *svdWork) {
	if old := lastSVD.Swap(ws); old != nil {
		svdPool.Put(old)
	}
}

// scaleInto sets dst = 2^-e a for the e that brings max|a_ij| into
// [0.5, 1) (exact) and returns e; a zero matrix gives e = 0. a is finite
// (the callers checked).
func scaleInto(dst, a []float64) int {
	e := scaleExp(absMax(a))
	scaleTo(dst, a, math.Ldexp(1, -e))
	return e
}

// bdsqrWork returns bdsqr's scratch for an n x n bidiagonal matrix.
func (ws *svdWork) bdsqrWork(n int) []float64 {
	ws.work = growFloats(ws.work, 4*max(n-1, 1))
	return ws.work
}

// tallSVD computes the thin SVD A = U diag(s) VT of the m x n row-major
// matrix a with m >= n > 0: U is m x n, s has n entries in decreasing
// order, VT is n x n. Signs are not normalized. a is not modified.
//
// Method (LAPACK's xGESVD): A is scaled by a power of two to max|a_ij| in
// [0.5, 1). If m > n it is first reduced by Householder QR, A = Q [R; 0];
// the square G (R, or A itself when m = n) is then bidiagonalized,
// G = Q_B B P_B^T (Golub–Kahan), and B = U_b diag(s) V_b^T is computed by
// implicit-shift QR (bdsqr), which rotates Q_B^T and P_B^T into the
// singular vectors of G. Finally U = Q [Q_B U_b; 0] and VT = (P_B V_b)^T.
func tallSVD(a []float64, m, n int) (u, s, vt []float64, err error) {
	ws := getSVDWork()
	defer putSVDWork(ws)
	bd := &ws.bd
	bd.grow(n, n)
	var e int
	if m > n {
		ws.qr.grow(m, n)
		e = scaleInto(ws.qr.a, a)
		ws.qr.factor(-1, false)
		for p := range n {
			row := bd.g[p*n : p*n+n]
			clear(row[:p])
			copy(row[p:], ws.qr.a[p*n+p:p*n+n])
		}
	} else {
		e = scaleInto(bd.g, a)
	}
	bd.reduce()
	ws.t = growFloats(ws.t, n*n)
	ut := ws.t
	bd.formQT(ut)
	vt = make([]float64, n*n)
	bd.formPT(vt)
	s = make([]float64, n)
	copy(s, bd.d)
	if !bdsqr(n, s, bd.e, ut, n, n, vt, n, n, ws.bdsqrWork(n)) {
		return nil, nil, nil, ErrNoConvergence
	}
	// ut rows are the left singular vectors of G, vt rows the right ones.
	u = make([]float64, m*n)
	for i := range n {
		for r, v := range ut[i*n : i*n+n] {
			u[r*n+i] = v
		}
	}
	if m > n {
		ws.qr.applyQ(u, n)
	}
	sc := math.Ldexp(1, e)
	for i := range s {
		s[i] *= sc
	}
	return u, s, vt, nil
}

// Decompose returns the thin SVD of the m x n matrix a. Singular values are in
// decreasing order; each singular pair is signed so that the entry of largest
// magnitude in its column of U (the first such entry on ties) is positive,
// which makes the factors reproducible. A zero matrix gives S = 0, and m or n
// = 0 gives K = 0 with empty factors.
//
// The factorization is pure Go (Householder QR of A, or of A^T when m < n,
// unless A is square; Golub–Kahan bidiagonalization; implicit-shift
// bidiagonal QR; as in LAPACK's xGESVD, see tallSVD), with a fixed order of
// operations and explicitly rounded products, so it gives the same bits on
// every platform, js/wasm included. It is normwise backward stable: U and V
// are orthonormal and the singular values accurate to a small multiple of
// eps * S[0]. Decompose is safe for concurrent use.
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
	var u, s, vt []float64
	var err error
	if m >= n {
		u, s, vt, err = tallSVD(a, m, n)
	} else {
		// A^T = U' S VT' gives A = VT'^T S U'^T.
		var ut, vtt []float64
		if ut, s, vtt, err = tallSVD(transpose(a, m, n), n, m); err == nil {
			u, vt = transpose(vtt, m, m), transpose(ut, n, m)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("solve: Decompose: a (%d x %d): %w", m, n, err)
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

// transpose returns the n x m transpose of the m x n row-major matrix a.
func transpose(a []float64, m, n int) []float64 {
	t := make([]float64, n*m)
	for i := range m {
		for j, v := range a[i*n : i*n+n] {
			t[j*m+i] = v
		}
	}
	return t
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
		total += float64(v * v)
	}
	if nz == 0 || tau <= 0 {
		return 0
	}
	if !(tau < 1) {
		return nz
	}
	want := float64(tau*total) - float64(float64(float64(len(s.S))*eps)*total)
	cum := 0.0
	for r, v := range s.S[:nz] {
		cum += float64(v * v)
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
	// t = diag(S[:r]) VT[:r, :], then row i of dst is sum_l U[i, l] t[l, :],
	// summed over l in increasing order.
	n := s.N
	t := make([]float64, r*n)
	for i := 0; i < r; i++ {
		scaleCopy(t[i*n:(i+1)*n], s.S[i], s.VT[i*n:(i+1)*n])
	}
	for i := 0; i < s.M; i++ {
		dst := dst[i*n : i*n+n]
		clear(dst)
		u := s.U[i*s.K : i*s.K+r]
		l := 0
		for ; l+4 <= r; l += 4 {
			axpy4(dst, u[l], u[l+1], u[l+2], u[l+3], t[l*n:l*n+n], t[(l+1)*n:(l+1)*n+n], t[(l+2)*n:(l+2)*n+n], t[(l+3)*n:(l+3)*n+n])
		}
		for ; l < r; l++ {
			axpy(dst, u[l], t[l*n:l*n+n])
		}
	}
}
