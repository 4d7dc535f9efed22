//go:build amd64 && !purego

package solve

import "golang.org/x/sys/cpu"

// useAsm selects the assembly loops of kernel_amd64.s for axpy, axpy4 and
// ger4, and useAVX (a CPU with AVX2) their four-lane versions over the
// two-lane SSE2 ones (every amd64 CPU has SSE2), and reflectRows' fused
// kernel. Each element is computed with the same
// separate multiplies and adds in the same order as the Go loops (no
// FMA), so the bits are the same at every level; tests switch both off
// to check that.
var (
	useAsm = true
	useAVX = cpu.X86.HasAVX2
)

// axpyVec sets dst[i] += alpha*x[i] for i < n (a multiple of 2).
func axpyVec(dst *float64, n int, alpha float64, x *float64) {
	if useAVX {
		axpyAVX(dst, n, alpha, x)
		return
	}
	axpySSE(dst, n, alpha, x)
}

// axpy4Vec sets dst[i] += a[0]*x0[i]; += a[1]*x1[i]; += a[2]*x2[i];
// += a[3]*x3[i], in that order, for i < n (a multiple of 2).
func axpy4Vec(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	if useAVX {
		axpy4AVX(dst, n, a, x0, x1, x2, x3)
		return
	}
	axpy4SSE(dst, n, a, x0, x1, x2, x3)
}

// reflectRowsVec applies reflectRows to all the columns with the sums of
// each strip of columns kept in registers (AVX2), and reports how many
// columns it did (0 without AVX2 or rows).
func reflectRowsVec(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	w := len(head)
	if !useAVX || w == 0 || len(v) == 0 {
		return 0
	}
	_ = rows[(len(v)-1)*stride+len(head)-1] // every row is in bounds
	reflectRowsAVX(&head[0], w, &v[0], len(v), tau, &rows[0], stride)
	return w
}

// ger4Vec sets xk[i] += a[k]*s[i] for k = 0..3 and i < n (a multiple of 2).
func ger4Vec(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64) {
	if useAVX {
		ger4AVX(s, n, a, x0, x1, x2, x3)
		return
	}
	ger4SSE(s, n, a, x0, x1, x2, x3)
}

//go:noescape
func axpySSE(dst *float64, n int, alpha float64, x *float64)

//go:noescape
func axpy4SSE(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)

//go:noescape
func ger4SSE(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)

//go:noescape
func axpyAVX(dst *float64, n int, alpha float64, x *float64)

//go:noescape
func axpy4AVX(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)

//go:noescape
func ger4AVX(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)

//go:noescape
func reflectRowsAVX(head *float64, w int, v *float64, nv int, tau float64, rows *float64, stride int)
