//go:build !goexperiment.simd || !(amd64 || wasm) || purego

package kernel

// vecLanes is 0 and vecAvail empty: without GOEXPERIMENT=simd (or on
// another architecture, or with -tags purego) there are no archsimd
// kernels. (A variable, as where there are, so that tests can set it.)
var (
	vecAvail []int
	vecLanes = 0
)

// The archsimd kernels are never called when vecLanes is 0.

func logitsT4(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: built without archsimd kernels")
}

func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: built without archsimd kernels")
}

func axpyT4(o, coef []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: built without archsimd kernels")
}

func axpyT8(o, coef []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: built without archsimd kernels")
}

func axpy2T4(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: built without archsimd kernels")
}

func axpy2T8(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: built without archsimd kernels")
}

func expShiftT4(dst, src []float32, mx float32, sum *float32) int {
	panic("kernel: built without archsimd kernels")
}

func xlogxT4(dst, src, div []float32) int {
	panic("kernel: built without archsimd kernels")
}

func logitsQ4(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	panic("kernel: built without archsimd kernels")
}

func elemT4(op int, dst, a, b []float32, f float32) int {
	panic("kernel: built without archsimd kernels")
}

func dot4Vec(out, w, x []float32, nb, n, rows int) {
	panic("kernel: built without archsimd kernels")
}

func keyBlockT4(dst []float32, ldd int, q []float32, rows int, kt []float32, d int) {
	panic("kernel: built without archsimd kernels")
}

func blockDotsT4(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	panic("kernel: built without archsimd kernels")
}

// wideKeys is false: there are no vector logits kernels (see simd_wasm.go).
const wideKeys = false

// asmExp is false: the exponentials run expT8 with 8 lanes only (see
// simd_wasm.go).
const asmExp = false

// expShiftVec is expShiftT4 (simd_wasm.go has an assembly one).
func expShiftVec(dst, src []float32, mx float32, sum *float32) int {
	return expShiftT4(dst, src, mx, sum)
}

// wideWiden is false: AxpyWidenRows runs widenRowsT8 with 8 lanes only
// (see simd_wasm.go).
const wideWiden = false

// wideAxpy is false: there are no vector weighted sums (see simd_wasm.go).
const wideAxpy = false

func maxT4(x []float32) (float32, bool) {
	panic("kernel: built without archsimd kernels")
}

// widenRowsT8 is never called here: vecLanes is not 8.
func widenRowsT8(dst []float64, w []float64, idx []int32, x []float32, ld int) int {
	panic("kernel: no 8-lane kernels in this build")
}

// expT8 is never called here: vecLanes is not 8.
func expT8(dst, src []float32, mx float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

func expT4(dst, src []float32, mx float32) int {
	panic("kernel: built without archsimd kernels")
}

// packVec packs nothing: packRows's Go loop packs.
func packVec(wt []float32, lanes int, w []float32, rows, d int) bool { return false }

// asmXlogx is false: x ln x runs xlogxT8 with 8 lanes only (see
// simd_wasm.go).
const asmXlogx = false

// xlogxT8 is never called here: vecLanes is not 8.
func xlogxT8(dst, src, div []float32) int {
	panic("kernel: no 8-lane kernels in this build")
}
