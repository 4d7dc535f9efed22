//go:build goexperiment.simd && (amd64 || wasm) && !purego

package solve

import (
	"simd/archsimd"
	"unsafe"
)

// The 2-lane simd/archsimd loops of axpy, axpy4 and ger4: one source for
// WebAssembly SIMD128 (where they run) and amd64 (where the AVX and SSE2
// assembly runs; tests run these too on a CPU with AVX2). Each lane is one
// element, with the multiplies and adds of the Go loops in their order, so
// the bits are the same.

func vec2(p unsafe.Pointer) archsimd.Float64x2 {
	return archsimd.LoadFloat64x2Array((*[2]float64)(p))
}

func store2(v archsimd.Float64x2, p unsafe.Pointer) { v.StoreArray((*[2]float64)(p)) }

// axpyV2 sets dst[i] += alpha*x[i] for i < n (a multiple of 2; the caller
// has checked the lengths), 4 elements per step, then 2.
func axpyV2(dst []float64, n int, alpha float64, x []float64) {
	pd, px := unsafe.Pointer(&dst[0]), unsafe.Pointer(&x[0])
	a := archsimd.BroadcastFloat64x2(alpha)
	i := 0
	for ; i+4 <= n; i += 4 {
		d, s := unsafe.Add(pd, 8*i), unsafe.Add(px, 8*i)
		store2(vec2(d).Add(a.Mul(vec2(s))), d)
		store2(vec2(unsafe.Add(d, 16)).Add(a.Mul(vec2(unsafe.Add(s, 16)))), unsafe.Add(d, 16))
	}
	if i < n {
		d := unsafe.Add(pd, 8*i)
		store2(vec2(d).Add(a.Mul(vec2(unsafe.Add(px, 8*i)))), d)
	}
}

// axpy4V2 sets dst[i] += a0*x0[i]; += a1*x1[i]; += a2*x2[i]; += a3*x3[i], in
// that order, for i < n (a multiple of 2; the caller has checked the
// lengths).
func axpy4V2(dst []float64, n int, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	pd := unsafe.Pointer(&dst[0])
	p0, p1, p2, p3 := unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&x2[0]), unsafe.Pointer(&x3[0])
	b0, b1, b2, b3 := archsimd.BroadcastFloat64x2(a0), archsimd.BroadcastFloat64x2(a1), archsimd.BroadcastFloat64x2(a2), archsimd.BroadcastFloat64x2(a3)
	for i := 0; i < n; i += 2 {
		o := 8 * i
		d := unsafe.Add(pd, o)
		t := vec2(d).Add(b0.Mul(vec2(unsafe.Add(p0, o))))
		t = t.Add(b1.Mul(vec2(unsafe.Add(p1, o))))
		t = t.Add(b2.Mul(vec2(unsafe.Add(p2, o))))
		t = t.Add(b3.Mul(vec2(unsafe.Add(p3, o))))
		store2(t, d)
	}
}

// ger4V2 sets xk[i] += ak*s[i] for k = 0..3 and i < n (a multiple of 2; the
// caller has checked the lengths).
func ger4V2(s []float64, n int, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	ps := unsafe.Pointer(&s[0])
	p0, p1, p2, p3 := unsafe.Pointer(&x0[0]), unsafe.Pointer(&x1[0]), unsafe.Pointer(&x2[0]), unsafe.Pointer(&x3[0])
	b0, b1, b2, b3 := archsimd.BroadcastFloat64x2(a0), archsimd.BroadcastFloat64x2(a1), archsimd.BroadcastFloat64x2(a2), archsimd.BroadcastFloat64x2(a3)
	for i := 0; i < n; i += 2 {
		o := 8 * i
		v := vec2(unsafe.Add(ps, o))
		store2(vec2(unsafe.Add(p0, o)).Add(b0.Mul(v)), unsafe.Add(p0, o))
		store2(vec2(unsafe.Add(p1, o)).Add(b1.Mul(v)), unsafe.Add(p1, o))
		store2(vec2(unsafe.Add(p2, o)).Add(b2.Mul(v)), unsafe.Add(p2, o))
		store2(vec2(unsafe.Add(p3, o)).Add(b3.Mul(v)), unsafe.Add(p3, o))
	}
}

// reflectRowsV2 is reflectRows over the first len(head)&^1 columns, in
// strips of 16, then 8, then 2 columns whose sums s stay in registers
// over all the rows (where axpy4 and ger4 pass s through memory four
// rows at a time): s = head + v[0]*row0 + v[1]*row1 + ... in the order of
// the rows, head += (-tau)*s, then row r += (-(tau*v[r]))*s; each lane the
// Go loops' multiplies and adds in their order. It returns the count of
// columns done; the caller has checked that every row is in bounds.
func reflectRowsV2(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	n := len(head) &^ 1
	if n == 0 || len(v) == 0 {
		return 0
	}
	ph, pr, pv := unsafe.Pointer(&head[0]), unsafe.Pointer(&rows[0]), unsafe.Pointer(&v[0])
	nv := len(v)
	ntau := archsimd.BroadcastFloat64x2(-tau)
	ld := 8 * stride
	c := 0
	for ; c+16 <= n; c += 16 {
		h := unsafe.Add(ph, 8*c)
		s0, s1, s2, s3 := vec2(h), vec2(unsafe.Add(h, 16)), vec2(unsafe.Add(h, 32)), vec2(unsafe.Add(h, 48))
		s4, s5, s6, s7 := vec2(unsafe.Add(h, 64)), vec2(unsafe.Add(h, 80)), vec2(unsafe.Add(h, 96)), vec2(unsafe.Add(h, 112))
		p := unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			a := archsimd.BroadcastFloat64x2(*(*float64)(unsafe.Add(pv, 8*r)))
			s0 = s0.Add(a.Mul(vec2(p)))
			s1 = s1.Add(a.Mul(vec2(unsafe.Add(p, 16))))
			s2 = s2.Add(a.Mul(vec2(unsafe.Add(p, 32))))
			s3 = s3.Add(a.Mul(vec2(unsafe.Add(p, 48))))
			s4 = s4.Add(a.Mul(vec2(unsafe.Add(p, 64))))
			s5 = s5.Add(a.Mul(vec2(unsafe.Add(p, 80))))
			s6 = s6.Add(a.Mul(vec2(unsafe.Add(p, 96))))
			s7 = s7.Add(a.Mul(vec2(unsafe.Add(p, 112))))
			p = unsafe.Add(p, ld)
		}
		store2(vec2(h).Add(ntau.Mul(s0)), h)
		store2(vec2(unsafe.Add(h, 16)).Add(ntau.Mul(s1)), unsafe.Add(h, 16))
		store2(vec2(unsafe.Add(h, 32)).Add(ntau.Mul(s2)), unsafe.Add(h, 32))
		store2(vec2(unsafe.Add(h, 48)).Add(ntau.Mul(s3)), unsafe.Add(h, 48))
		store2(vec2(unsafe.Add(h, 64)).Add(ntau.Mul(s4)), unsafe.Add(h, 64))
		store2(vec2(unsafe.Add(h, 80)).Add(ntau.Mul(s5)), unsafe.Add(h, 80))
		store2(vec2(unsafe.Add(h, 96)).Add(ntau.Mul(s6)), unsafe.Add(h, 96))
		store2(vec2(unsafe.Add(h, 112)).Add(ntau.Mul(s7)), unsafe.Add(h, 112))
		p = unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			a := archsimd.BroadcastFloat64x2(-float64(tau * *(*float64)(unsafe.Add(pv, 8*r))))
			store2(vec2(p).Add(a.Mul(s0)), p)
			store2(vec2(unsafe.Add(p, 16)).Add(a.Mul(s1)), unsafe.Add(p, 16))
			store2(vec2(unsafe.Add(p, 32)).Add(a.Mul(s2)), unsafe.Add(p, 32))
			store2(vec2(unsafe.Add(p, 48)).Add(a.Mul(s3)), unsafe.Add(p, 48))
			store2(vec2(unsafe.Add(p, 64)).Add(a.Mul(s4)), unsafe.Add(p, 64))
			store2(vec2(unsafe.Add(p, 80)).Add(a.Mul(s5)), unsafe.Add(p, 80))
			store2(vec2(unsafe.Add(p, 96)).Add(a.Mul(s6)), unsafe.Add(p, 96))
			store2(vec2(unsafe.Add(p, 112)).Add(a.Mul(s7)), unsafe.Add(p, 112))
			p = unsafe.Add(p, ld)
		}
	}
	for ; c+8 <= n; c += 8 {
		h := unsafe.Add(ph, 8*c)
		s0, s1, s2, s3 := vec2(h), vec2(unsafe.Add(h, 16)), vec2(unsafe.Add(h, 32)), vec2(unsafe.Add(h, 48))
		p := unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			a := archsimd.BroadcastFloat64x2(*(*float64)(unsafe.Add(pv, 8*r)))
			s0 = s0.Add(a.Mul(vec2(p)))
			s1 = s1.Add(a.Mul(vec2(unsafe.Add(p, 16))))
			s2 = s2.Add(a.Mul(vec2(unsafe.Add(p, 32))))
			s3 = s3.Add(a.Mul(vec2(unsafe.Add(p, 48))))
			p = unsafe.Add(p, ld)
		}
		store2(vec2(h).Add(ntau.Mul(s0)), h)
		store2(vec2(unsafe.Add(h, 16)).Add(ntau.Mul(s1)), unsafe.Add(h, 16))
		store2(vec2(unsafe.Add(h, 32)).Add(ntau.Mul(s2)), unsafe.Add(h, 32))
		store2(vec2(unsafe.Add(h, 48)).Add(ntau.Mul(s3)), unsafe.Add(h, 48))
		p = unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			a := archsimd.BroadcastFloat64x2(-float64(tau * *(*float64)(unsafe.Add(pv, 8*r))))
			store2(vec2(p).Add(a.Mul(s0)), p)
			store2(vec2(unsafe.Add(p, 16)).Add(a.Mul(s1)), unsafe.Add(p, 16))
			store2(vec2(unsafe.Add(p, 32)).Add(a.Mul(s2)), unsafe.Add(p, 32))
			store2(vec2(unsafe.Add(p, 48)).Add(a.Mul(s3)), unsafe.Add(p, 48))
			p = unsafe.Add(p, ld)
		}
	}
	for ; c < n; c += 2 {
		h := unsafe.Add(ph, 8*c)
		s := vec2(h)
		p := unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			s = s.Add(archsimd.BroadcastFloat64x2(*(*float64)(unsafe.Add(pv, 8*r))).Mul(vec2(p)))
			p = unsafe.Add(p, ld)
		}
		store2(vec2(h).Add(ntau.Mul(s)), h)
		p = unsafe.Add(pr, 8*c)
		for r := 0; r < nv; r++ {
			a := archsimd.BroadcastFloat64x2(-float64(tau * *(*float64)(unsafe.Add(pv, 8*r))))
			store2(vec2(p).Add(a.Mul(s)), p)
			p = unsafe.Add(p, ld)
		}
	}
	return n
}

// colMaxAbsV2 is colMaxAbs over the columns below j0 (a multiple of 2),
// two at a time; it reports false on a NaN.
func colMaxAbsV2(cm, a []float64, m, n, j0 int) bool {
	var nan archsimd.Mask64x2
	pc := unsafe.Pointer(&cm[0])
	for j := 0; j < j0; j += 2 {
		c := vec2(unsafe.Add(pc, 8*j))
		for i := 0; i < m; i++ {
			v := vec2(unsafe.Pointer(&a[i*n+j]))
			nan = nan.Or(v.NotEqual(v))
			c = c.Max(v.Abs()) // both non-negative: no signed zeros to tell apart
		}
		store2(c, unsafe.Add(pc, 8*j))
	}
	var b [2]int64
	nan.ToInt64x2().StoreArray(&b)
	return b[0]|b[1] == 0
}

// scaleColsV2 is scaleCols over the columns below j0 (a multiple of 2),
// two at a time.
func scaleColsV2(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64, j0 int) {
	for j := 0; j < j0; j += 2 {
		var sv archsimd.Float64x2
		if dst != nil {
			sv = vec2(unsafe.Pointer(&scl[j]))
		}
		var acc archsimd.Float64x2
		if nrm != nil {
			acc = vec2(unsafe.Pointer(&nrm[j]))
		}
		if dst == nil {
			for i := 0; i < m; i++ {
				t := vec2(unsafe.Pointer(&a[i*n+j]))
				acc = acc.Add(t.Mul(t))
			}
		} else {
			for i := 0; i < m; i++ {
				t := vec2(unsafe.Pointer(&a[i*n+j])).Mul(sv)
				store2(t, unsafe.Pointer(&dst[i*ld+j]))
				acc = acc.Add(t.Mul(t))
			}
		}
		if nrm != nil {
			store2(acc, unsafe.Pointer(&nrm[j]))
		}
	}
}

// allFiniteV2 is allFinite for len(a) a multiple of 2, two at a time.
func allFiniteV2(a []float64) bool {
	var zero archsimd.Float64x2
	var bad archsimd.Mask64x2
	p := unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 2 {
		v := vec2(unsafe.Add(p, 8*i))
		bad = bad.Or(v.Sub(v).NotEqual(zero))
	}
	var b [2]int64
	bad.ToInt64x2().StoreArray(&b)
	return b[0]|b[1] == 0
}

// absMaxV2 is absMax for len(a) a multiple of 2, two lanes of maxima.
func absMaxV2(a []float64) float64 {
	var c archsimd.Float64x2
	p := unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 2 {
		c = c.Max(vec2(unsafe.Add(p, 8*i)).Abs())
	}
	var b [2]float64
	c.StoreArray(&b)
	return max(b[0], b[1])
}

// scaleToV2 is scaleTo for len(a) a multiple of 2, two at a time.
func scaleToV2(dst, a []float64, f float64) {
	fv := archsimd.BroadcastFloat64x2(f)
	pd, pa := unsafe.Pointer(&dst[0]), unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 2 {
		store2(vec2(unsafe.Add(pa, 8*i)).Mul(fv), unsafe.Add(pd, 8*i))
	}
}
