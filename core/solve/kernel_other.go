//go:build !amd64 || purego

package solve

// useAsm is false: this platform has no assembly loops. (A variable, as on
// amd64, so that tests can set it.)
var (
	useAsm = false
	useAVX = false
)

func axpyVec(dst *float64, n int, alpha float64, x *float64) {
	panic("solve: no assembly kernels on this platform")
}

func axpy4Vec(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	panic("solve: no assembly kernels on this platform")
}

func ger4Vec(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	panic("solve: no assembly kernels on this platform")
}

func reflectRowsVec(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	return 0
}
