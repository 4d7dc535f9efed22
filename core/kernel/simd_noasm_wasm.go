//go:build goexperiment.simd && !purego && wasmnoasm

package kernel

// The wasm build without simd_wasm.s (build tag wasmnoasm): every vector
// kernel is simd.go's archsimd code, 4 lanes wide. It exists to measure
// what the assembly buys (scripts/bench-ratio.sh -noasm, see the header
// of simd_wasm.s); it gives the same bits.

// The wide kernels of simd_wasm.s are left out: the 4-lane ones run.
const (
	wideKeys  = false
	wideAxpy  = false
	wideWiden = false
	asmExp    = false
)

// packVec leaves every panel to packRows.
func packVec(wt []float32, lanes int, w []float32, rows, d int) bool { return false }

// expShiftVec is expShiftT4.
func expShiftVec(dst, src []float32, mx float32, sum *float32) int {
	return expShiftT4(dst, src, mx, sum)
}

// dots4 is dots4Vec.
func dots4(out []float32, ostride int, s, p []float32, n, blocks int) {
	dots4Vec(out, ostride, s, p, n, blocks)
}

func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: no 8-key logits in this build")
}

func axpyT8(o, coef []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: no 8-lane kernels in this build")
}

func axpy2T8(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	panic("kernel: no 8-lane kernels in this build")
}

func widenRowsT8(dst []float64, w []float64, idx []int32, x []float32, ld int) int {
	panic("kernel: no 8-lane kernels in this build")
}

func expT8(dst, src []float32, mx float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

// asmXlogx is false: x ln x runs xlogxT8 with 8 lanes only (see
// simd_wasm.go).
const asmXlogx = false

// xlogxT8 is never called here: vecLanes is not 8.
func xlogxT8(dst, src, div []float32) int {
	panic("kernel: no 8-lane kernels in this build")
}
