//go:build goexperiment.simd && (amd64 || wasm) && !purego

package kernel

import (
	"simd/archsimd"
	"unsafe"
)

// This file holds the 4-lane simd/archsimd kernels, one source for
// WebAssembly (SIMD128) and amd64 (AVX2, 128-bit registers); simd_amd64.go
// adds the 8-lane AVX2 ones. Each lane runs one of the independent sequences
// that the portable loops of block.go define (one query row of a logits
// block, one output column of a weighted sum) with the same roundings in the
// same order: Mul then Add, never a fused multiply-add. So every lane width
// gives the portable loops' bits.

// vec4 is the Float32x4 at p (16 bytes the caller has checked).
func vec4(p unsafe.Pointer) archsimd.Float32x4 {
	return archsimd.LoadFloat32x4Array((*[4]float32)(p))
}

// logitsT4 computes, for the 4 keys packed transposed in kt (kt[4c+l] =
// key l's element c, 4*d floats) and each query row i < m of q (m x d),
// acc[l] = sum_{c<d} q[i*d+c]*kt[4c+l] in the order of c (products rounded),
// and stores scale*acc[l] at dst[i*ldd+l]: lane l runs the dot product of
// row i and key l, four rows at a time.
func logitsT4(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	_ = kt[4*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+3]
	defer clearUpper()
	pk := unsafe.Pointer(&kt[0])
	sv := archsimd.BroadcastFloat32x4(scale)
	i := 0
	for ; i+4 <= m; i += 4 {
		q0 := q[i*d : i*d+d]
		q1, q2, q3 := q[(i+1)*d:(i+1)*d+d], q[(i+2)*d:(i+2)*d+d], q[(i+3)*d:(i+3)*d+d]
		q1, q2, q3 = q1[:len(q0)], q2[:len(q0)], q3[:len(q0)]
		var a0, a1, a2, a3 archsimd.Float32x4
		for c, x := range q0 {
			k := vec4(unsafe.Add(pk, 16*c))
			a0 = a0.Add(archsimd.BroadcastFloat32x4(x).Mul(k))
			a1 = a1.Add(archsimd.BroadcastFloat32x4(q1[c]).Mul(k))
			a2 = a2.Add(archsimd.BroadcastFloat32x4(q2[c]).Mul(k))
			a3 = a3.Add(archsimd.BroadcastFloat32x4(q3[c]).Mul(k))
		}
		a0.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd:]))
		a1.Mul(sv).StoreArray((*[4]float32)(dst[(i+1)*ldd:]))
		a2.Mul(sv).StoreArray((*[4]float32)(dst[(i+2)*ldd:]))
		a3.Mul(sv).StoreArray((*[4]float32)(dst[(i+3)*ldd:]))
	}
	for ; i < m; i++ {
		x := unsafe.Pointer(&q[i*d])
		var a archsimd.Float32x4
		for c := 0; c < d; c++ {
			a = a.Add(archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 4*c))).Mul(vec4(unsafe.Add(pk, 16*c))))
		}
		a.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd:]))
	}
}

// axpyT4 adds sum_t coef[t]*b[j_t*ldb+c] to o[c] for c < len(o)&^3, each
// column's terms in the order of t (j_t = idx[t], or t when idx is nil),
// 16, then 4 columns at a time kept in registers over all t, and returns
// the count of columns done. The caller has checked that every row j_t of
// b has len(o) columns in bounds.
func axpyT4(o, coef []float32, idx []int32, b []float32, ldb int) int {
	defer clearUpper()
	n := len(o) &^ 3
	po, pb := unsafe.Pointer(&o[0]), unsafe.Pointer(&b[0])
	row := func(t int) unsafe.Pointer {
		j := t
		if idx != nil {
			j = int(idx[t])
		}
		return unsafe.Add(pb, 4*j*ldb)
	}
	c := 0
	for ; c+16 <= n; c += 16 {
		p := unsafe.Add(po, 4*c)
		s0, s1, s2, s3 := vec4(p), vec4(unsafe.Add(p, 16)), vec4(unsafe.Add(p, 32)), vec4(unsafe.Add(p, 48))
		for t, x := range coef {
			w := archsimd.BroadcastFloat32x4(x)
			r := unsafe.Add(row(t), 4*c)
			s0 = s0.Add(w.Mul(vec4(r)))
			s1 = s1.Add(w.Mul(vec4(unsafe.Add(r, 16))))
			s2 = s2.Add(w.Mul(vec4(unsafe.Add(r, 32))))
			s3 = s3.Add(w.Mul(vec4(unsafe.Add(r, 48))))
		}
		s0.StoreArray((*[4]float32)(p))
		s1.StoreArray((*[4]float32)(unsafe.Add(p, 16)))
		s2.StoreArray((*[4]float32)(unsafe.Add(p, 32)))
		s3.StoreArray((*[4]float32)(unsafe.Add(p, 48)))
	}
	for ; c < n; c += 4 {
		p := unsafe.Add(po, 4*c)
		s := vec4(p)
		for t, x := range coef {
			s = s.Add(archsimd.BroadcastFloat32x4(x).Mul(vec4(unsafe.Add(row(t), 4*c))))
		}
		s.StoreArray((*[4]float32)(p))
	}
	return n
}

// axpy2T4 is axpyT4 for two output rows o0, o1 (same length) with their own
// coefficients c0, c1 (same length) over the same rows of b: 2 rows by 8
// columns in registers, then 2 by 4.
func axpy2T4(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	defer clearUpper()
	n := len(o0) &^ 3
	p0, p1, pb := unsafe.Pointer(&o0[0]), unsafe.Pointer(&o1[0]), unsafe.Pointer(&b[0])
	c1 = c1[:len(c0)]
	row := func(t int) unsafe.Pointer {
		j := t
		if idx != nil {
			j = int(idx[t])
		}
		return unsafe.Add(pb, 4*j*ldb)
	}
	c := 0
	for ; c+8 <= n; c += 8 {
		u, v := unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c)
		s0, s1 := vec4(u), vec4(unsafe.Add(u, 16))
		t0, t1 := vec4(v), vec4(unsafe.Add(v, 16))
		for t, x := range c0 {
			w, y := archsimd.BroadcastFloat32x4(x), archsimd.BroadcastFloat32x4(c1[t])
			r := unsafe.Add(row(t), 4*c)
			b0, b1 := vec4(r), vec4(unsafe.Add(r, 16))
			s0 = s0.Add(w.Mul(b0))
			s1 = s1.Add(w.Mul(b1))
			t0 = t0.Add(y.Mul(b0))
			t1 = t1.Add(y.Mul(b1))
		}
		s0.StoreArray((*[4]float32)(u))
		s1.StoreArray((*[4]float32)(unsafe.Add(u, 16)))
		t0.StoreArray((*[4]float32)(v))
		t1.StoreArray((*[4]float32)(unsafe.Add(v, 16)))
	}
	for ; c < n; c += 4 {
		u, v := unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c)
		s, z := vec4(u), vec4(v)
		for t, x := range c0 {
			r := vec4(unsafe.Add(row(t), 4*c))
			s = s.Add(archsimd.BroadcastFloat32x4(x).Mul(r))
			z = z.Add(archsimd.BroadcastFloat32x4(c1[t]).Mul(r))
		}
		s.StoreArray((*[4]float32)(u))
		z.StoreArray((*[4]float32)(v))
	}
	return n
}
