package solve

import (
	"fmt"
	"math"
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
	if min(m, n) == 0 {
		return 0, nil
	}
	var r int
	var err error
	if m >= n {
		r, err = pinvTall(a, m, n, b, k, rcond, x)
	} else {
		r, err = pinvWide(a, m, n, b, k, rcond, x)
	}
	if err != nil {
		clear(x)
		return 0, fmt.Errorf("solve: PinvSolve: SVD of a (%d x %d): %w", m, n, err)
	}
	return r, nil
}

// pinvTall is PinvSolve for m >= n > 0.
//
// A is scaled to max|a_ij| in [0.5, 1) and factored by Householder QR with
// column pivoting, A P = Q [R; E], stopping at the first q whose trailing
// block E has Frobenius norm at most eps ||A||_F (numerically zero: below
// the rounding error of the factorization itself); R' is the q x n top of
// R. The tall R'^T is bidiagonalized, R'^T = Q_B B P_B^T, and
// B = U_b diag(s) V_b^T by bdsqr, so that R' = (P_B V_b) diag(s) (Q_B U_b)^T
// and A P = Q [R'; 0] has left singular vectors Q [P_B V_b; 0]. With the
// rank r fixed, D = diag(1/s_r) (Q [P_B V_b; 0])_r^T B (r x k) is formed
// whichever way is cheaper: by applying Q to the r left singular vectors
// of R' and multiplying with B (about 4mqr + 2mrk flops), or by applying
// Q^T to B (about 4mqk). Then x = P Q_B [U_b[:, :r] D; 0].
func pinvTall(a []float64, m, n int, b []float64, k int, rcond float64, x []float64) (int, error) {
	ws := getSVDWork()
	defer putSVDWork(ws)
	ws.qr.grow(m, n)
	e := scaleInto(ws.qr.a, a)
	ws.qr.factor(eps, true)
	q := ws.qr.rank
	if q == 0 {
		return 0, nil
	}
	if q == n && pinvQRShortcut && ws.qrSolve(m, n, b, k, rcond, e, x) {
		return n, nil
	}

	// T = R'^T (n x q), bidiagonalized; SVD of its bidiagonal B.
	bd := &ws.bd
	bd.grow(n, q)
	ra := ws.qr.a
	for j := range n {
		row := bd.g[j*q : j*q+q]
		for p := range row {
			if p <= j {
				row[p] = ra[p*n+j]
			} else {
				row[p] = 0
			}
		}
	}
	bd.reduce()
	// lt becomes U_b^T, lv becomes (P_B V_b)^T: row l is the l-th left
	// singular vector of R'.
	ws.t = growFloats(ws.t, 2*q*q)
	lt, lv := ws.t[:q*q], ws.t[q*q:2*q*q]
	clear(lt)
	for i := range q {
		lt[i*q+i] = 1
	}
	bd.formPT(lv)
	s := bd.d[:q]
	if !bdsqr(q, s, bd.e, lt, q, q, lv, q, q, ws.bdsqrWork(q)) {
		return 0, ErrNoConvergence
	}
	cut := rcond * s[0]
	r := 0
	for r < q && s[r] > cut && s[r] > 0 {
		r++
	}
	if r == 0 || k == 0 {
		return r, nil
	}

	// D (r x k) = diag(1/s) (left singular vectors of A P)^T B.
	ws.y = growFloats(ws.y, r*k+n*k+r)
	clear(ws.y)
	dd, y, col := ws.y[:r*k], ws.y[r*k:r*k+n*k], ws.y[r*k+n*k:]
	if pinvViaVectors(q, r, k) {
		// W = Q [lv[:r]^T; 0] (m x r), then D = W^T B row by row of B.
		ws.c = growFloats(ws.c, m*r)
		w := ws.c[:m*r]
		clear(w)
		for l := range r {
			for i, v := range lv[l*q : l*q+q] {
				w[i*r+l] = v
			}
		}
		ws.qr.applyQ(w, r)
		for i := range m {
			gerRows(dd, w[i*r:i*r+r], b[i*k:i*k+k], k)
		}
	} else {
		// C = (Q^T B)[:q], then D = lv[:r] C.
		ws.c = growFloats(ws.c, m*k)
		c := ws.c[:m*k]
		copy(c, b)
		ws.qr.applyQT(c, k)
		for l := range r {
			gemvRows(dd[l*k:l*k+k], lv[l*q:l*q+q], c, k)
		}
	}
	for l := range r {
		inv := 1 / s[l]
		row := dd[l*k : l*k+k]
		for j := range row {
			row[j] *= inv
		}
	}
	// y[:q] = U_b[:, :r] D, then x' = Q_B y and x = P x' (unscaled).
	for j := range q {
		for l := range r {
			col[l] = lt[l*q+j]
		}
		gemvRows(y[j*k:j*k+k], col, dd, k)
	}
	bd.applyQ(y, k)
	perm := ws.qr.perm
	sc := math.Ldexp(1, -e)
	for j := range n {
		dst := x[perm[j]*k : perm[j]*k+k]
		for l, v := range y[j*k : j*k+k] {
			dst[l] = v * sc
		}
	}
	return r, nil
}

// qrSolve finishes pinvTall without the SVD when that cannot change the
// answer: A P = Q R with R (n x n) of full rank and
// ||R||_F ||R^-1||_F < 1/rcond. Since sigma_max <= ||R||_F and
// sigma_min >= 1/||R^-1||_F, no singular value is then at or below
// rcond * sigma_max, so the pseudoinverse solution is the least-squares
// solution x = P R^-1 (Q^T B)[:n], computed by back substitution. It
// reports false (and leaves x alone) when the bound does not hold; the
// bound is at most n times the 2-norm condition number, so only matrices
// near the cutoff take the SVD.
func (ws *svdWork) qrSolve(m, n int, b []float64, k int, rcond float64, e int, x []float64) bool {
	ra := ws.qr.a
	// ||R||_F and ||R^-1||_F, R^-1 column by column (R z = e_c).
	var rf float64
	for i := range n {
		for _, v := range ra[i*n+i : i*n+n] {
			rf += float64(v * v)
		}
	}
	ws.t = growFloats(ws.t, 4*n)
	ri := invFrob2(ra, n, ws.t[:4*n])
	if !(float64(math.Sqrt(rf)*math.Sqrt(ri))*rcond < 1) || math.IsInf(ri, 0) {
		return false
	}
	// C = Q^T B; y = R^-1 C[:n] by back substitution, row by row of k.
	ws.c = growFloats(ws.c, m*k+n)
	c := ws.c[:m*k]
	copy(c, b)
	ws.qr.applyQT(c, k)
	neg := ws.c[m*k : m*k+n]
	for i := n - 1; i >= 0; i-- {
		row := ra[i*n : i*n+n]
		for j := i + 1; j < n; j++ {
			neg[j] = -row[j]
		}
		yi := c[i*k : i*k+k]
		gemvRows(yi, neg[i+1:n], c[(i+1)*k:n*k], k)
		inv := 1 / row[i]
		for l := range yi {
			yi[l] *= inv
		}
	}
	perm := ws.qr.perm
	sc := math.Ldexp(1, -e)
	for j := range n {
		dst := x[perm[j]*k : perm[j]*k+k]
		for l, v := range c[j*k : j*k+k] {
			dst[l] = v * sc
		}
	}
	return true
}

// pinvWide is PinvSolve for 0 < m < n, through the SVD of A^T:
// A^T = U' diag(s) VT' gives x = U'[:, :r] diag(1/s) VT'[:r, :] B.
func pinvWide(a []float64, m, n int, b []float64, k int, rcond float64, x []float64) (int, error) {
	u, s, vt, err := tallSVD(transpose(a, m, n), n, m)
	if err != nil {
		return 0, err
	}
	cut := rcond * s[0]
	r := 0
	for r < m && s[r] > cut && s[r] > 0 {
		r++
	}
	if r == 0 || k == 0 {
		return r, nil
	}
	// t = diag(1/s) VT'[:r, :] B (r x k), then x = U'[:, :r] t.
	t := make([]float64, r*k)
	for i := range r {
		gemvRows(t[i*k:i*k+k], vt[i*m:i*m+m], b, k)
		inv := 1 / s[i]
		for j := range t[i*k : i*k+k] {
			t[i*k+j] *= inv
		}
	}
	for j := range n {
		gemvRows(x[j*k:j*k+k], u[j*m:j*m+r], t, k)
	}
	return r, nil
}

// gemvRows sets dst += sum_i c[i] * rows[i*k : i*k+k] for i = 0..len(c)-1,
// adding the terms in increasing i.
func gemvRows(dst, c, rows []float64, k int) {
	i := 0
	for ; i+4 <= len(c); i += 4 {
		axpy4(dst, c[i], c[i+1], c[i+2], c[i+3], rows[i*k:i*k+k], rows[(i+1)*k:(i+1)*k+k], rows[(i+2)*k:(i+2)*k+k], rows[(i+3)*k:(i+3)*k+k])
	}
	for ; i < len(c); i++ {
		axpy(dst, c[i], rows[i*k:i*k+k])
	}
}

// pinvQRShortcut lets pinvTall skip the SVD when qrSolve proves it cannot
// matter. It is a variable only so that tests can compare both ways.
var pinvQRShortcut = true

// pinvViaVectors reports whether pinvTall should form the r left singular
// vectors of A (about 4mqr + 2mrk flops) rather than Q^T B (about 4mqk),
// for numerical rank q, rank r and k right-hand sides. It is a variable
// only so that tests can force either way.
var pinvViaVectors = func(q, r, k int) bool { return 4*q*r+2*r*k < 4*q*k }

// gerRows sets rows[l*k : l*k+k] += c[l] * x for l = 0..len(c)-1 (a rank-one
// update of the len(c) x k matrix rows), four rows at a time.
func gerRows(rows, c, x []float64, k int) {
	l := 0
	for ; l+4 <= len(c); l += 4 {
		ger4(x, c[l], c[l+1], c[l+2], c[l+3], rows[l*k:l*k+k], rows[(l+1)*k:(l+1)*k+k], rows[(l+2)*k:(l+2)*k+k], rows[(l+3)*k:(l+3)*k+k])
	}
	for ; l < len(c); l++ {
		axpy(rows[l*k:l*k+k], c[l], x)
	}
}

// invFrob2 returns ||R^-1||_F^2 for the n x n upper triangle R in the
// first n rows of ra (row stride n), R^-1 column by column: z solves
// R z = e_c by back substitution (z[c] = 1/R[c,c]; for i = c-1, ..., 0,
// z[i] = -(sum over j = i+1..c of R[i,j] z[j], in that order) / R[i,i]),
// and the squares are added column after column, z[c]^2 first, then
// z[c-1]^2 down to z[0]^2. Each column's back substitution is one chain
// of dependent operations; four columns run side by side (buf: 4n
// floats holds their z), which changes no operation of either the
// columns or the sum.
func invFrob2(ra []float64, n int, buf []float64) float64 {
	var ri float64
	c := 0
	for ; c+4 <= n; c += 4 {
		z0, z1, z2, z3 := buf[:n], buf[n:2*n], buf[2*n:3*n], buf[3*n:4*n]
		// The diagonal and the rows where only some of the four columns
		// have entries (i in c..c+2), one column at a time.
		for k, z := range [4][]float64{z0, z1, z2, z3} {
			ck := c + k
			z[ck] = 1 / ra[ck*n+ck]
			for i := ck - 1; i >= c; i-- {
				var acc float64
				row := ra[i*n : i*n+n]
				for j := i + 1; j <= ck; j++ {
					acc += float64(row[j] * z[j])
				}
				z[i] = -acc / row[i]
			}
		}
		// Rows below c: the four sums share j = i+1..c, then the longer
		// columns go on to their own last rows.
		for i := c - 1; i >= 0; i-- {
			row := ra[i*n : i*n+n]
			var a0, a1, a2, a3 float64
			for j := i + 1; j <= c; j++ {
				r := row[j]
				a0 += float64(r * z0[j])
				a1 += float64(r * z1[j])
				a2 += float64(r * z2[j])
				a3 += float64(r * z3[j])
			}
			a1 += float64(row[c+1] * z1[c+1])
			a2 += float64(row[c+1] * z2[c+1])
			a2 += float64(row[c+2] * z2[c+2])
			a3 += float64(row[c+1] * z3[c+1])
			a3 += float64(row[c+2] * z3[c+2])
			a3 += float64(row[c+3] * z3[c+3])
			d := row[i]
			z0[i], z1[i], z2[i], z3[i] = -a0/d, -a1/d, -a2/d, -a3/d
		}
		for k, z := range [4][]float64{z0, z1, z2, z3} {
			for i := c + k; i >= 0; i-- {
				ri += float64(z[i] * z[i])
			}
		}
	}
	z := buf[:n]
	for ; c < n; c++ {
		z[c] = 1 / ra[c*n+c]
		ri += float64(z[c] * z[c])
		for i := c - 1; i >= 0; i-- {
			var acc float64
			row := ra[i*n : i*n+n]
			for j := i + 1; j <= c; j++ {
				acc += float64(row[j] * z[j])
			}
			z[i] = -acc / row[i]
			ri += float64(z[i] * z[i])
		}
	}
	return ri
}
