package solve

import "math"

// qrPivot is a Householder QR factorization A P = Q R of an m x n
// row-major matrix with m >= n, computed in place, optionally with column
// pivoting (P = I without).
//
// After factor, the upper triangle of a (rows 0..rank-1) holds R and perm
// maps positions to columns of A: column j of R is column perm[j] of A.
// Reflector k (k < rank) is H_k = I - tau[k] u u^T with u = [0..0 (k), 1,
// v_k] acting on rows k..m-1, and v_k (length m-k-1) is stored contiguously
// in hv[k*m : k*m+m-k-1]. Q = H_0 H_1 ... H_{rank-1}.
//
// Pivoting is LAPACK's (xGEQP3): at step k the remaining column of largest
// partial norm becomes column k (the first on ties), and the partial norms
// are downdated, recomputing them when cancellation has cost more than half
// their digits. Everything is plain Go with explicitly rounded products and
// a fixed order of operations, so results are the same bits on every
// platform.
type qrPivot struct {
	m, n int
	a    []float64 // m x n, R in the upper triangle
	hv   []float64 // n x m, Householder vectors
	tau  []float64 // n
	perm []int     // n
	vn1  []float64 // n, partial column norms
	vn2  []float64 // n, partial norms when last computed exactly
	s    []float64 // n, scratch of reflect
	rank int       // rows of R kept (reflectors computed)
}

// grow sizes the workspace for an m x n matrix.
func (f *qrPivot) grow(m, n int) {
	f.m, f.n = m, n
	f.a = growFloats(f.a, m*n)
	f.hv = growFloats(f.hv, n*m)
	f.tau = growFloats(f.tau, n)
	f.vn1 = growFloats(f.vn1, n)
	f.vn2 = growFloats(f.vn2, n)
	f.s = growFloats(f.s, max(n, 1))
	if cap(f.perm) < n {
		f.perm = make([]int, n)
	}
	f.perm = f.perm[:n]
}

// growFloats returns a slice of length n, reusing x's memory when it is
// large enough. The contents are unspecified.
func growFloats(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

// factor computes the factorization of f.a (already filled, m x n), with
// column pivoting if pivot is set. With pivoting and trunc >= 0 it stops
// early, with rank = k, at the first step k whose trailing block R[k:, k:]
// has Frobenius norm (from the partial column norms) at most
// trunc ||A||_F; rows rank..n-1 of R are then treated as zero, a
// perturbation of A of that norm. Otherwise rank = n.
func (f *qrPivot) factor(trunc float64, pivot bool) {
	if !pivot {
		f.factorPlain()
		return
	}
	m, n, a := f.m, f.n, f.a
	vn1, vn2 := f.vn1, f.vn2
	total := 0.0
	ss := f.s[:n] // each column's sum of squares, in the order of the rows
	clear(ss)
	scaleCols(nil, 0, a, m, n, nil, ss)
	for j := range n {
		f.perm[j] = j
		total += ss[j]
		vn1[j] = math.Sqrt(ss[j])
		vn2[j] = vn1[j]
	}
	trunc2 := -1.0
	if trunc >= 0 {
		trunc2 = float64(trunc*trunc) * total
	}
	tol3z := math.Sqrt(eps)
	f.rank = n
	for k := 0; k < n; k++ {
		if trunc2 >= 0 {
			t := 0.0
			for _, v := range vn1[k:n] {
				t += float64(v * v)
			}
			if t <= trunc2 {
				f.rank = k
				return
			}
		}
		// Pivot: the largest partial norm, first on ties.
		p := k
		for j := k + 1; j < n; j++ {
			if vn1[j] > vn1[p] {
				p = j
			}
		}
		if p != k {
			for r := 0; r < m; r++ {
				row := a[r*n : r*n+n]
				row[p], row[k] = row[k], row[p]
			}
			f.perm[p], f.perm[k] = f.perm[k], f.perm[p]
			vn1[p], vn2[p] = vn1[k], vn2[k]
		}

		// Reflector for a[k:, k].
		v := f.hv[k*m : k*m+m-k-1]
		beta, tau := householder(a[k*n+k], a[min(k+1, m-1)*n+k:], m-k-1, n, v)
		a[k*n+k] = beta
		f.tau[k] = tau
		if tau != 0 && k+1 < n {
			reflect(a, n, k, v, tau, k+1, n, f.s)
		}

		// Downdate the partial norms of the remaining columns.
		for j := k + 1; j < n; j++ {
			if vn1[j] == 0 {
				continue
			}
			t := math.Abs(a[k*n+j]) / vn1[j]
			t = max(1-float64(t*t), 0)
			r := vn1[j] / vn2[j]
			if float64(t*float64(r*r)) <= tol3z {
				vn1[j] = math.Sqrt(colSumSq(a, n, j, k+1, m))
				vn2[j] = vn1[j]
			} else {
				vn1[j] *= math.Sqrt(t)
			}
		}
	}
}

// factorPlain is factor without pivoting.
func (f *qrPivot) factorPlain() {
	m, n, a := f.m, f.n, f.a
	f.rank = n
	for k := 0; k < n; k++ {
		f.perm[k] = k
		v := f.hv[k*m : k*m+m-k-1]
		beta, tau := householder(a[k*n+k], a[min(k+1, m-1)*n+k:], m-k-1, n, v)
		a[k*n+k] = beta
		f.tau[k] = tau
		if tau != 0 && k+1 < n {
			reflect(a, n, k, v, tau, k+1, n, f.s)
		}
	}
}

// applyQT overwrites the m x k row-major matrix b with Q^T b.
func (f *qrPivot) applyQT(b []float64, k int) {
	if k == 0 {
		return
	}
	s := growFloats(f.s, k)
	for j := 0; j < f.rank; j++ {
		if f.tau[j] != 0 {
			reflect(b, k, j, f.hv[j*f.m:j*f.m+f.m-j-1], f.tau[j], 0, k, s)
		}
	}
	f.s = s
}

// applyQ overwrites the m x k row-major matrix b with Q b.
func (f *qrPivot) applyQ(b []float64, k int) {
	if k == 0 {
		return
	}
	s := growFloats(f.s, k)
	for j := f.rank - 1; j >= 0; j-- {
		if f.tau[j] != 0 {
			reflect(b, k, j, f.hv[j*f.m:j*f.m+f.m-j-1], f.tau[j], 0, k, s)
		}
	}
	f.s = s
}

// colSumSq returns the sum of squares of column j of the row-major matrix a
// (row stride ld) over rows [r0, r1).
func colSumSq(a []float64, ld, j, r0, r1 int) float64 {
	s := 0.0
	for r := r0; r < r1; r++ {
		t := a[r*ld+j]
		s += float64(t * t)
	}
	return s
}

// reflect applies I - tau [1; v][1; v]^T to rows r0, r0+1, ..., r0+len(v) of
// the row-major matrix a (row stride ld), restricted to columns [lo, hi).
// s is scratch of length >= hi-lo. With w = row r0 + sum_r v_r row(r0+1+r)
// (summed in that order, four rows per pass), row r0 -= tau w and row
// r0+1+r -= (tau v_r) w.
func reflect(a []float64, ld, r0 int, v []float64, tau float64, lo, hi int, s []float64) {
	var rows []float64
	if len(v) > 0 {
		rows = a[(r0+1)*ld+lo:]
	}
	reflectRows(a[r0*ld+lo:r0*ld+hi], v, tau, rows, ld, s[:hi-lo])
}
