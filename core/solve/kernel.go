package solve

// Small dense kernels used by NNLS and the SVD. Every product is rounded
// explicitly (float64(x*y)) so that no platform may fuse it into an FMA,
// which keeps results bit-for-bit identical on amd64 (any GOAMD64 level),
// arm64 and js/wasm. On amd64, axpy, axpy4 and ger4 run their even part in
// assembly (kernel_amd64.s): four lanes with AVX, else two with SSE2, the
// same multiplies and adds, the same bits.

// axpy sets dst += alpha*x elementwise over len(dst) elements.
func axpy(dst []float64, alpha float64, x []float64) {
	x = x[:len(dst)]
	i := 0
	if useAsm && len(dst) >= 2 {
		i = len(dst) &^ 1
		axpyVec(&dst[0], i, alpha, &x[0])
	}
	for ; i+4 <= len(dst); i += 4 {
		d := dst[i : i+4 : i+4]
		s := x[i : i+4 : i+4]
		d[0] += float64(alpha * s[0])
		d[1] += float64(alpha * s[1])
		d[2] += float64(alpha * s[2])
		d[3] += float64(alpha * s[3])
	}
	for ; i < len(dst); i++ {
		dst[i] += float64(alpha * x[i])
	}
}

// scaleCopy sets dst = alpha*x elementwise over len(dst) elements.
func scaleCopy(dst []float64, alpha float64, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = float64(alpha * v)
	}
}

// axpy4 sets dst += a0*x0 + a1*x1 + a2*x2 + a3*x3 elementwise over len(dst)
// elements, adding the four products in that order.
func axpy4(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	n := len(dst)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	i0 := 0
	if useAsm && n >= 2 {
		i0 = n &^ 1
		a := [4]float64{a0, a1, a2, a3}
		axpy4Vec(&dst[0], i0, &a, &x0[0], &x1[0], &x2[0], &x3[0])
	}
	for i := i0; i < n; i++ {
		d := dst[i]
		d += float64(a0 * x0[i])
		d += float64(a1 * x1[i])
		d += float64(a2 * x2[i])
		d += float64(a3 * x3[i])
		dst[i] = d
	}
}

// ger4 sets xk += ak*s elementwise for k = 0..3 over len(s) elements.
func ger4(s []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	n := len(s)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	i0 := 0
	if useAsm && n >= 2 {
		i0 = n &^ 1
		a := [4]float64{a0, a1, a2, a3}
		ger4Vec(&s[0], i0, &a, &x0[0], &x1[0], &x2[0], &x3[0])
	}
	for i := i0; i < n; i++ {
		v := s[i]
		x0[i] += float64(a0 * v)
		x1[i] += float64(a1 * v)
		x2[i] += float64(a2 * v)
		x3[i] += float64(a3 * v)
	}
}

// reflectRows applies the Householder reflection I - tau*u*u^T, u = [1; v],
// to the rows head, rows[0], ..., rows[len(v)-1], where row r is
// rows[r*stride : r*stride+len(head)]; s is scratch of length len(head).
func reflectRows(head []float64, v []float64, tau float64, rows []float64, stride int, s []float64) {
	if useAsm {
		if done := reflectRowsVec(head, v, tau, rows, stride); done > 0 {
			if done == len(head) {
				return
			}
			head, rows, s = head[done:], rows[done:], s[done:]
		}
	}
	w := len(head)
	row := func(r int) []float64 { return rows[r*stride : r*stride+w : r*stride+w] }
	copy(s, head)
	r := 0
	for ; r+4 <= len(v); r += 4 {
		axpy4(s, v[r], v[r+1], v[r+2], v[r+3], row(r), row(r+1), row(r+2), row(r+3))
	}
	for ; r < len(v); r++ {
		axpy(s, v[r], row(r))
	}
	axpy(head, -tau, s)
	r = 0
	for ; r+4 <= len(v); r += 4 {
		ger4(s, -float64(tau*v[r]), -float64(tau*v[r+1]), -float64(tau*v[r+2]), -float64(tau*v[r+3]),
			row(r), row(r+1), row(r+2), row(r+3))
	}
	for ; r < len(v); r++ {
		axpy(row(r), -float64(tau*v[r]), s)
	}
}

// dot returns x.y over len(x) elements, accumulated in four interleaved
// partial sums combined as (s0+s1)+(s2+s3).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		s0 += float64(xs[0] * ys[0])
		s1 += float64(xs[1] * ys[1])
		s2 += float64(xs[2] * ys[2])
		s3 += float64(xs[3] * ys[3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s1) + (s2 + s3)
}
