//go:build goexperiment.simd && !purego

package kernel

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

// logitsT8 is never called when vecLanes is 4.
func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: no 8-lane kernels in wasm")
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
