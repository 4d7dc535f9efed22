package solve

import "math"

// bidiag is a Golub–Kahan bidiagonalization G = Q_B B P_B^T of an r x c
// row-major matrix with r >= c >= 1 (LAPACK's xGEBD2, upper case),
// computed in place with plain Go kernels.
//
// B is upper bidiagonal with diagonal d (c entries) and superdiagonal e
// (c-1 entries). Q_B = H_0 ... H_{c-1}, H_i = I - tauq[i] [1; u_i][1; u_i]^T
// acting on rows i..r-1, with u_i (length r-i-1) stored contiguously in
// hv[i*r:]. P_B = G_0 ... G_{c-2}, G_i = I - taup[i] [1; v_i][1; v_i]^T
// acting on indices i+1..c-1, with v_i (length c-i-2) left in row i of g,
// columns i+2..c-1.
type bidiag struct {
	r, c       int
	g          []float64 // r x c
	hv         []float64 // c x r
	d, e       []float64 // c, c-1 (e has c entries)
	tauq, taup []float64 // c
	s          []float64 // scratch, max(r, c)
	x          []float64 // scratch of formQT and formPT, r x c
}

// grow sizes the workspace for an r x c matrix.
func (b *bidiag) grow(r, c int) {
	b.r, b.c = r, c
	b.g = growFloats(b.g, r*c)
	b.hv = growFloats(b.hv, c*r)
	b.d = growFloats(b.d, c)
	b.e = growFloats(b.e, c)
	b.tauq = growFloats(b.tauq, c)
	b.taup = growFloats(b.taup, c)
	b.s = growFloats(b.s, max(r, c))
}

// householder computes the reflector I - tau [1; v][1; v]^T that maps
// (alpha, x) to (beta, 0): it overwrites x with v and returns beta and tau
// (tau = 0, beta = alpha when x = 0). x is read with stride inc.
func householder(alpha float64, x []float64, n, inc int, v []float64) (beta, tau float64) {
	ss := 0.0
	for i := range n {
		t := x[i*inc]
		ss += float64(t * t)
	}
	if ss == 0 {
		clear(v[:n])
		return alpha, 0
	}
	beta = -math.Copysign(math.Sqrt(float64(alpha*alpha)+ss), alpha)
	tau = (beta - alpha) / beta
	scal := 1 / (alpha - beta)
	for i := range n {
		v[i] = float64(x[i*inc] * scal)
	}
	return beta, tau
}

// reduce bidiagonalizes b.g (already filled).
func (b *bidiag) reduce() {
	r, c, g := b.r, b.c, b.g
	for i := 0; i < c; i++ {
		// Left reflector: zero g[i+1:, i].
		u := b.hv[i*r : i*r+r-i-1]
		beta, tau := householder(g[i*c+i], g[min(i+1, r-1)*c+i:], r-i-1, c, u)
		b.d[i], b.tauq[i] = beta, tau
		g[i*c+i] = beta
		if tau != 0 && i+1 < c {
			reflect(g, c, i, u, tau, i+1, c, b.s)
		}
		if i+1 >= c {
			b.taup[i] = 0
			break
		}
		// Right reflector: zero g[i, i+2:].
		row := g[i*c : i*c+c]
		v := row[i+2 : c]
		beta, tau = householder(row[i+1], v, c-i-2, 1, v)
		b.e[i], b.taup[i] = beta, tau
		row[i+1] = beta
		if tau != 0 {
			reflectCols(g, c, i+1, r, i+1, v, tau)
		}
	}
}

// formQT writes the first c columns of Q_B, transposed, into qt (c x r,
// row stride r): row j of qt is column j of Q_B.
func (b *bidiag) formQT(qt []float64) {
	r, c := b.r, b.c
	b.x = growFloats(b.x, r*c)
	x := b.x // Q_B[:, :c], r x c
	clear(x)
	for j := range c {
		x[j*c+j] = 1
	}
	for i := c - 1; i >= 0; i-- {
		if b.tauq[i] != 0 {
			reflect(x, c, i, b.hv[i*r:i*r+r-i-1], b.tauq[i], i, c, b.s)
		}
	}
	for i := range r {
		for j, v := range x[i*c : i*c+c] {
			qt[j*r+i] = v
		}
	}
}

// formPT writes P_B^T (c x c) into pt.
func (b *bidiag) formPT(pt []float64) {
	c := b.c
	b.x = growFloats(b.x, c*c)
	x := b.x // P_B
	clear(x)
	for j := range c {
		x[j*c+j] = 1
	}
	for i := c - 2; i >= 0; i-- {
		if b.taup[i] != 0 {
			reflect(x, c, i+1, b.g[i*c+i+2:i*c+c], b.taup[i], i+1, c, b.s)
		}
	}
	for i := range c {
		for j, v := range x[i*c : i*c+c] {
			pt[j*c+i] = v
		}
	}
}

// applyPT overwrites the c x k row-major matrix y with P_B^T y.
func (b *bidiag) applyPT(y []float64, k int) {
	c := b.c
	s := growFloats(b.s, k)
	b.s = s
	for i := 0; i+1 < c; i++ {
		if b.taup[i] != 0 {
			reflect(y, k, i+1, b.g[i*c+i+2:i*c+c], b.taup[i], 0, k, s)
		}
	}
}

// applyQ overwrites the r x k row-major matrix y with Q_B y.
func (b *bidiag) applyQ(y []float64, k int) {
	r := b.r
	s := growFloats(b.s, k)
	b.s = s
	for i := b.c - 1; i >= 0; i-- {
		if b.tauq[i] != 0 {
			reflect(y, k, i, b.hv[i*r:i*r+r-i-1], b.tauq[i], 0, k, s)
		}
	}
}

// reflectCols applies I - tau [1; v][1; v]^T from the right to rows
// r0..r1-1 of the row-major matrix a (row stride ld), columns j0..j0+len(v):
// for each row x, w = tau (x[j0] + v.x[j0+1:]), x[j0] -= w and
// x[j0+1:] -= w v. Rows are taken four at a time to share the loads of v.
func reflectCols(a []float64, ld, r0, r1, j0 int, v []float64, tau float64) {
	n := len(v)
	k := r0
	for ; k+4 <= r1; k += 4 {
		x0 := a[k*ld+j0 : k*ld+j0+n+1]
		x1 := a[(k+1)*ld+j0 : (k+1)*ld+j0+n+1]
		x2 := a[(k+2)*ld+j0 : (k+2)*ld+j0+n+1]
		x3 := a[(k+3)*ld+j0 : (k+3)*ld+j0+n+1]
		d0, d1, d2, d3 := dot4(v, x0[1:], x1[1:], x2[1:], x3[1:])
		w0 := float64(tau * (x0[0] + d0))
		w1 := float64(tau * (x1[0] + d1))
		w2 := float64(tau * (x2[0] + d2))
		w3 := float64(tau * (x3[0] + d3))
		x0[0] -= w0
		x1[0] -= w1
		x2[0] -= w2
		x3[0] -= w3
		ger4(v, -w0, -w1, -w2, -w3, x0[1:], x1[1:], x2[1:], x3[1:])
	}
	for ; k < r1; k++ {
		x := a[k*ld+j0 : k*ld+j0+n+1]
		w := float64(tau * (x[0] + dot(v, x[1:])))
		x[0] -= w
		axpy(x[1:], -w, v)
	}
}

// dot4 returns v.x0, v.x1, v.x2, v.x3 over len(v) elements, each summed
// in increasing index order.
func dot4(v, x0, x1, x2, x3 []float64) (d0, d1, d2, d3 float64) {
	n := len(v)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for i, t := range v {
		d0 += float64(t * x0[i])
		d1 += float64(t * x1[i])
		d2 += float64(t * x2[i])
		d3 += float64(t * x3[i])
	}
	return d0, d1, d2, d3
}
