//go:build goexperiment.simd && !purego

package kernel

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// vecAvail lists the widths of the archsimd kernels this CPU runs, widest
// first: 8 and 4 with AVX2 (archsimd's Broadcast needs it), none without.
// vecLanes, the width in use, is chosen once from it: 8 on a CPU with AVX2
// (the 8-lane kernels below, and the 4-lane ones of simd.go for blocks of
// at most 4 rows), 0 without (then the SSE assembly and the portable loops
// run). Every width gives the same bits; tests run each.
var (
	vecAvail = lanesAMD64()
	vecLanes = append(vecAvail, 0)[0]
)

// wide16 says that two kernels run 16-lane AVX-512 blocks: the weighted
// sums of two rows 64 columns a step (axpy2Block16; with 32 registers its 8
// sums, 8 products, 2 weights and 4 vectors of b fit, and each step's loop
// work is paid for 4 times the columns of axpy2Block8) and the logits 6
// rows by 16 keys (logitsZ16). On an AMD EPYC with full-width AVX-512,
// fastest of 5 alternate runs against 8 lanes alone: BenchmarkMatMul/m=128
// 0.106 against 0.242 ms, BenchmarkLogits/m=128 0.213 against 0.308 ms. It
// is set on a CPU with AVX-512 (zmmAvail; GODEBUG=cpu.avx512f=off clears
// it), and only read where vecLanes is 8; the tests run both.
var (
	zmmAvail = archsimd.X86.AVX512()
	wide16   = zmmAvail
)

func lanesAMD64() []int {
	if archsimd.X86.AVX2() {
		return []int{8, 4}
	}
	return nil
}

// clearUpper clears the upper halves of the vector registers (VZEROUPPER)
// when a kernel returns to the scalar Go code, whose SSE instructions would
// otherwise carry false dependencies on them (archsimd does not do it
// itself yet). Each kernel defers it.
func clearUpper() { archsimd.ClearAVXUpperBits() }

// vec8 is the Float32x8 at p (32 bytes the caller has checked).
func vec8(p unsafe.Pointer) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8Array((*[8]float32)(p))
}

// store8 stores v at p (32 bytes the caller has checked).
func store8(v archsimd.Float32x8, p unsafe.Pointer) { v.StoreArray((*[8]float32)(p)) }

// logitsT8 is logitsT4 for 8 keys: kt[8c+l] is key l's element c (8*d
// floats), lane l runs the dot product of a query row with key l.
func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	_ = kt[8*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+7]
	defer clearUpper()
	pk := unsafe.Pointer(&kt[0])
	sv := archsimd.BroadcastFloat32x8(scale)
	i := 0
	for ; i+4 <= m; i += 4 {
		q0 := q[i*d : i*d+d]
		q1, q2, q3 := q[(i+1)*d:(i+1)*d+d], q[(i+2)*d:(i+2)*d+d], q[(i+3)*d:(i+3)*d+d]
		q1, q2, q3 = q1[:len(q0)], q2[:len(q0)], q3[:len(q0)]
		var a0, a1, a2, a3 archsimd.Float32x8
		for c, x := range q0 {
			k := vec8(unsafe.Add(pk, 32*c))
			a0 = a0.Add(archsimd.BroadcastFloat32x8(x).Mul(k))
			a1 = a1.Add(archsimd.BroadcastFloat32x8(q1[c]).Mul(k))
			a2 = a2.Add(archsimd.BroadcastFloat32x8(q2[c]).Mul(k))
			a3 = a3.Add(archsimd.BroadcastFloat32x8(q3[c]).Mul(k))
		}
		a0.Mul(sv).StoreArray((*[8]float32)(dst[i*ldd:]))
		a1.Mul(sv).StoreArray((*[8]float32)(dst[(i+1)*ldd:]))
		a2.Mul(sv).StoreArray((*[8]float32)(dst[(i+2)*ldd:]))
		a3.Mul(sv).StoreArray((*[8]float32)(dst[(i+3)*ldd:]))
	}
	for ; i < m; i++ {
		x := unsafe.Pointer(&q[i*d])
		var a archsimd.Float32x8
		for c := 0; c < d; c++ {
			a = a.Add(archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(x, 4*c))).Mul(vec8(unsafe.Add(pk, 32*c))))
		}
		a.Mul(sv).StoreArray((*[8]float32)(dst[i*ldd:]))
	}
}

// logitsT16 is logitsT8 for 16 keys, two groups of 8 packed one after the
// other (kt[8c+l] and kt[8d+8c+l]), 3 query rows at a time: a broadcast
// row element serves two key vectors, and the 6 sums, 6 products, 3
// weights and 2 key vectors fit the 16 AVX registers. The last m mod 3
// rows go to logitsT8, one group at a time.
func logitsT16(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	_ = kt[16*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+15]
	defer clearUpper()
	// The last m mod 3 rows first: then only sv and the pointers are live
	// across the loops, which keep every value in a register.
	m3 := m - m%3
	if m3 < m {
		logitsT8(dst[m3*ldd:], ldd, q[m3*d:], m-m3, kt[:8*d], d, scale)
		logitsT8(dst[m3*ldd+8:], ldd, q[m3*d:], m-m3, kt[8*d:16*d], d, scale)
	}
	pk := unsafe.Pointer(&kt[0])
	pk2 := unsafe.Add(pk, 32*d)
	pq, po := unsafe.Pointer(&q[0]), unsafe.Pointer(&dst[0])
	sv := archsimd.BroadcastFloat32x8(scale)
	for i := 0; i < m3; i += 3 {
		q0 := unsafe.Add(pq, 4*i*d)
		q1, q2 := unsafe.Add(q0, 4*d), unsafe.Add(q0, 8*d)
		var a0, a1, a2, b0, b1, b2 archsimd.Float32x8
		for c := 0; c < d; c++ {
			k, k2 := vec8(unsafe.Add(pk, 32*c)), vec8(unsafe.Add(pk2, 32*c))
			w0 := archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(q0, 4*c)))
			w1 := archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(q1, 4*c)))
			w2 := archsimd.BroadcastFloat32x8(*(*float32)(unsafe.Add(q2, 4*c)))
			a0, b0 = a0.Add(w0.Mul(k)), b0.Add(w0.Mul(k2))
			a1, b1 = a1.Add(w1.Mul(k)), b1.Add(w1.Mul(k2))
			a2, b2 = a2.Add(w2.Mul(k)), b2.Add(w2.Mul(k2))
		}
		o := unsafe.Add(po, 4*i*ldd)
		store8(a0.Mul(sv), o)
		store8(b0.Mul(sv), unsafe.Add(o, 32))
		o = unsafe.Add(o, 4*ldd)
		store8(a1.Mul(sv), o)
		store8(b1.Mul(sv), unsafe.Add(o, 32))
		o = unsafe.Add(o, 4*ldd)
		store8(a2.Mul(sv), o)
		store8(b2.Mul(sv), unsafe.Add(o, 32))
	}
}

// logitsZ16 is logitsT16 with the 16 keys in one 16-lane AVX-512 register
// (wide16), 6 query rows at a time: each step joins the two 8-key vectors
// (SetLo, SetHi) and a broadcast row element serves all 16 keys; the 6
// sums, 6 products, 6 weights and the key vector fit the 32 registers.
// Fewer than 6 rows go to logitsT16.
func logitsZ16(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	if m < 6 {
		logitsT16(dst, ldd, q, m, kt, d, scale)
		return
	}
	_ = kt[16*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+15]
	defer clearUpper()
	m6 := m - m%6
	if m6 < m {
		logitsT16(dst[m6*ldd:], ldd, q[m6*d:], m-m6, kt, d, scale)
	}
	pk := unsafe.Pointer(&kt[0])
	pk2 := unsafe.Add(pk, 32*d)
	pq, po := unsafe.Pointer(&q[0]), unsafe.Pointer(&dst[0])
	sv := archsimd.BroadcastFloat32x16(scale)
	bc := func(p unsafe.Pointer, off int) archsimd.Float32x16 {
		return archsimd.BroadcastFloat32x16(*(*float32)(unsafe.Add(p, off)))
	}
	for i := 0; i < m6; i += 6 {
		q0 := unsafe.Add(pq, 4*i*d)
		q3 := unsafe.Add(q0, 12*d)
		var a0, a1, a2, a3, a4, a5, z archsimd.Float32x16
		for c := 0; c < d; c++ {
			k := z.SetLo(vec8(unsafe.Add(pk, 32*c))).SetHi(vec8(unsafe.Add(pk2, 32*c)))
			// Rows 0-2 and 3-5 from two bases, d apart: few live registers.
			x, y := unsafe.Add(q0, 4*c), unsafe.Add(q3, 4*c)
			a0 = a0.Add(bc(x, 0).Mul(k))
			a1 = a1.Add(bc(x, 4*d).Mul(k))
			a2 = a2.Add(bc(x, 8*d).Mul(k))
			a3 = a3.Add(bc(y, 0).Mul(k))
			a4 = a4.Add(bc(y, 4*d).Mul(k))
			a5 = a5.Add(bc(y, 8*d).Mul(k))
		}
		o := unsafe.Add(po, 4*i*ldd)
		for _, a := range [6]archsimd.Float32x16{a0, a1, a2, a3, a4, a5} {
			a.Mul(sv).StoreArray((*[16]float32)(o))
			o = unsafe.Add(o, 4*ldd)
		}
	}
}

// axpyBlock8 is axpyT8's block of 32 columns at u (4 sums in registers):
// u[c] += coef[t]*row_t[c], row_t at pb plus idx[t] (or t) times ldb
// floats. Its own function, as axpy2Block8, so that only the block's
// values are live in its loop: the row address is one register, stepped
// by the stride without an index, and the four loads take it with an
// offset.
func axpyBlock8(u unsafe.Pointer, coef []float32, idx []int32, pb unsafe.Pointer, ldb int) {
	s0, s1, s2, s3 := vec8(u), vec8(unsafe.Add(u, 32)), vec8(unsafe.Add(u, 64)), vec8(unsafe.Add(u, 96))
	if idx != nil {
		idx = idx[:len(coef)]
	}
	r := pb
	for t, x := range coef {
		if idx != nil {
			r = unsafe.Add(pb, 4*int(idx[t])*ldb)
		}
		w := archsimd.BroadcastFloat32x8(x)
		s0 = s0.Add(w.Mul(vec8(r)))
		s1 = s1.Add(w.Mul(vec8(unsafe.Add(r, 32))))
		s2 = s2.Add(w.Mul(vec8(unsafe.Add(r, 64))))
		s3 = s3.Add(w.Mul(vec8(unsafe.Add(r, 96))))
		r = unsafe.Add(r, 4*ldb)
	}
	store8(s0, u)
	store8(s1, unsafe.Add(u, 32))
	store8(s2, unsafe.Add(u, 64))
	store8(s3, unsafe.Add(u, 96))
}

// axpyT8 is axpyT4 with 8-lane registers: 32 columns in registers over all
// t (4 independent sums, axpyBlock8), then 8, then one 4-lane step; it
// returns len(o)&^3. With 8 sums (64 columns) the products and the sums
// needed 17 registers and one sum went through the stack on every step
// (see axpy2Block8); 6 sums (48) left d = 64's last 16 columns to the
// one-sum loop (BenchmarkPartialAddLogits: 32 columns 1.22x faster than
// either).
func axpyT8(o, coef []float32, idx []int32, b []float32, ldb int) int {
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
	for ; c+32 <= n; c += 32 {
		axpyBlock8(unsafe.Add(po, 4*c), coef, idx, unsafe.Add(pb, 4*c), ldb)
	}
	for ; c+8 <= n; c += 8 {
		p := unsafe.Add(po, 4*c)
		s := vec8(p)
		for t, x := range coef {
			s = s.Add(archsimd.BroadcastFloat32x8(x).Mul(vec8(unsafe.Add(row(t), 4*c))))
		}
		store8(s, p)
	}
	if c < n {
		c += axpyT4(o[c:n], coef, idx, b[c:], ldb)
	}
	return c
}

// axpy2T8 is axpy2T4 with 8-lane registers: 2 rows by 16 columns, then 2
// by 8, then one 4-lane step; it returns len(o0)&^3.
func axpy2T8(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
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
	if wide16 {
		for ; c+64 <= n; c += 64 {
			axpy2Block16(unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c), c0, c1, idx, unsafe.Add(pb, 4*c), ldb)
		}
	}
	for ; c+16 <= n; c += 16 {
		axpy2Block8(unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c), c0, c1, idx, unsafe.Add(pb, 4*c), ldb)
	}
	for ; c+8 <= n; c += 8 {
		u, v := unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c)
		s, z := vec8(u), vec8(v)
		for t, x := range c0 {
			r := vec8(unsafe.Add(row(t), 4*c))
			s = s.Add(archsimd.BroadcastFloat32x8(x).Mul(r))
			z = z.Add(archsimd.BroadcastFloat32x8(c1[t]).Mul(r))
		}
		store8(s, u)
		store8(z, v)
	}
	if c < n {
		c += axpy2T4(o0[c:n], o1[c:n], c0, c1, idx, b[c:], ldb)
	}
	return c
}

// logitsQ8 is logitsQ4 for at most 8 query rows: qt[8c+r] is row r's
// element c (missing rows zero, 8*d floats), lane r accumulates row r.
func logitsQ8(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	defer clearUpper()
	_ = qt[8*d-1]
	pq := unsafe.Pointer(&qt[0])
	sv := archsimd.BroadcastFloat32x8(scale)
	var t0, t1, t2, t3 [8]float32
	// The logits are copied out as bits, with integer moves: the scalar
	// SSE moves of float32 copies, between the 256-bit loops, each paid
	// the switch between the two states.
	u0, u1, u2, u3 := bitsOf(&t0), bitsOf(&t1), bitsOf(&t2), bitsOf(&t3)
	od := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	for j := 0; j+4 <= nk; j += 4 {
		k0 := k[j*d : j*d+d]
		k1, k2, k3 := k[(j+1)*d:(j+1)*d+d], k[(j+2)*d:(j+2)*d+d], k[(j+3)*d:(j+3)*d+d]
		k1, k2, k3 = k1[:len(k0)], k2[:len(k0)], k3[:len(k0)]
		var a0, a1, a2, a3 archsimd.Float32x8
		for c, x := range k0 {
			q := vec8(unsafe.Add(pq, 32*c))
			a0 = a0.Add(q.Mul(archsimd.BroadcastFloat32x8(x)))
			a1 = a1.Add(q.Mul(archsimd.BroadcastFloat32x8(k1[c])))
			a2 = a2.Add(q.Mul(archsimd.BroadcastFloat32x8(k2[c])))
			a3 = a3.Add(q.Mul(archsimd.BroadcastFloat32x8(k3[c])))
		}
		a0.Mul(sv).StoreArray(&t0)
		a1.Mul(sv).StoreArray(&t1)
		a2.Mul(sv).StoreArray(&t2)
		a3.Mul(sv).StoreArray(&t3)
		for r := 0; r < rows; r++ {
			o := od[r*ldd+j : r*ldd+j+4 : r*ldd+j+4]
			o[0], o[1], o[2], o[3] = u0[r], u1[r], u2[r], u3[r]
		}
	}
}

// bitsOf is t's bits as integers.
func bitsOf(t *[8]float32) *[8]uint32 { return (*[8]uint32)(unsafe.Pointer(t)) }

// blockDotsT8 is blockDotsT4 for 8 packed rows: wt[8c+r] is row r's
// element c (8*d floats), lane r accumulates row r.
func blockDotsT8(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	defer clearUpper()
	_ = wt[8*d-1]
	pw := unsafe.Pointer(&wt[0])
	var t [4][8]float32
	// Copied out as bits, with integer moves (see logitsQ8): copy's SSE
	// moves would pay the switch out of the AVX state.
	u := [4]*[8]uint32{bitsOf(&t[0]), bitsOf(&t[1]), bitsOf(&t[2]), bitsOf(&t[3])}
	od := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	for j := 0; j+4 <= nk; j += 4 {
		x0 := x[j*d : j*d+d]
		x1, x2, x3 := x[(j+1)*d:(j+1)*d+d], x[(j+2)*d:(j+2)*d+d], x[(j+3)*d:(j+3)*d+d]
		var s0, s1, s2, s3 archsimd.Float32x8
		for b0 := 0; b0 < d; b0 += bs {
			b1 := min(b0+bs, d)
			y0 := x0[b0:b1]
			y1, y2, y3 := x1[b0:b1], x2[b0:b1], x3[b0:b1]
			y1, y2, y3 = y1[:len(y0)], y2[:len(y0)], y3[:len(y0)]
			pb := unsafe.Add(pw, 32*b0)
			var a0, a1, a2, a3 archsimd.Float32x8
			for c, v := range y0 {
				q := vec8(unsafe.Add(pb, 32*c))
				a0 = a0.Add(q.Mul(archsimd.BroadcastFloat32x8(v)))
				a1 = a1.Add(q.Mul(archsimd.BroadcastFloat32x8(y1[c])))
				a2 = a2.Add(q.Mul(archsimd.BroadcastFloat32x8(y2[c])))
				a3 = a3.Add(q.Mul(archsimd.BroadcastFloat32x8(y3[c])))
			}
			s0, s1, s2, s3 = s0.Add(a0), s1.Add(a1), s2.Add(a2), s3.Add(a3)
		}
		s0.StoreArray(&t[0])
		s1.StoreArray(&t[1])
		s2.StoreArray(&t[2])
		s3.StoreArray(&t[3])
		for i, ui := range u {
			o := od[(j+i)*ldd : (j+i)*ldd+rows]
			for r := range o {
				o[r] = ui[r]
			}
		}
	}
}

// wideKeys is false: with 8 lanes the logits take keys 8 at a time anyway,
// and the 4-lane path keeps 4 (see simd_wasm.go).
const wideKeys = false

// asmExp is false: the exponentials run expT8 with 8 lanes only (see
// simd_wasm.go).
const asmExp = false

// asmXlogx is false: x ln x runs xlogxT8 with 8 lanes only (see
// simd_wasm.go).
const asmXlogx = false

// expShiftVec is expShiftT4 (simd_wasm.go has an assembly one).
func expShiftVec(dst, src []float32, mx float32, sum *float32) int {
	return expShiftT4(dst, src, mx, sum)
}

// wideWiden is false: AxpyWidenRows runs widenRowsT8 with 8 lanes only
// (see simd_wasm.go).
const wideWiden = false

// wideAxpy is false: with 8 lanes the weighted sums run axpyT8 anyway, and
// with 4 the 4-lane ones (see simd_wasm.go).
const wideAxpy = false

// maxT8 is maxT4 with 8 lanes; x holds at least 8 elements.
func maxT8(x []float32) (float32, bool) {
	n := len(x) &^ 7
	m := archsimd.LoadFloat32x8(x[:8:8])
	ok := m.Equal(m)
	for j := 8; j < n; j += 8 {
		v := archsimd.LoadFloat32x8(x[j : j+8 : j+8])
		m = m.Max(v)
		ok = ok.And(v.Equal(v))
	}
	var b [8]int32
	ok.ToInt32x8().StoreArray(&b)
	var l [8]float32
	m.StoreArray(&l)
	// Before the scalar code below, not deferred: its SSE instructions
	// after 256-bit ones would pay the switch between the two states.
	clearUpper()
	for _, x := range b {
		if x == 0 {
			return 0, false
		}
	}
	return max(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]), true
}

// widenRowsT8 is AxpyWidenRows over the first len(dst)&^3 columns: strips
// of 32, then 16, then 4 columns whose float64 sums stay in registers over
// all the rows (VCVTPS2PD, then VMULPD and VADDPD, each rounded as the Go
// loop rounds it). It returns the count of columns done; the caller has
// checked the bounds.
func widenRowsT8(dst []float64, w []float64, idx []int32, x []float32, ld int) int {
	defer clearUpper()
	n := len(dst) &^ 3
	pd, px := unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0])
	ld4 := 4 * ld
	row := func(t, c int) unsafe.Pointer { return unsafe.Add(px, int(idx[t])*ld4+4*c) }
	x4 := func(p unsafe.Pointer) archsimd.Float64x4 {
		return archsimd.LoadFloat32x4Array((*[4]float32)(p)).ConvertToFloat64()
	}
	d4 := func(p unsafe.Pointer) archsimd.Float64x4 { return archsimd.LoadFloat64x4Array((*[4]float64)(p)) }
	st := func(v archsimd.Float64x4, p unsafe.Pointer) { v.StoreArray((*[4]float64)(p)) }
	c := 0
	for ; c+32 <= n; c += 32 {
		p := unsafe.Add(pd, 8*c)
		s0, s1, s2, s3 := d4(p), d4(unsafe.Add(p, 32)), d4(unsafe.Add(p, 64)), d4(unsafe.Add(p, 96))
		s4, s5, s6, s7 := d4(unsafe.Add(p, 128)), d4(unsafe.Add(p, 160)), d4(unsafe.Add(p, 192)), d4(unsafe.Add(p, 224))
		for t := range w {
			a := archsimd.BroadcastFloat64x4(w[t])
			r := row(t, c)
			s0 = s0.Add(a.Mul(x4(r)))
			s1 = s1.Add(a.Mul(x4(unsafe.Add(r, 16))))
			s2 = s2.Add(a.Mul(x4(unsafe.Add(r, 32))))
			s3 = s3.Add(a.Mul(x4(unsafe.Add(r, 48))))
			s4 = s4.Add(a.Mul(x4(unsafe.Add(r, 64))))
			s5 = s5.Add(a.Mul(x4(unsafe.Add(r, 80))))
			s6 = s6.Add(a.Mul(x4(unsafe.Add(r, 96))))
			s7 = s7.Add(a.Mul(x4(unsafe.Add(r, 112))))
		}
		st(s0, p)
		st(s1, unsafe.Add(p, 32))
		st(s2, unsafe.Add(p, 64))
		st(s3, unsafe.Add(p, 96))
		st(s4, unsafe.Add(p, 128))
		st(s5, unsafe.Add(p, 160))
		st(s6, unsafe.Add(p, 192))
		st(s7, unsafe.Add(p, 224))
	}
	for ; c+16 <= n; c += 16 {
		p := unsafe.Add(pd, 8*c)
		s0, s1, s2, s3 := d4(p), d4(unsafe.Add(p, 32)), d4(unsafe.Add(p, 64)), d4(unsafe.Add(p, 96))
		for t := range w {
			a := archsimd.BroadcastFloat64x4(w[t])
			r := row(t, c)
			s0 = s0.Add(a.Mul(x4(r)))
			s1 = s1.Add(a.Mul(x4(unsafe.Add(r, 16))))
			s2 = s2.Add(a.Mul(x4(unsafe.Add(r, 32))))
			s3 = s3.Add(a.Mul(x4(unsafe.Add(r, 48))))
		}
		st(s0, p)
		st(s1, unsafe.Add(p, 32))
		st(s2, unsafe.Add(p, 64))
		st(s3, unsafe.Add(p, 96))
	}
	for ; c < n; c += 4 {
		p := unsafe.Add(pd, 8*c)
		s := d4(p)
		for t := range w {
			s = s.Add(archsimd.BroadcastFloat64x4(w[t]).Mul(x4(row(t, c))))
		}
		st(s, p)
	}
	return n
}

// expT8 is expT4 eight at a time (AVX2): dst[j] = Exp32(src[j]-mx) while
// all eight arguments of a group are in the fast range, the operations of
// expFast in its order, one element per lane; it returns the count done.
func expT8(dst, src []float32, mx float32) int {
	defer clearUpper()
	n := len(dst) &^ 7
	src = src[:n]
	var (
		mv    = archsimd.BroadcastFloat32x8(mx)
		lo    = archsimd.BroadcastFloat32x8(expFastMin)
		hi    = archsimd.BroadcastFloat32x8(expFastMax)
		l2e   = archsimd.BroadcastFloat32x8(log2e)
		mg    = archsimd.BroadcastFloat32x8(magic)
		l2h   = archsimd.BroadcastFloat32x8(ln2Hi)
		l2l   = archsimd.BroadcastFloat32x8(ln2Lo)
		c0    = archsimd.BroadcastFloat32x8(1.9875691500e-4)
		c1    = archsimd.BroadcastFloat32x8(1.3981999507e-3)
		c2    = archsimd.BroadcastFloat32x8(8.3334519073e-3)
		c3    = archsimd.BroadcastFloat32x8(4.1665795894e-2)
		c4    = archsimd.BroadcastFloat32x8(1.6666665459e-1)
		c5    = archsimd.BroadcastFloat32x8(5.0000001201e-1)
		one   = archsimd.BroadcastFloat32x8(1)
		mbits = archsimd.BroadcastUint32x8(0x4b400000 - 127) // Float32bits(magic) - 127
	)
	j := 0
	for ; j < n; j += 8 {
		a := archsimd.LoadFloat32x8((src[j : j+8 : j+8])).Sub(mv)
		if a.GreaterEqual(lo).And(a.LessEqual(hi)).ToBits() != 0xff {
			break
		}
		t := a.Mul(l2e).Add(mg)
		nf := t.Sub(mg)
		r := a.Sub(nf.Mul(l2h))
		r = r.Sub(nf.Mul(l2l))
		p := c0.Mul(r).Add(c1)
		p = p.Mul(r).Add(c2)
		p = p.Mul(r).Add(c3)
		p = p.Mul(r).Add(c4)
		p = p.Mul(r).Add(c5)
		y := p.Mul(r.Mul(r)).Add(r).Add(one)
		e := y.Mul(t.ToBits().Sub(mbits).ShiftAllLeft(23).BitsToFloat32())
		e.StoreArray((*[8]float32)(dst[j : j+8 : j+8]))
	}
	return j
}

// elemT8 is elemT4's ops 0 (dst[j] += a[j]) and 1 (dst[j] *= f) eight
// lanes at a time over the first len(dst)&^7 elements; it returns that
// count.
func elemT8(op int, dst, a []float32, f float32) int {
	defer clearUpper()
	n := len(dst) &^ 7
	dst = dst[:n]
	if op == 0 {
		a = a[:n]
		for j := 0; j < n; j += 8 {
			o := (*[8]float32)(dst[j : j+8 : j+8])
			archsimd.LoadFloat32x8Array(o).Add(archsimd.LoadFloat32x8(a[j : j+8 : j+8])).StoreArray(o)
		}
		return n
	}
	fv := archsimd.BroadcastFloat32x8(f)
	for j := 0; j < n; j += 8 {
		o := (*[8]float32)(dst[j : j+8 : j+8])
		archsimd.LoadFloat32x8Array(o).Mul(fv).StoreArray(o)
	}
	return n
}

// xlogxT8 is xlogxT4 eight at a time (AVX2): dst[j] = xlogx(src[j]) while
// all eight of a group are normal, positive and finite, the operations of
// xlogxGo's fast branch in its order, one element per lane; it returns the
// count done. With div, the argument is the quotient x = src[j] / div[j]
// and the result is subtracted, dst[j] -= xlogx(x): KeyEntropy's three
// passes (quotient, x ln x, sum) in one, with the same roundings.
func xlogxT8(dst, src, div []float32) int {
	defer clearUpper()
	n := len(dst) &^ 7
	src = src[:n]
	var (
		lo    = archsimd.BroadcastFloat32x8(minNorm)
		hi    = archsimd.BroadcastFloat32x8(math.MaxFloat32)
		mant  = archsimd.BroadcastUint32x8(0x007fffff)
		expo1 = archsimd.BroadcastUint32x8(0x3f800000)
		bias  = archsimd.BroadcastInt32x8(127)
		s2    = archsimd.BroadcastFloat32x8(sqrt2)
		half  = archsimd.BroadcastFloat32x8(0.5)
		one   = archsimd.BroadcastFloat32x8(1)
		c0    = archsimd.BroadcastFloat32x8(7.0376836292e-2)
		c1    = archsimd.BroadcastFloat32x8(1.1514610310e-1)
		c2    = archsimd.BroadcastFloat32x8(1.1676998740e-1)
		c3    = archsimd.BroadcastFloat32x8(1.2420140846e-1)
		c4    = archsimd.BroadcastFloat32x8(1.4249322787e-1)
		c5    = archsimd.BroadcastFloat32x8(1.6668057665e-1)
		c6    = archsimd.BroadcastFloat32x8(2.0000714765e-1)
		c7    = archsimd.BroadcastFloat32x8(2.4999993993e-1)
		c8    = archsimd.BroadcastFloat32x8(3.3333331174e-1)
		l2h   = archsimd.BroadcastFloat32x8(ln2Hi)
		l2l   = archsimd.BroadcastFloat32x8(ln2Lo)
	)
	if div != nil {
		div = div[:n]
	}
	load := func(j int) archsimd.Float32x8 {
		x := archsimd.LoadFloat32x8(src[j : j+8 : j+8])
		if div != nil {
			x = x.Div(archsimd.LoadFloat32x8(div[j : j+8 : j+8]))
		}
		return x
	}
	store := func(j int, y archsimd.Float32x8) {
		o := (*[8]float32)(dst[j : j+8 : j+8])
		if div != nil {
			y = archsimd.LoadFloat32x8Array(o).Sub(y)
		}
		y.StoreArray(o)
	}
	ok := func(x archsimd.Float32x8) bool { return x.GreaterEqual(lo).And(x.LessEqual(hi)).ToBits() == 0xff }
	f := func(x archsimd.Float32x8) archsimd.Float32x8 {
		b := x.ToBits()
		e := b.ShiftAllRight(23).BitsToInt32().Sub(bias)
		m := b.And(mant).Or(expo1).BitsToFloat32()
		big := m.Greater(s2)
		m = m.Mul(half).IfElse(big, m)
		e = e.Sub(big.ToInt32x8()) // a true lane is -1
		f := m.Sub(one)
		z := f.Mul(f)
		p := c0.Mul(f).Sub(c1)
		p = p.Mul(f).Add(c2)
		p = p.Mul(f).Sub(c3)
		p = p.Mul(f).Add(c4)
		p = p.Mul(f).Sub(c5)
		p = p.Mul(f).Add(c6)
		p = p.Mul(f).Sub(c7)
		p = p.Mul(f).Add(c8)
		y := p.Mul(f).Mul(z)
		ef := e.ConvertToFloat32()
		y = y.Add(ef.Mul(l2l))
		y = y.Sub(half.Mul(z))
		return x.Mul(f.Add(y).Add(ef.Mul(l2h)))
	}
	j := 0
	// Two groups at a time: their chains of dependent operations overlap.
	for ; j+16 <= n; j += 16 {
		x, x2 := load(j), load(j+8)
		if !ok(x) || !ok(x2) {
			break
		}
		store(j, f(x))
		store(j+8, f(x2))
	}
	for ; j < n; j += 8 {
		x := load(j)
		if !ok(x) {
			break
		}
		store(j, f(x))
	}
	return j
}

// shareTargetsT4 is ShareTargets four elements at a time (AVX2) over the
// first len(y)&^3; it returns the count done (the caller has checked the
// lengths).
func shareTargetsT4(y []float64, f float64, tot, p []float64, sign float64, x []float32) int {
	defer clearUpper()
	n := len(y) &^ 3
	fv, sv := archsimd.BroadcastFloat64x4(f), archsimd.BroadcastFloat64x4(sign)
	for k := 0; k < n; k += 4 {
		xv := archsimd.LoadFloat32x4Array((*[4]float32)(x[k : k+4])).ConvertToFloat64()
		pv := archsimd.LoadFloat64x4Array((*[4]float64)(p[k : k+4])).Add(sv.Mul(xv))
		t := archsimd.LoadFloat64x4Array((*[4]float64)(tot[k : k+4])).Sub(pv)
		fv.Mul(t).StoreArray((*[4]float64)(y[k : k+4]))
	}
	return n
}

// shareOutT4 is ShareOut four elements at a time (AVX2) over the first
// len(out)&^3; it returns the count done (the caller has checked the
// lengths).
func shareOutT4(out []float32, nonY, by []float64, sign float64, y []float32, f float64, sv []float32, g float64, acc []float32, den float64) int {
	defer clearUpper()
	n := len(out) &^ 3
	sg, fv, gv, dv := archsimd.BroadcastFloat64x4(sign), archsimd.BroadcastFloat64x4(f), archsimd.BroadcastFloat64x4(g), archsimd.BroadcastFloat64x4(den)
	for e := 0; e < n; e += 4 {
		yv := archsimd.LoadFloat32x4Array((*[4]float32)(y[e : e+4])).ConvertToFloat64()
		ey := archsimd.LoadFloat64x4Array((*[4]float64)(by[e : e+4])).Add(sg.Mul(yv))
		ey = archsimd.LoadFloat64x4Array((*[4]float64)(nonY[e : e+4])).Add(ey)
		num := fv.Mul(ey).Add(archsimd.LoadFloat32x4Array((*[4]float32)(sv[e : e+4])).ConvertToFloat64())
		if acc != nil {
			num = num.Add(gv.Mul(archsimd.LoadFloat32x4Array((*[4]float32)(acc[e : e+4])).ConvertToFloat64()))
		}
		num.Div(dv).ConvertToFloat32().StoreArray((*[4]float32)(out[e : e+4]))
	}
	return n
}

// dots4 sets out[r*ostride] to MatMul4's dot product of s with row r of
// p: dots4Vec (simd.go).
func dots4(out []float32, ostride int, s, p []float32, n, blocks int) {
	dots4Vec(out, ostride, s, p, n, blocks)
}

// axpy2Block16 is axpy2Block8 for 2 rows by 64 columns in 16-lane AVX-512
// registers (wide16): 8 sums, 8 products, 2 weights and 4 vectors of b, of
// the 32 registers (see wide16 for its benchmark).
func axpy2Block16(u, v unsafe.Pointer, c0, c1 []float32, idx []int32, pb unsafe.Pointer, ldb int) {
	ld := func(p unsafe.Pointer, off uintptr) archsimd.Float32x16 {
		return archsimd.LoadFloat32x16Array((*[16]float32)(unsafe.Add(p, off)))
	}
	s0, s1, s2, s3 := ld(u, 0), ld(u, 64), ld(u, 128), ld(u, 192)
	t0, t1, t2, t3 := ld(v, 0), ld(v, 64), ld(v, 128), ld(v, 192)
	c1 = c1[:len(c0)]
	if idx != nil {
		idx = idx[:len(c0)]
	}
	r := pb
	for t, x := range c0 {
		if idx != nil {
			r = unsafe.Add(pb, 4*int(idx[t])*ldb)
		}
		w, y := archsimd.BroadcastFloat32x16(x), archsimd.BroadcastFloat32x16(c1[t])
		b0, b1, b2, b3 := ld(r, 0), ld(r, 64), ld(r, 128), ld(r, 192)
		s0, t0 = s0.Add(w.Mul(b0)), t0.Add(y.Mul(b0))
		s1, t1 = s1.Add(w.Mul(b1)), t1.Add(y.Mul(b1))
		s2, t2 = s2.Add(w.Mul(b2)), t2.Add(y.Mul(b2))
		s3, t3 = s3.Add(w.Mul(b3)), t3.Add(y.Mul(b3))
		r = unsafe.Add(r, 4*ldb)
	}
	st := func(x archsimd.Float32x16, p unsafe.Pointer, off uintptr) {
		x.StoreArray((*[16]float32)(unsafe.Add(p, off)))
	}
	st(s0, u, 0)
	st(s1, u, 64)
	st(s2, u, 128)
	st(s3, u, 192)
	st(t0, v, 0)
	st(t1, v, 64)
	st(t2, v, 128)
	st(t3, v, 192)
}

// axpy2Block8 is axpy2T8's block of 2 rows by 16 columns at u and v, the
// columns of b from pb on, rows idx[t] of b (rows t in turn when idx is
// nil): a leaf loop whose 4 sums, 4 products, 2 weights and 2 vectors of b
// stay in registers. The compiler's scheduler puts a step's products before
// its sums (they have uses in the loop body, the sums only in the next
// step): with 8 sums (32 columns) two went to the stack and back on every
// step, and 6 sums (24) left d = 64's last 16 columns to the 2 x 8 loop.
// BenchmarkMatMul, fastest of 5 alternate runs: 16 columns 1.86x faster
// than 32, 1.21x than 24.
func axpy2Block8(u, v unsafe.Pointer, c0, c1 []float32, idx []int32, pb unsafe.Pointer, ldb int) {
	s0, s1 := vec8(u), vec8(unsafe.Add(u, 32))
	t0, t1 := vec8(v), vec8(unsafe.Add(v, 32))
	c1 = c1[:len(c0)]
	if idx != nil {
		idx = idx[:len(c0)]
	}
	r := pb
	for t, x := range c0 {
		if idx != nil {
			r = unsafe.Add(pb, 4*int(idx[t])*ldb)
		}
		w, y := archsimd.BroadcastFloat32x8(x), archsimd.BroadcastFloat32x8(c1[t])
		b0, b1 := vec8(r), vec8(unsafe.Add(r, 32))
		s0, t0 = s0.Add(w.Mul(b0)), t0.Add(y.Mul(b0))
		s1, t1 = s1.Add(w.Mul(b1)), t1.Add(y.Mul(b1))
		r = unsafe.Add(r, 4*ldb)
	}
	store8(s0, u)
	store8(s1, unsafe.Add(u, 32))
	store8(t0, v)
	store8(t1, unsafe.Add(v, 32))
}

// packVec packs a panel of 8 whole rows for packRows (wt[8c+r] =
// w[r*d+c]) with AVX2, 8 columns at a time: each 8 x 8 block transposed
// in registers (shuffles within the 128-bit halves, then across them),
// 8 loads and 8 stores where the Go loop makes 64 of each. It reports
// whether it did: other panels (and CPUs without AVX2) are packRows's own.
func packVec(wt []float32, lanes int, w []float32, rows, d int) bool {
	if lanes != 8 || rows != 8 || d < 8 || vecLanes != 8 {
		return false
	}
	_ = wt[8*d-1]
	_ = w[8*d-1]
	pack8(wt, w, d)
	return true
}

// pack8 is packVec's transposition.
func pack8(wt, w []float32, d int) {
	defer clearUpper()
	pw, pt := unsafe.Pointer(&w[0]), unsafe.Pointer(&wt[0])
	row := uintptr(4 * d)
	c := 0
	for ; c+8 <= d; c += 8 {
		p := unsafe.Add(pw, 4*c)
		r0, r1 := vec8(p), vec8(unsafe.Add(p, row))
		r2, r3 := vec8(unsafe.Add(p, 2*row)), vec8(unsafe.Add(p, 3*row))
		r4, r5 := vec8(unsafe.Add(p, 4*row)), vec8(unsafe.Add(p, 5*row))
		r6, r7 := vec8(unsafe.Add(p, 6*row)), vec8(unsafe.Add(p, 7*row))
		// In each 128-bit half (columns k and k+4): rows 0-3 and 4-7 of
		// its columns side by side.
		s0, s1 := r0.ConcatPermuteScalarsGrouped(0, 1, 4, 5, r1), r0.ConcatPermuteScalarsGrouped(2, 3, 6, 7, r1)
		s2, s3 := r2.ConcatPermuteScalarsGrouped(0, 1, 4, 5, r3), r2.ConcatPermuteScalarsGrouped(2, 3, 6, 7, r3)
		s4, s5 := r4.ConcatPermuteScalarsGrouped(0, 1, 4, 5, r5), r4.ConcatPermuteScalarsGrouped(2, 3, 6, 7, r5)
		s6, s7 := r6.ConcatPermuteScalarsGrouped(0, 1, 4, 5, r7), r6.ConcatPermuteScalarsGrouped(2, 3, 6, 7, r7)
		t0, t1 := s0.ConcatPermuteScalarsGrouped(0, 2, 4, 6, s2), s0.ConcatPermuteScalarsGrouped(1, 3, 5, 7, s2)
		t2, t3 := s1.ConcatPermuteScalarsGrouped(0, 2, 4, 6, s3), s1.ConcatPermuteScalarsGrouped(1, 3, 5, 7, s3)
		u0, u1 := s4.ConcatPermuteScalarsGrouped(0, 2, 4, 6, s6), s4.ConcatPermuteScalarsGrouped(1, 3, 5, 7, s6)
		u2, u3 := s5.ConcatPermuteScalarsGrouped(0, 2, 4, 6, s7), s5.ConcatPermuteScalarsGrouped(1, 3, 5, 7, s7)
		// Rows 0-3 from t, 4-7 from u: columns 0-3 from the low halves,
		// 4-7 from the high ones.
		o := unsafe.Add(pt, 32*c)
		store8(t0.ConcatPermute128Scalars(0, 2, u0), o)
		store8(t1.ConcatPermute128Scalars(0, 2, u1), unsafe.Add(o, 32))
		store8(t2.ConcatPermute128Scalars(0, 2, u2), unsafe.Add(o, 64))
		store8(t3.ConcatPermute128Scalars(0, 2, u3), unsafe.Add(o, 96))
		store8(t0.ConcatPermute128Scalars(1, 3, u0), unsafe.Add(o, 128))
		store8(t1.ConcatPermute128Scalars(1, 3, u1), unsafe.Add(o, 160))
		store8(t2.ConcatPermute128Scalars(1, 3, u2), unsafe.Add(o, 192))
		store8(t3.ConcatPermute128Scalars(1, 3, u3), unsafe.Add(o, 224))
	}
	for ; c < d; c++ {
		for r := 0; r < 8; r++ {
			wt[8*c+r] = w[r*d+c]
		}
	}
}
