//go:build goexperiment.simd && !purego

package kernel

import (
	"simd/archsimd"
	"unsafe"
)

// vecLanes is 4: WebAssembly's SIMD128 registers hold 4 float32s, and the
// 4-lane kernels of simd.go are compiled to them. vecAvail lists the widths
// this build runs (see simd_amd64.go).
var (
	vecAvail = []int{4}
	vecLanes = 4
)

// clearUpper does nothing: WebAssembly has no upper register halves (see
// simd_amd64.go).
func clearUpper() {}

// wideKeys says that the logits kernel takes keys 8 at a time (logitsT8)
// although vecLanes is 4: in SIMD128, two 4-lane halves per row share each
// query element's splat, half the scalar loads and splats per product of
// the 4-key kernel.
const wideKeys = true

// logitsT8 is the 8-key logits kernel (see the amd64 one) in two 4-lane
// halves: kt holds 8 keys transposed (kt[8c+l] = key l's element c), lanes
// 0-3 and 4-7 each run one key's dot product with a query row in the
// order of c, as logitsT4's lanes do; four rows at a time.
func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	_ = kt[8*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+7]
	pk := unsafe.Pointer(&kt[0])
	sv := archsimd.BroadcastFloat32x4(scale)
	i := 0
	for ; i+4 <= m; i += 4 {
		pq := unsafe.Pointer(&q[i*d])
		var a0, b0, a1, b1, a2, b2, a3, b3 archsimd.Float32x4
		for c := 0; c < d; c++ {
			p := unsafe.Add(pk, 32*c)
			lo, hi := vec4(p), vec4(unsafe.Add(p, 16))
			x := unsafe.Add(pq, 4*c)
			x0 := archsimd.BroadcastFloat32x4(*(*float32)(x))
			a0, b0 = a0.Add(x0.Mul(lo)), b0.Add(x0.Mul(hi))
			x1 := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 4*d)))
			a1, b1 = a1.Add(x1.Mul(lo)), b1.Add(x1.Mul(hi))
			x2 := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 8*d)))
			a2, b2 = a2.Add(x2.Mul(lo)), b2.Add(x2.Mul(hi))
			x3 := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 12*d)))
			a3, b3 = a3.Add(x3.Mul(lo)), b3.Add(x3.Mul(hi))
		}
		a0.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd:]))
		b0.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd+4:]))
		a1.Mul(sv).StoreArray((*[4]float32)(dst[(i+1)*ldd:]))
		b1.Mul(sv).StoreArray((*[4]float32)(dst[(i+1)*ldd+4:]))
		a2.Mul(sv).StoreArray((*[4]float32)(dst[(i+2)*ldd:]))
		b2.Mul(sv).StoreArray((*[4]float32)(dst[(i+2)*ldd+4:]))
		a3.Mul(sv).StoreArray((*[4]float32)(dst[(i+3)*ldd:]))
		b3.Mul(sv).StoreArray((*[4]float32)(dst[(i+3)*ldd+4:]))
	}
	for ; i < m; i++ {
		x := unsafe.Pointer(&q[i*d])
		var a, b archsimd.Float32x4
		for c := 0; c < d; c++ {
			xc := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 4*c)))
			p := unsafe.Add(pk, 32*c)
			a, b = a.Add(xc.Mul(vec4(p))), b.Add(xc.Mul(vec4(unsafe.Add(p, 16))))
		}
		a.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd:]))
		b.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd+4:]))
	}
}

// axpyT8 is never called when vecLanes is 4.
func axpyT8(o, coef []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: no 8-lane kernels in wasm")
}

// axpy2T8 is never called when vecLanes is 4.
func axpy2T8(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: no 8-lane kernels in wasm")
}

// logitsQ8 is never called when vecLanes is 4.
func logitsQ8(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	panic("kernel: no 8-lane kernels in wasm")
}

// blockDotsT8 is never called when vecLanes is 4.
func blockDotsT8(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	panic("kernel: no 8-lane kernels in wasm")
}

// maxT8 is never called when vecLanes is 4.
func maxT8(x []float32) (float32, bool) {
	panic("kernel: no 8-lane kernels in wasm")
}

// widenRowsT8 is never called here: vecLanes is not 8.
func widenRowsT8(dst []float64, w []float64, idx []int32, x []float32, ld int) int {
	panic("kernel: no 8-lane kernels in this build")
}

// expT8 is never called here: vecLanes is not 8.
func expT8(dst, src []float32, mx float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

func shareTargetsT4(y []float64, f float64, tot, p []float64, sign float64, x []float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

func shareOutT4(out []float32, nonY, by []float64, sign float64, y []float32, f float64, sv []float32, g float64, acc []float32, den float64) int {
	panic("kernel: no 8-lane kernels in this build")
}

// xlogxT8 is never called here: vecLanes is not 8.
func xlogxT8(dst, src []float32) int {
	panic("kernel: no 8-lane kernels in this build")
}
