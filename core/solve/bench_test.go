package solve

import (
	"fmt"
	"testing"
)

// nnlsBenchProblem is an HAE-OLS-shaped fit: exp features with close slopes
// and a noisy non-negative combination as right-hand side.
func nnlsBenchProblem(m, n int) (a, b []float64) {
	rng := newRand(uint64(m*n + 1))
	a = expFeatures(rng, m, n, 10, 0.02)
	return a, withNonnegFit(rng, a, m, n, 0.05)
}

func BenchmarkNNLS(b *testing.B) {
	for _, sz := range []struct{ m, n int }{{128, 16}, {128, 64}, {1024, 64}} {
		for _, kind := range []string{"exp", "gaussian"} {
			a, rhs := nnlsBenchProblem(sz.m, sz.n)
			if kind == "gaussian" {
				rng := newRand(1)
				a, rhs = randNormal(rng, sz.m, sz.n), randNormal(rng, sz.m, 1)
			}
			b.Run(fmt.Sprintf("%s/m=%d/n=%d", kind, sz.m, sz.n), func(b *testing.B) {
				ws := &NNLSWorkspace{}
				x := make([]float64, sz.n)
				b.ReportAllocs()
				for b.Loop() {
					if err := ws.NNLS(a, sz.m, sz.n, rhs, x); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(ws.Iterations()), "entered")
			})
		}
	}
}

func BenchmarkPinvSolve(b *testing.B) {
	for _, sz := range []struct{ m, n, k int }{{128, 64, 64}, {1024, 64, 64}} {
		rng := newRand(2)
		a := expFeatures(rng, sz.m, sz.n, 10, 0.02)
		rhs := randNormal(rng, sz.m, sz.k)
		x := make([]float64, sz.n*sz.k)
		b.Run(fmt.Sprintf("m=%d/n=%d/k=%d", sz.m, sz.n, sz.k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PinvSolve(a, sz.m, sz.n, rhs, sz.k, 1e-6, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecompose(b *testing.B) {
	for _, sz := range []struct{ m, n int }{{64, 64}, {1024, 64}} {
		a := randNormal(newRand(3), sz.m, sz.n)
		b.Run(fmt.Sprintf("m=%d/n=%d", sz.m, sz.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decompose(a, sz.m, sz.n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
