//go:build amd64 && !purego

package solve

// useAsm selects the SSE2 loops of kernel_amd64.s for axpy, axpy4 and
// ger4. Each element is computed with the same separate multiplies and
// adds in the same order as the Go loops (two elements per instruction, no
// FMA), so the bits are the same; tests switch useAsm off to check that.
var useAsm = true

// axpySSE sets dst[i] += alpha*x[i] for i < n (a multiple of 2).
//
//go:noescape
func axpySSE(dst *float64, n int, alpha float64, x *float64)

// axpy4SSE sets dst[i] += a[0]*x0[i]; += a[1]*x1[i]; += a[2]*x2[i];
// += a[3]*x3[i], in that order, for i < n (a multiple of 2).
//
//go:noescape
func axpy4SSE(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)

// ger4SSE sets xk[i] += a[k]*s[i] for k = 0..3 and i < n (a multiple of 2).
//
//go:noescape
func ger4SSE(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)
