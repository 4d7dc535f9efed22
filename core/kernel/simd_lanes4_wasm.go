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
