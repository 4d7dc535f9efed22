//go:build goexperiment.simd && !purego

package kernel

// What both wasm builds with archsimd share (simd_wasm.go with the SIMD128
// assembly, simd_noasm_wasm.go without).

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

// The 8-lane kernels are never called when vecLanes is 4.

func logitsQ8(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	panic("kernel: no 8-lane kernels in wasm")
}

func blockDotsT8(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	panic("kernel: no 8-lane kernels in wasm")
}

func maxT8(x []float32) (float32, bool) {
	panic("kernel: no 8-lane kernels in wasm")
}

func shareTargetsT4(y []float64, f float64, tot, p []float64, sign float64, x []float32) int {
	panic("kernel: no 8-lane kernels in wasm")
}

func shareOutT4(out []float32, nonY, by []float64, sign float64, y []float32, f float64, sv []float32, g float64, acc []float32, den float64) int {
	panic("kernel: no 8-lane kernels in wasm")
}

func xlogxT8(dst, src []float32) int {
	panic("kernel: no 8-lane kernels in wasm")
}
