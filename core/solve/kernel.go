package solve

import (
	"math"
	"unsafe"
)

// Small dense kernels used by NNLS and the SVD. Every product is rounded
// explicitly (float64(x*y)) so that no platform may fuse it into an FMA,
// which keeps results bit-for-bit identical on amd64 (any GOAMD64 level),
// arm64 and js/wasm. axpy, axpy4 and ger4 run their even part in vectors:
// on amd64 in assembly (kernel_amd64.s), four lanes with AVX, else two with
// SSE2; in wasm built with GOEXPERIMENT=simd in the two-lane archsimd loops
// of simd.go (SIMD128). reflectRows has fused kernels that keep a strip of
// its sums in registers over all the rows: AVX2 assembly, and in wasm
// SIMD128 assembly (reflectRowsV2, simd_wasm.s). The same multiplies and
// adds, the same bits.

// axpy sets dst += alpha*x elementwise over len(dst) elements.
func axpy(dst []float64, alpha float64, x []float64) {
	x = x[:len(dst)]
	i := 0
	switch {
	case vecLanes > 0 && len(dst) >= 2:
		i = len(dst) &^ 1
		axpyV2(dst, i, alpha, x)
	case useAsm && len(dst) >= 2:
		i = len(dst) &^ 1
		axpyVec(&dst[0], i, alpha, &x[0])
	}
	if len(dst)-i >= 4 {
		pd, px := unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0])
		for ; i+4 <= len(dst); i += 4 {
			d, s := at4(pd, i), at4(px, i)
			d[0] += float64(alpha * s[0])
			d[1] += float64(alpha * s[1])
			d[2] += float64(alpha * s[2])
			d[3] += float64(alpha * s[3])
		}
	}
	for ; i < len(dst); i++ {
		dst[i] += float64(alpha * x[i])
	}
}

// at4 is the four float64s from element i of the array whose element 0 p
// points to; the caller has checked that i+4 is within its length. The Go
// loops below step four elements at a time through such pointers: without
// vector kernels (js/wasm, other architectures) that drops the bounds
// checks and index arithmetic of each element, which made ger4 1.5 to 2
// times as fast in wasm. Each element still gets the same rounded
// operations in the same order.
func at4(p unsafe.Pointer, i int) *[4]float64 { return (*[4]float64)(unsafe.Add(p, i*8)) }

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
	switch {
	case vecLanes > 0 && n >= 2:
		i0 = n &^ 1
		axpy4V2(dst, i0, a0, a1, a2, a3, x0, x1, x2, x3)
	case useAsm && n >= 2:
		i0 = n &^ 1
		a := [4]float64{a0, a1, a2, a3}
		axpy4Vec(&dst[0], i0, &a, &x0[0], &x1[0], &x2[0], &x3[0])
	}
	i := i0
	if n-i >= 4 {
		pd, p0, p1, p2, p3 := unsafe.Pointer(&dst[0]), unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&x2[0]), unsafe.Pointer(&x3[0])
		for ; i+4 <= n; i += 4 {
			d, y0, y1, y2, y3 := at4(pd, i), at4(p0, i), at4(p1, i), at4(p2, i), at4(p3, i)
			t0 := d[0]
			t0 += float64(a0 * y0[0])
			t0 += float64(a1 * y1[0])
			t0 += float64(a2 * y2[0])
			t0 += float64(a3 * y3[0])
			t1 := d[1]
			t1 += float64(a0 * y0[1])
			t1 += float64(a1 * y1[1])
			t1 += float64(a2 * y2[1])
			t1 += float64(a3 * y3[1])
			t2 := d[2]
			t2 += float64(a0 * y0[2])
			t2 += float64(a1 * y1[2])
			t2 += float64(a2 * y2[2])
			t2 += float64(a3 * y3[2])
			t3 := d[3]
			t3 += float64(a0 * y0[3])
			t3 += float64(a1 * y1[3])
			t3 += float64(a2 * y2[3])
			t3 += float64(a3 * y3[3])
			d[0], d[1], d[2], d[3] = t0, t1, t2, t3
		}
	}
	for ; i < n; i++ {
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
	switch {
	case vecLanes > 0 && n >= 2:
		i0 = n &^ 1
		ger4V2(s, i0, a0, a1, a2, a3, x0, x1, x2, x3)
	case useAsm && n >= 2:
		i0 = n &^ 1
		a := [4]float64{a0, a1, a2, a3}
		ger4Vec(&s[0], i0, &a, &x0[0], &x1[0], &x2[0], &x3[0])
	}
	i := i0
	if n-i >= 4 {
		ps, p0, p1, p2, p3 := unsafe.Pointer(&s[0]), unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&x2[0]), unsafe.Pointer(&x3[0])
		for ; i+4 <= n; i += 4 {
			v, y0, y1, y2, y3 := at4(ps, i), at4(p0, i), at4(p1, i), at4(p2, i), at4(p3, i)
			t0 := v[0]
			y0[0] += float64(a0 * t0)
			y1[0] += float64(a1 * t0)
			y2[0] += float64(a2 * t0)
			y3[0] += float64(a3 * t0)
			t1 := v[1]
			y0[1] += float64(a0 * t1)
			y1[1] += float64(a1 * t1)
			y2[1] += float64(a2 * t1)
			y3[1] += float64(a3 * t1)
			t2 := v[2]
			y0[2] += float64(a0 * t2)
			y1[2] += float64(a1 * t2)
			y2[2] += float64(a2 * t2)
			y3[2] += float64(a3 * t2)
			t3 := v[3]
			y0[3] += float64(a0 * t3)
			y1[3] += float64(a1 * t3)
			y2[3] += float64(a2 * t3)
			y3[3] += float64(a3 * t3)
		}
	}
	for ; i < n; i++ {
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
	done := 0
	switch {
	case vecLanes > 0 && len(v) > 0 && len(head) > 0:
		_ = rows[(len(v)-1)*stride+len(head)-1] // every row is in bounds
		done = reflectRowsV2(head, v, tau, rows, stride)
	case useAsm && vecLanes == 0:
		done = reflectRowsVec(head, v, tau, rows, stride)
	}
	if done > 0 {
		if done == len(head) {
			return
		}
		head, rows, s = head[done:], rows[done:], s[done:]
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

// Dot returns x.y over len(x) elements (len(y) >= len(x)), accumulated in
// four interleaved partial sums s0..s3 (element i into s(i mod 4), the
// last len(x) mod 4 elements into s0) combined as (s0+s1)+(s2+s3): a
// fixed order, the same bits everywhere.
func Dot(x, y []float64) float64 { return dot(x, y) }

// Dots sets dst[r] = Dot(w[r*len(x):(r+1)*len(x)], x) for r < len(dst): a
// matrix-vector product with each row's product in Dot's order, the same
// bits. In wasm it is SIMD128 assembly where len(x) is a multiple of 4
// (dotsVec), one call for all the rows: a call per row costs most in V8's
// baseline code.
func Dots(dst, w, x []float64) {
	n := len(x)
	if len(dst) == 0 || n == 0 {
		clear(dst) // empty products
		return
	}
	_ = w[len(dst)*n-1]
	if dotsVec(dst, w, x) {
		return
	}
	for r := range dst {
		dst[r] = dot(w[r*n:r*n+n], x)
	}
}

// dot is Dot, in scalar code: for a single short product (24 elements in
// core/gen) vector lanes cost more in their loads and stores at each call
// than they save; Dots takes many rows in one call.
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

// colMaxAbs raises cm[j] to |a[i*n+j]| where that is larger, over the m
// rows of the m x n row-major matrix a (len(cm) >= n), and reports
// whether a is free of NaNs (when it is not, cm is unspecified). A
// maximum does not depend on the order of its elements: the vector
// loops give the same values.
func colMaxAbs(cm, a []float64, m, n int) bool {
	cm, a = cm[:n], a[:m*n]
	j0 := 0
	switch {
	case hasVec4 && useAsm && useAVX && n >= 4:
		j0 = n &^ 3
		if !colMaxAbsV4(cm, a, m, n, j0) {
			return false
		}
	case vecLanes > 0 && n >= 2:
		j0 = n &^ 1
		if !colMaxAbsV2(cm, a, m, n, j0) {
			return false
		}
	}
	if j0 == n {
		return true
	}
	for i := 0; i < m; i++ {
		row := a[i*n+j0 : i*n+n]
		cm := cm[j0:n]
		cm = cm[:len(row)]
		for j, v := range row {
			av := math.Abs(v)
			if av > cm[j] { // not max: a runtime call in wasm
				cm[j] = av
			}
			if v != v {
				return false
			}
		}
	}
	return true
}

// scaleCols sets dst[i*ld+j] = a[i*n+j]*scl[j] for the m rows and n
// columns of the row-major a, and, when nrm is not nil, adds the squares
// of the products to nrm[j] in the order of the rows: elementwise, the
// same bits in vectors. With dst and scl nil it only adds the squares of
// a's elements to nrm (column sums of squares).
func scaleCols(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64) {
	if m == 0 || n == 0 {
		return
	}
	a = a[:m*n]
	if dst != nil {
		scl = scl[:n]
		_ = dst[(m-1)*ld+n-1]
	}
	if nrm != nil {
		nrm = nrm[:n]
	}
	j0 := 0
	switch {
	case hasVec4 && useAsm && useAVX && n >= 4:
		j0 = n &^ 3
		scaleColsV4(dst, ld, a, m, n, scl, nrm, j0)
	case vecLanes > 0 && n >= 2:
		j0 = n &^ 1
		scaleColsV2(dst, ld, a, m, n, scl, nrm, j0)
	}
	if j0 == n {
		return
	}
	for i := 0; i < m; i++ {
		src := a[i*n+j0 : i*n+n]
		if dst == nil {
			for j, t := range src {
				nrm[j0+j] += float64(t * t)
			}
			continue
		}
		row := dst[i*ld+j0 : i*ld+n]
		row = row[:len(src)]
		for j, v := range src {
			t := v * scl[j0+j]
			row[j] = t
			if nrm != nil {
				nrm[j0+j] += float64(t * t)
			}
		}
	}
}

// allFinite reports whether every element of a is finite (v-v == 0 fails
// for NaN and the infinities).
func allFinite(a []float64) bool {
	i := 0
	switch {
	case hasVec4 && useAsm && useAVX && len(a) >= 4:
		i = len(a) &^ 3
		if !allFiniteV4(a[:i]) {
			return false
		}
	case vecLanes > 0 && len(a) >= 2:
		i = len(a) &^ 1
		if !allFiniteV2(a[:i]) {
			return false
		}
	}
	for _, v := range a[i:] {
		if v-v != 0 {
			return false
		}
	}
	return true
}

// absMax returns max |a[i]| (0 for an empty a) of a finite a: a maximum,
// the same value whatever the order of the elements.
func absMax(a []float64) float64 {
	amax := 0.0
	i := 0
	switch {
	case hasVec4 && useAsm && useAVX && len(a) >= 4:
		i = len(a) &^ 3
		amax = absMaxV4(a[:i])
	case vecLanes > 0 && len(a) >= 2:
		i = len(a) &^ 1
		amax = absMaxV2(a[:i])
	}
	for _, v := range a[i:] {
		if av := math.Abs(v); av > amax { // not max: a runtime call in wasm
			amax = av
		}
	}
	return amax
}

// scaleTo sets dst[i] = a[i]*f for i < len(a).
func scaleTo(dst, a []float64, f float64) {
	dst = dst[:len(a)]
	i := 0
	switch {
	case hasVec4 && useAsm && useAVX && len(a) >= 4:
		i = len(a) &^ 3
		scaleToV4(dst[:i], a[:i], f)
	case vecLanes > 0 && len(a) >= 2:
		i = len(a) &^ 1
		scaleToV2(dst[:i], a[:i], f)
	}
	for ; i < len(a); i++ {
		dst[i] = a[i] * f
	}
}
