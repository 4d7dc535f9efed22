//go:build !goexperiment.simd || !amd64 || purego

package kernel

// The 8-lane kernels that only simd_amd64.go has: every other build (wasm,
// simd_none.go's builds) declares them here and never calls them, since
// vecLanes is not 8 there.

// wide16 and zmmAvail are false: no AVX-512 blocks (simd_amd64.go).
var (
	zmmAvail = false
	wide16   = false
)

func logitsQ8(dst []float32, ldd, rows int, qt, k []float32, nk, d int, scale float32) {
	panic("kernel: no 8-lane kernels in this build")
}

func logitsT16(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: no 8-lane kernels in this build")
}

func blockDotsT8(dst []float32, ldd, rows int, wt, x []float32, nk, d, bs int) {
	panic("kernel: no 8-lane kernels in this build")
}

func maxT8(x []float32) (float32, bool) {
	panic("kernel: no 8-lane kernels in this build")
}

func shareTargetsT4(y []float64, f float64, tot, p []float64, sign float64, x []float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

func shareOutT4(out []float32, nonY, by []float64, sign float64, y []float32, f float64, sv []float32, g float64, acc []float32, den float64) int {
	panic("kernel: no 8-lane kernels in this build")
}

func elemT8(op int, dst, a []float32, f float32) int {
	panic("kernel: no 8-lane kernels in this build")
}

func logitsZ16(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	panic("kernel: no 8-lane kernels in this build")
}
