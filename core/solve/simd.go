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
