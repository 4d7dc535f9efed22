//go:build !amd64 || purego

package kernel

// useAsm is false: this platform has no assembly kernels. (A variable, as
// on amd64, so that tests can set it.)
var useAsm = false

// logitsQt4 is never called when useAsm is false.
func logitsQt4(dst *float32, ldd, rows int, qt, k *float32, nb, d int, scale float32) {
	panic("kernel: no assembly kernels on this platform")
}

// axpyRows is never called when useAsm is false.
func axpyRows(o *float32, cols int, coef *float32, nt int, idx *int32, b *float32, ldb int) {
	panic("kernel: no assembly kernels on this platform")
}

// expShiftSSE is never called when useAsm is false.
func expShiftSSE(dst, src *float32, n int, mx float32, sum *float32) int {
	panic("kernel: no assembly kernels on this platform")
}

// xlogxSSE is never called when useAsm is false.
func xlogxSSE(dst, src *float32, n int) int {
	panic("kernel: no assembly kernels on this platform")
}

// axpyWidenSSE is never called when useAsm is false.
func axpyWidenSSE(dst *float64, n int, w float64, x *float32) {
	panic("kernel: no assembly kernels on this platform")
}
