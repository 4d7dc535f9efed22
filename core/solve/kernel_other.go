//go:build !amd64 || purego

package solve

// useAsm is false: this platform uses the Go loops only.
const useAsm = false

func axpySSE(dst *float64, n int, alpha float64, x *float64) {
	panic("solve: no assembly kernels on this platform")
}

func axpy4SSE(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	panic("solve: no assembly kernels on this platform")
}

func ger4SSE(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	panic("solve: no assembly kernels on this platform")
}
