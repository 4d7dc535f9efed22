//go:build amd64 && !purego

package solve

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAsmMatchesGo runs the kernels with assembly paths, and the solves
// built on them, with AVX (where the CPU has it), with SSE2 and in Go, and
// requires identical bits.
func TestAsmMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
		}
		return x
	}
	same := func(what string, a, b []float64) {
		t.Helper()
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%s[%d]: %v with assembly, %v without", what, i, a[i], b[i])
			}
		}
	}
	avx := useAVX
	both := func(f func() []float64) ([]float64, []float64) {
		fast := f()
		useAVX = false
		defer func() { useAsm, useAVX = true, avx }()
		if sse := f(); avx {
			same("SSE2 against AVX", sse, fast)
		}
		useAsm = false
		return fast, f()
	}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 64, 65, 130} {
		x := [][]float64{vec(n), vec(n), vec(n), vec(n)}
		d0, a := vec(n), vec(4)
		fast, slow := both(func() []float64 {
			d := append([]float64(nil), d0...)
			axpy(d, a[0], x[0])
			axpy4(d, a[0], a[1], a[2], a[3], x[0], x[1], x[2], x[3])
			xs := [][]float64{append([]float64(nil), x[0]...), append([]float64(nil), x[1]...), append([]float64(nil), x[2]...), append([]float64(nil), x[3]...)}
			ger4(d, a[0], a[1], a[2], a[3], xs[0], xs[1], xs[2], xs[3])
			out := append(d, xs[0]...)
			for _, v := range xs[1:] {
				out = append(out, v...)
			}
			return out
		})
		same("kernels", fast, slow)
	}
	for w := 0; w <= 21; w++ {
		for _, nv := range []int{0, 1, 2, 3, 4, 5, 9, 64} {
			stride := w + 3
			head0, rows0, v, tau := vec(w), vec(nv*stride), vec(nv), r.Float64()*2
			fast, slow := both(func() []float64 {
				head := append([]float64(nil), head0...)
				rows := append([]float64(nil), rows0...)
				reflectRows(head, v, tau, rows, stride, make([]float64, w))
				return append(head, rows...)
			})
			same("reflectRows", fast, slow)
		}
	}
	for _, sh := range [][2]int{{128, 68}, {512, 70}, {33, 17}, {9, 9}, {64, 3}} {
		m, n := sh[0], sh[1]
		a := make([]float64, m*n)
		for i := range a {
			a[i] = math.Exp(r.NormFloat64())
		}
		b := vec(m)
		y := vec(m * 5)
		fast, slow := both(func() []float64 {
			x := make([]float64, n)
			if err := NNLS(a, m, n, b, x); err != nil {
				t.Fatal(err)
			}
			out := make([]float64, n*5)
			if _, err := PinvSolve(a, m, n, y, 5, 1e-6, out); err != nil {
				t.Fatal(err)
			}
			s, err := Decompose(append([]float64(nil), a...), m, n)
			if err != nil {
				t.Fatal(err)
			}
			return append(append(x, out...), s.S...)
		})
		same("solves", fast, slow)
	}
}
