//go:build goexperiment.simd && !purego

package solve

import (
	"simd/archsimd"
	"unsafe"
)

// vecLanes is 0 on amd64: the AVX and SSE2 assembly of kernel_amd64.s runs
// axpy, axpy4 and ger4. vecAvail lists the width of the archsimd loops of
// simd.go that this CPU could run (2, with AVX2, which archsimd's
// Broadcast needs), for tests.
var (
	vecAvail = availAMD64()
	vecLanes = 0
)

func availAMD64() []int {
	if archsimd.X86.AVX2() {
		return []int{2}
	}
	return nil
}

// reflectRowsV2 does no columns on amd64, where the AVX assembly reflects
// (reflectRowsVec): with the two-lane loops (tests) reflectRows runs axpy4
// and ger4.
func reflectRowsV2(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	return 0
}

// dotsVec does nothing here: Dots runs dot per row (simd_wasm.go has
// an assembly one).
func dotsVec(dst, w, x []float64) bool { return false }

// hasVec4 says that this build has the four-lane archsimd loops below
// (colMaxAbsV4, scaleColsV4), which run where the AVX assembly does
// (useAsm and useAVX: a CPU with AVX2).
const hasVec4 = true

func vec4(p unsafe.Pointer) archsimd.Float64x4 {
	return archsimd.LoadFloat64x4Array((*[4]float64)(p))
}

func store4(v archsimd.Float64x4, p unsafe.Pointer) { v.StoreArray((*[4]float64)(p)) }

// colMaxAbsV4 is colMaxAbs over the columns below j0 (a multiple of 4),
// four at a time; it reports false on a NaN.
func colMaxAbsV4(cm, a []float64, m, n, j0 int) bool {
	defer archsimd.ClearAVXUpperBits()
	mask := archsimd.BroadcastUint64x4(1<<63 - 1)
	var nan archsimd.Mask64x4
	pc := unsafe.Pointer(&cm[0])
	for j := 0; j < j0; j += 4 {
		c := vec4(unsafe.Add(pc, 8*j))
		for i := 0; i < m; i++ {
			v := vec4(unsafe.Pointer(&a[i*n+j]))
			nan = nan.Or(v.NotEqual(v))
			c = c.Max(v.AsUint64x4().And(mask).AsFloat64x4())
		}
		store4(c, unsafe.Add(pc, 8*j))
	}
	return nan.ToBits() == 0
}

// scaleColsV4 is scaleCols over the columns below j0 (a multiple of 4),
// four at a time.
func scaleColsV4(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64, j0 int) {
	defer archsimd.ClearAVXUpperBits()
	for j := 0; j < j0; j += 4 {
		var sv archsimd.Float64x4
		if dst != nil {
			sv = vec4(unsafe.Pointer(&scl[j]))
		}
		var acc archsimd.Float64x4
		if nrm != nil {
			acc = vec4(unsafe.Pointer(&nrm[j]))
		}
		if dst == nil {
			for i := 0; i < m; i++ {
				t := vec4(unsafe.Pointer(&a[i*n+j]))
				acc = acc.Add(t.Mul(t))
			}
		} else {
			for i := 0; i < m; i++ {
				t := vec4(unsafe.Pointer(&a[i*n+j])).Mul(sv)
				store4(t, unsafe.Pointer(&dst[i*ld+j]))
				acc = acc.Add(t.Mul(t))
			}
		}
		if nrm != nil {
			store4(acc, unsafe.Pointer(&nrm[j]))
		}
	}
}

// allFiniteV4 is allFinite for len(a) a multiple of 4, four at a time.
func allFiniteV4(a []float64) bool {
	defer archsimd.ClearAVXUpperBits()
	var zero archsimd.Float64x4
	var bad archsimd.Mask64x4
	p := unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 4 {
		v := vec4(unsafe.Add(p, 8*i))
		bad = bad.Or(v.Sub(v).NotEqual(zero))
	}
	return bad.ToBits() == 0
}

// absMaxV4 is absMax for len(a) a multiple of 4, four lanes of maxima.
func absMaxV4(a []float64) float64 {
	mask := archsimd.BroadcastUint64x4(1<<63 - 1)
	var c archsimd.Float64x4
	p := unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 4 {
		c = c.Max(vec4(unsafe.Add(p, 8*i)).AsUint64x4().And(mask).AsFloat64x4())
	}
	var b [4]float64
	c.StoreArray(&b)
	// Before the scalar max, not deferred: SSE instructions after 256-bit
	// ones pay the switch between the two states.
	archsimd.ClearAVXUpperBits()
	return max(b[0], b[1], b[2], b[3])
}

// scaleToV4 is scaleTo for len(a) a multiple of 4, four at a time.
func scaleToV4(dst, a []float64, f float64) {
	defer archsimd.ClearAVXUpperBits()
	fv := archsimd.BroadcastFloat64x4(f)
	pd, pa := unsafe.Pointer(&dst[0]), unsafe.Pointer(&a[0])
	for i := 0; i < len(a); i += 4 {
		store4(vec4(unsafe.Add(pa, 8*i)).Mul(fv), unsafe.Add(pd, 8*i))
	}
}
