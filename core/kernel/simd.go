//go:build goexperiment.simd && (amd64 || wasm) && !purego

package kernel

import (
	"math"
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
	for ; c+32 <= n; c += 32 {
		p := unsafe.Add(po, 4*c)
		s0, s1, s2, s3 := vec4(p), vec4(unsafe.Add(p, 16)), vec4(unsafe.Add(p, 32)), vec4(unsafe.Add(p, 48))
		s4, s5, s6, s7 := vec4(unsafe.Add(p, 64)), vec4(unsafe.Add(p, 80)), vec4(unsafe.Add(p, 96)), vec4(unsafe.Add(p, 112))
		for t, x := range coef {
			w := archsimd.BroadcastFloat32x4(x)
			r := unsafe.Add(row(t), 4*c)
			s0 = s0.Add(w.Mul(vec4(r)))
			s1 = s1.Add(w.Mul(vec4(unsafe.Add(r, 16))))
			s2 = s2.Add(w.Mul(vec4(unsafe.Add(r, 32))))
			s3 = s3.Add(w.Mul(vec4(unsafe.Add(r, 48))))
			s4 = s4.Add(w.Mul(vec4(unsafe.Add(r, 64))))
			s5 = s5.Add(w.Mul(vec4(unsafe.Add(r, 80))))
			s6 = s6.Add(w.Mul(vec4(unsafe.Add(r, 96))))
			s7 = s7.Add(w.Mul(vec4(unsafe.Add(r, 112))))
		}
		s0.StoreArray((*[4]float32)(p))
		s1.StoreArray((*[4]float32)(unsafe.Add(p, 16)))
		s2.StoreArray((*[4]float32)(unsafe.Add(p, 32)))
		s3.StoreArray((*[4]float32)(unsafe.Add(p, 48)))
		s4.StoreArray((*[4]float32)(unsafe.Add(p, 64)))
		s5.StoreArray((*[4]float32)(unsafe.Add(p, 80)))
		s6.StoreArray((*[4]float32)(unsafe.Add(p, 96)))
		s7.StoreArray((*[4]float32)(unsafe.Add(p, 112)))
	}
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
	for ; c+16 <= n; c += 16 {
		u, v := unsafe.Add(p0, 4*c), unsafe.Add(p1, 4*c)
		s0, s1, s2, s3 := vec4(u), vec4(unsafe.Add(u, 16)), vec4(unsafe.Add(u, 32)), vec4(unsafe.Add(u, 48))
		t0, t1, t2, t3 := vec4(v), vec4(unsafe.Add(v, 16)), vec4(unsafe.Add(v, 32)), vec4(unsafe.Add(v, 48))
		for t, x := range c0 {
			w, y := archsimd.BroadcastFloat32x4(x), archsimd.BroadcastFloat32x4(c1[t])
			r := unsafe.Add(row(t), 4*c)
			b0, b1, b2, b3 := vec4(r), vec4(unsafe.Add(r, 16)), vec4(unsafe.Add(r, 32)), vec4(unsafe.Add(r, 48))
			s0 = s0.Add(w.Mul(b0))
			s1 = s1.Add(w.Mul(b1))
			s2 = s2.Add(w.Mul(b2))
			s3 = s3.Add(w.Mul(b3))
			t0 = t0.Add(y.Mul(b0))
			t1 = t1.Add(y.Mul(b1))
			t2 = t2.Add(y.Mul(b2))
			t3 = t3.Add(y.Mul(b3))
		}
		s0.StoreArray((*[4]float32)(u))
		s1.StoreArray((*[4]float32)(unsafe.Add(u, 16)))
		s2.StoreArray((*[4]float32)(unsafe.Add(u, 32)))
		s3.StoreArray((*[4]float32)(unsafe.Add(u, 48)))
		t0.StoreArray((*[4]float32)(v))
		t1.StoreArray((*[4]float32)(unsafe.Add(v, 16)))
		t2.StoreArray((*[4]float32)(unsafe.Add(v, 32)))
		t3.StoreArray((*[4]float32)(unsafe.Add(v, 48)))
	}
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

// allTrue reports whether every lane of m is true.
func allTrue(m archsimd.Mask32x4) bool {
	var b [4]int32
	m.ToInt32x4().StoreArray(&b)
	return b[0]&b[1]&b[2]&b[3] != 0
}

// expShiftT4 sets dst[j] = Exp32(src[j]-mx) and adds it to *sum in index
// order, four at a time for j < len(dst)&^3 while all four arguments are in
// [expFastMin, expFastMax]: the operations of expFast in its order, one
// element per lane. It returns the count done (it stops at the first group
// with an argument out of the fast range, or NaN).
func expShiftT4(dst, src []float32, mx float32, sum *float32) int {
	defer clearUpper()
	n := len(dst) &^ 3
	src = src[:n]
	s := *sum
	var (
		mv    = archsimd.BroadcastFloat32x4(mx)
		lo    = archsimd.BroadcastFloat32x4(expFastMin)
		hi    = archsimd.BroadcastFloat32x4(expFastMax)
		l2e   = archsimd.BroadcastFloat32x4(log2e)
		mg    = archsimd.BroadcastFloat32x4(magic)
		l2h   = archsimd.BroadcastFloat32x4(ln2Hi)
		l2l   = archsimd.BroadcastFloat32x4(ln2Lo)
		c0    = archsimd.BroadcastFloat32x4(1.9875691500e-4)
		c1    = archsimd.BroadcastFloat32x4(1.3981999507e-3)
		c2    = archsimd.BroadcastFloat32x4(8.3334519073e-3)
		c3    = archsimd.BroadcastFloat32x4(4.1665795894e-2)
		c4    = archsimd.BroadcastFloat32x4(1.6666665459e-1)
		c5    = archsimd.BroadcastFloat32x4(5.0000001201e-1)
		one   = archsimd.BroadcastFloat32x4(1)
		mbits = archsimd.BroadcastUint32x4(0x4b400000 - 127) // Float32bits(magic) - 127
	)
	j := 0
	for ; j < n; j += 4 {
		a := archsimd.LoadFloat32x4((src[j : j+4 : j+4])).Sub(mv)
		if !allTrue(a.GreaterEqual(lo).And(a.LessEqual(hi))) {
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
		o := (*[4]float32)(dst[j : j+4 : j+4])
		e.StoreArray(o)
		s += o[0]
		s += o[1]
		s += o[2]
		s += o[3]
	}
	*sum = s
	return j
}

// expT4 is expShiftT4 without the sum (ExpShiftTo): dst[j] =
// Exp32(src[j]-mx), four at a time while all four arguments are in the fast
// range; it returns the count done.
func expT4(dst, src []float32, mx float32) int {
	defer clearUpper()
	n := len(dst) &^ 3
	src = src[:n]
	var (
		mv    = archsimd.BroadcastFloat32x4(mx)
		lo    = archsimd.BroadcastFloat32x4(expFastMin)
		hi    = archsimd.BroadcastFloat32x4(expFastMax)
		l2e   = archsimd.BroadcastFloat32x4(log2e)
		mg    = archsimd.BroadcastFloat32x4(magic)
		l2h   = archsimd.BroadcastFloat32x4(ln2Hi)
		l2l   = archsimd.BroadcastFloat32x4(ln2Lo)
		c0    = archsimd.BroadcastFloat32x4(1.9875691500e-4)
		c1    = archsimd.BroadcastFloat32x4(1.3981999507e-3)
		c2    = archsimd.BroadcastFloat32x4(8.3334519073e-3)
		c3    = archsimd.BroadcastFloat32x4(4.1665795894e-2)
		c4    = archsimd.BroadcastFloat32x4(1.6666665459e-1)
		c5    = archsimd.BroadcastFloat32x4(5.0000001201e-1)
		one   = archsimd.BroadcastFloat32x4(1)
		mbits = archsimd.BroadcastUint32x4(0x4b400000 - 127) // Float32bits(magic) - 127
	)
	j := 0
	for ; j < n; j += 4 {
		a := archsimd.LoadFloat32x4((src[j : j+4 : j+4])).Sub(mv)
		if !allTrue(a.GreaterEqual(lo).And(a.LessEqual(hi))) {
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
		e.StoreArray((*[4]float32)(dst[j : j+4 : j+4]))
	}
	return j
}

// xlogxT4 sets dst[j] = xlogx(src[j]) four at a time for j < len(dst)&^3
// while all four are normal, positive and finite: the operations of
// xlogxGo's fast branch in its order, one element per lane. It returns the
// count done. With div, the argument is the quotient x = src[j] / div[j]
// and the result is subtracted, dst[j] -= xlogx(x): KeyEntropy's three
// passes (quotient, x ln x, sum) in one, with the same roundings.
func xlogxT4(dst, src, div []float32) int {
	defer clearUpper()
	n := len(dst) &^ 3
	src = src[:n]
	if div != nil {
		div = div[:n]
	}
	var (
		lo    = archsimd.BroadcastFloat32x4(minNorm)
		hi    = archsimd.BroadcastFloat32x4(math.MaxFloat32)
		mant  = archsimd.BroadcastUint32x4(0x007fffff)
		expo1 = archsimd.BroadcastUint32x4(0x3f800000)
		bias  = archsimd.BroadcastInt32x4(127)
		s2    = archsimd.BroadcastFloat32x4(sqrt2)
		half  = archsimd.BroadcastFloat32x4(0.5)
		one   = archsimd.BroadcastFloat32x4(1)
		c0    = archsimd.BroadcastFloat32x4(7.0376836292e-2)
		c1    = archsimd.BroadcastFloat32x4(1.1514610310e-1)
		c2    = archsimd.BroadcastFloat32x4(1.1676998740e-1)
		c3    = archsimd.BroadcastFloat32x4(1.2420140846e-1)
		c4    = archsimd.BroadcastFloat32x4(1.4249322787e-1)
		c5    = archsimd.BroadcastFloat32x4(1.6668057665e-1)
		c6    = archsimd.BroadcastFloat32x4(2.0000714765e-1)
		c7    = archsimd.BroadcastFloat32x4(2.4999993993e-1)
		c8    = archsimd.BroadcastFloat32x4(3.3333331174e-1)
		l2h   = archsimd.BroadcastFloat32x4(ln2Hi)
		l2l   = archsimd.BroadcastFloat32x4(ln2Lo)
	)
	j := 0
	for ; j < n; j += 4 {
		x := archsimd.LoadFloat32x4(src[j : j+4 : j+4])
		if div != nil {
			x = x.Div(archsimd.LoadFloat32x4(div[j : j+4 : j+4]))
		}
		if !allTrue(x.GreaterEqual(lo).And(x.LessEqual(hi))) {
			break
		}
		b := x.ToBits()
		e := b.ShiftAllRight(23).BitsToInt32().Sub(bias)
		m := b.And(mant).Or(expo1).BitsToFloat32()
		big := m.Greater(s2)
		m = m.Mul(half).IfElse(big, m)
		e = e.Sub(big.ToInt32x4()) // a true lane is -1
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
		h, o := x.Mul(f.Add(y).Add(ef.Mul(l2h))), (*[4]float32)(dst[j:j+4:j+4])
		if div != nil {
			h = archsimd.LoadFloat32x4Array(o).Sub(h)
		}
		h.StoreArray(o)
	}
	return j
}

// logitsQ4 is the logits kernel for at most 4 query rows, where packing
// the keys would cost more than it saves: qt holds the rows transposed
// (qt[4c+r] = row r's element c, missing rows zero, 4*d floats), lane r
// accumulates row r's dot product with one key in index order, four keys
// at a time, for keys j < nk (a multiple of 4); it stores scale times the
// dot products at dst[r*ldd+j] for r < rows.
func logitsQ4(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	defer clearUpper()
	_ = qt[4*d-1]
	pq := unsafe.Pointer(&qt[0])
	sv := archsimd.BroadcastFloat32x4(scale)
	var t0, t1, t2, t3 [4]float32
	for j := 0; j+4 <= nk; j += 4 {
		k0 := k[j*d : j*d+d]
		k1, k2, k3 := k[(j+1)*d:(j+1)*d+d], k[(j+2)*d:(j+2)*d+d], k[(j+3)*d:(j+3)*d+d]
		k1, k2, k3 = k1[:len(k0)], k2[:len(k0)], k3[:len(k0)]
		var a0, a1, a2, a3 archsimd.Float32x4
		for c, x := range k0 {
			q := vec4(unsafe.Add(pq, 16*c))
			a0 = a0.Add(q.Mul(archsimd.BroadcastFloat32x4(x)))
			a1 = a1.Add(q.Mul(archsimd.BroadcastFloat32x4(k1[c])))
			a2 = a2.Add(q.Mul(archsimd.BroadcastFloat32x4(k2[c])))
			a3 = a3.Add(q.Mul(archsimd.BroadcastFloat32x4(k3[c])))
		}
		a0.Mul(sv).StoreArray(&t0)
		a1.Mul(sv).StoreArray(&t1)
		a2.Mul(sv).StoreArray(&t2)
		a3.Mul(sv).StoreArray(&t3)
		for r := 0; r < rows; r++ {
			o := dst[r*ldd+j : r*ldd+j+4 : r*ldd+j+4]
			o[0], o[1], o[2], o[3] = t0[r], t1[r], t2[r], t3[r]
		}
	}
}

// elemT4 applies one elementwise operation to the first len(dst)&^3
// elements, 4 lanes at a time, and returns that count: op 0 sets dst[j] +=
// a[j], op 1 dst[j] *= f, op 2 dst[j] = a[j] / b[j], op 3 dst[j] -= a[j].
func elemT4(op int, dst, a, b []float32, f float32) int {
	defer clearUpper()
	n := len(dst) &^ 3
	dst = dst[:n]
	switch op {
	case 0:
		a = a[:n]
		for j := 0; j < n; j += 4 {
			o := (*[4]float32)(dst[j : j+4 : j+4])
			archsimd.LoadFloat32x4Array(o).Add(archsimd.LoadFloat32x4(a[j : j+4 : j+4])).StoreArray(o)
		}
	case 1:
		fv := archsimd.BroadcastFloat32x4(f)
		for j := 0; j < n; j += 4 {
			o := (*[4]float32)(dst[j : j+4 : j+4])
			archsimd.LoadFloat32x4Array(o).Mul(fv).StoreArray(o)
		}
	case 2:
		a, b = a[:n], b[:n]
		for j := 0; j < n; j += 4 {
			archsimd.LoadFloat32x4(a[j : j+4 : j+4]).Div(archsimd.LoadFloat32x4(b[j : j+4 : j+4])).StoreArray((*[4]float32)(dst[j : j+4 : j+4]))
		}
	case 3:
		a = a[:n]
		for j := 0; j < n; j += 4 {
			o := (*[4]float32)(dst[j : j+4 : j+4])
			archsimd.LoadFloat32x4Array(o).Sub(archsimd.LoadFloat32x4(a[j : j+4 : j+4])).StoreArray(o)
		}
	}
	return n
}

// dot4Vec is MatMul4 (n >= 4) with the four accumulators of each dot
// product in the lanes of one Float32x4: lane l gets the products of
// elements j = l mod 4, multiplied then added, in order; the tail goes to
// lane 0 and the lanes are combined as (l0 + l1) + (l2 + l3), as dot4Go.
// Where n is a multiple of 4 (no tail) four dot products run side by side
// (dots4): four rows of x against each weight row, or with a single row
// of x four weight rows, so that four independent accumulators are in
// flight (an add's latency is then hidden) and each vector of the shared
// row is loaded once for the four; every dot product keeps its own order,
// so the bits are dot4Go's.
func dot4Vec(out, w, x []float32, nb, n, rows int) {
	n4 := n &^ 3
	if n4 != n {
		for i := 0; i < rows; i++ {
			row := w[i*n : (i+1)*n]
			for b := 0; b < nb; b++ {
				out[b*rows+i] = dot4Finish(dot1(row[:n4], x[b*n:]), row, x[b*n:(b+1)*n], n4)
			}
		}
		return
	}
	i := 0
	if nb == 1 && rows >= 4 {
		dots4(out, 1, x, w, n, rows/4)
		i = rows &^ 3
	}
	for ; i < rows; i++ {
		row := w[i*n : (i+1)*n]
		if nb >= 4 {
			dots4(out[i:], rows, row, x, n, nb/4)
		}
		for b := nb &^ 3; b < nb; b++ {
			out[b*rows+i] = dot4Finish(dot1(row, x[b*n:]), row, x[b*n:(b+1)*n], n)
		}
	}
}

// dot1 returns the four lanes of MatMul4's accumulator for s and p (the
// first len(s) elements, a multiple of 4): lane l sums s[j]*p[j] for
// j = l mod 4 in order.
func dot1(s, p []float32) []float32 {
	defer clearUpper()
	p = p[:len(s)]
	var acc archsimd.Float32x4
	ps, pp := unsafe.Pointer(&s[0]), unsafe.Pointer(&p[0])
	for j := 0; j < len(s); j += 4 {
		acc = acc.Add(vec4(unsafe.Add(ps, 4*j)).Mul(vec4(unsafe.Add(pp, 4*j))))
	}
	var lanes [4]float32
	acc.StoreArray(&lanes)
	return lanes[:]
}

// dot4Finish adds the tail row[n4:]·x[n4:] to lane 0 of the accumulator's
// lanes, in order, and returns the lanes combined as (l0 + l1) + (l2 + l3).
func dot4Finish(lanes []float32, row, x []float32, n4 int) float32 {
	lanes = lanes[:4]
	a0 := lanes[0]
	x = x[:len(row)]
	for j := n4; j < len(row); j++ {
		a0 += float32(row[j] * x[j])
	}
	return (a0 + lanes[1]) + (lanes[2] + lanes[3])
}

// keyBlockT4 is keyBlock on 4 lanes: the block's keys 0-3 and 4-7 (kt[8c+l])
// in two registers, lane l of each the dot product of a query row with its
// key, products rounded and added in the order of c.
func keyBlockT4(dst []float32, ldd int, q []float32, rows int, kt []float32, d int) {
	_ = kt[8*d-1]
	_ = q[rows*d-1]
	_ = dst[(rows-1)*ldd+7]
	defer clearUpper()
	pk := unsafe.Pointer(&kt[0])
	i := 0
	for ; i+2 <= rows; i += 2 {
		q0 := q[i*d : i*d+d]
		q1 := q[(i+1)*d : (i+1)*d+d]
		q1 = q1[:len(q0)]
		var a0, a1, b0, b1 archsimd.Float32x4
		for c, x := range q0 {
			lo, hi := vec4(unsafe.Add(pk, 32*c)), vec4(unsafe.Add(pk, 32*c+16))
			x0, x1 := archsimd.BroadcastFloat32x4(x), archsimd.BroadcastFloat32x4(q1[c])
			a0 = a0.Add(x0.Mul(lo))
			a1 = a1.Add(x0.Mul(hi))
			b0 = b0.Add(x1.Mul(lo))
			b1 = b1.Add(x1.Mul(hi))
		}
		a0.StoreArray((*[4]float32)(dst[i*ldd:]))
		a1.StoreArray((*[4]float32)(dst[i*ldd+4:]))
		b0.StoreArray((*[4]float32)(dst[(i+1)*ldd:]))
		b1.StoreArray((*[4]float32)(dst[(i+1)*ldd+4:]))
	}
	for ; i < rows; i++ {
		x := unsafe.Pointer(&q[i*d])
		var a0, a1 archsimd.Float32x4
		for c := 0; c < d; c++ {
			xv := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 4*c)))
			a0 = a0.Add(xv.Mul(vec4(unsafe.Add(pk, 32*c))))
			a1 = a1.Add(xv.Mul(vec4(unsafe.Add(pk, 32*c+16))))
		}
		a0.StoreArray((*[4]float32)(dst[i*ldd:]))
		a1.StoreArray((*[4]float32)(dst[i*ldd+4:]))
	}
}

// blockDotsT4 is BlockDots for 4 packed rows (wt[4c+r] = row r's element c,
// missing rows zero, 4*d floats) and the vectors j < nk (a multiple of 4),
// four at a time: lane r accumulates row r's products with one vector over
// a block in index order, and adds the block's sum to the total; the
// totals of rows r < rows are stored at dst[j*ldd+r].
func blockDotsT4(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	defer clearUpper()
	_ = wt[4*d-1]
	pw := unsafe.Pointer(&wt[0])
	var t [4][4]float32
	for j := 0; j+4 <= nk; j += 4 {
		x0 := x[j*d : j*d+d]
		x1, x2, x3 := x[(j+1)*d:(j+1)*d+d], x[(j+2)*d:(j+2)*d+d], x[(j+3)*d:(j+3)*d+d]
		var s0, s1, s2, s3 archsimd.Float32x4
		for b0 := 0; b0 < d; b0 += bs {
			b1 := min(b0+bs, d)
			y0 := x0[b0:b1]
			y1, y2, y3 := x1[b0:b1], x2[b0:b1], x3[b0:b1]
			y1, y2, y3 = y1[:len(y0)], y2[:len(y0)], y3[:len(y0)]
			pb := unsafe.Add(pw, 16*b0)
			var a0, a1, a2, a3 archsimd.Float32x4
			for c, v := range y0 {
				q := vec4(unsafe.Add(pb, 16*c))
				a0 = a0.Add(q.Mul(archsimd.BroadcastFloat32x4(v)))
				a1 = a1.Add(q.Mul(archsimd.BroadcastFloat32x4(y1[c])))
				a2 = a2.Add(q.Mul(archsimd.BroadcastFloat32x4(y2[c])))
				a3 = a3.Add(q.Mul(archsimd.BroadcastFloat32x4(y3[c])))
			}
			s0, s1, s2, s3 = s0.Add(a0), s1.Add(a1), s2.Add(a2), s3.Add(a3)
		}
		s0.StoreArray(&t[0])
		s1.StoreArray(&t[1])
		s2.StoreArray(&t[2])
		s3.StoreArray(&t[3])
		for i := range t {
			copy(dst[(j+i)*ldd:(j+i)*ldd+rows], t[i][:rows])
		}
	}
}

// maxT4 is the largest of x[:len(x)&^3] and whether none of them is NaN,
// four lane maxima at a time (see rowMax). x holds at least 4 elements.
func maxT4(x []float32) (float32, bool) {
	defer clearUpper()
	n := len(x) &^ 3
	m := archsimd.LoadFloat32x4(x[:4:4])
	ok := m.Equal(m)
	for j := 4; j < n; j += 4 {
		v := archsimd.LoadFloat32x4(x[j : j+4 : j+4])
		m = m.Max(v)
		ok = ok.And(v.Equal(v))
	}
	if !allTrue(ok) {
		return 0, false
	}
	var l [4]float32
	m.StoreArray(&l)
	return max(l[0], l[1], l[2], l[3]), true
}

// dots4Vec sets out[r*ostride] to MatMul4's dot product of s with row r of
// p (row r at p[r*n:], n = len(s) a multiple of 4, > 0) for the
// 4*blocks rows, four side by side: lane l of each accumulator sums
// s[j]*p_r[j] for j = l mod 4 in order, then (l0 + l1) + (l2 + l3).
func dots4Vec(out []float32, ostride int, s, p []float32, n, blocks int) {
	defer clearUpper()
	_ = s[n-1]
	_ = p[4*blocks*n-1]
	_ = out[(4*blocks-1)*ostride]
	var l [16]float32
	for blk := 0; blk < blocks; blk++ {
		dots4Block(&l, unsafe.Pointer(&s[0]), unsafe.Pointer(&p[4*blk*n]), n)
		for k := range 4 {
			out[(4*blk+k)*ostride] = (l[4*k] + l[4*k+1]) + (l[4*k+2] + l[4*k+3])
		}
	}
}

// dots4Block stores at l the four accumulators of dots4 for s and the four
// rows at q (n floats apart).
func dots4Block(l *[16]float32, s, q unsafe.Pointer, n int) {
	q1, q2, q3 := unsafe.Add(q, 4*n), unsafe.Add(q, 8*n), unsafe.Add(q, 12*n)
	var a0, a1, a2, a3 archsimd.Float32x4
	for j := 0; j < n; j += 4 {
		sv := vec4(unsafe.Add(s, 4*j))
		a0 = a0.Add(sv.Mul(vec4(unsafe.Add(q, 4*j))))
		a1 = a1.Add(sv.Mul(vec4(unsafe.Add(q1, 4*j))))
		a2 = a2.Add(sv.Mul(vec4(unsafe.Add(q2, 4*j))))
		a3 = a3.Add(sv.Mul(vec4(unsafe.Add(q3, 4*j))))
	}
	a0.StoreArray((*[4]float32)(l[0:4]))
	a1.StoreArray((*[4]float32)(l[4:8]))
	a2.StoreArray((*[4]float32)(l[8:12]))
	a3.StoreArray((*[4]float32)(l[12:16]))
}
