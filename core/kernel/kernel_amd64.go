//go:build amd64 && !purego

package kernel

// useAsm selects the SSE kernels of kernel_amd64.s. They produce the same bits
// as the portable Go kernels; tests switch useAsm off to check exactly that.
var useAsm = true

// logitsQt4 computes nb blocks of 4 keys against 4 packed query rows: for
// key j < 4*nb and lane r < 4,
// acc[r][j] = sum_{c<d} qt[4c+r]*k[j*d+c] (in order of c, products rounded),
// and stores scale*acc[r][j] at dst[r*ldd+j] for the first rows rows.
//
//go:noescape
func logitsQt4(dst *float32, ldd, rows int, qt, k *float32, nb, d int, scale float32)

// axpyRows adds sum_t coef[t]*b[j_t*ldb+c] to o[c] for c < cols (a multiple
// of 4) and t < nt in order, with j_t = idx[t], or t when idx is nil.
//
//go:noescape
func axpyRows(o *float32, cols int, coef *float32, nt int, idx *int32, b *float32, ldb int)

// expShiftSSE sets dst[j] = Exp32(src[j]-mx) and adds it to *sum, in order,
// four at a time for j < n (a multiple of 4) while all four arguments are in
// [expFastMin, expFastMax]; it returns the count done.
//
//go:noescape
func expShiftSSE(dst, src *float32, n int, mx float32, sum *float32) int

// xlogxSSE sets dst[j] = xlogx(src[j]) four at a time for j < n (a
// multiple of 4) while all four are normal, positive and finite; it returns
// the count done.
//
//go:noescape
func xlogxSSE(dst, src *float32, n int) int

// axpyWidenSSE adds w*float64(x[c]) to dst[c] for c < n (a multiple of 4),
// two lanes at a time, each product and sum rounded once.
//
//go:noescape
func axpyWidenSSE(dst *float64, n int, w float64, x *float32)
