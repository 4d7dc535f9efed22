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

// pinvBenchSizes are the PinvSolve benchmark problems: HAE-OLS-shaped exp
// features (numerically low rank; sub-benchmarks m=.../n=.../k=...) and, for
// comparison, full-rank Gaussian matrices (gaussian/m=...).
var pinvBenchSizes = []struct {
	kind    string
	m, n, k int
}{
	{"exp", 128, 64, 64}, {"exp", 512, 64, 64}, {"exp", 1024, 64, 64},
	{"gaussian", 128, 64, 64}, {"gaussian", 512, 64, 64},
}

// pinvBenchProblem returns the matrix and right-hand sides of a
// pinvBenchSizes entry.
func pinvBenchProblem(kind string, m, n, k int) (a, rhs []float64) {
	rng := newRand(2)
	if kind == "gaussian" {
		a = randNormal(rng, m, n)
	} else {
		a = expFeatures(rng, m, n, 10, 0.02)
	}
	return a, randNormal(rng, m, k)
}

// benchPinv runs one PinvSolve implementation over pinvBenchSizes.
func benchPinv(b *testing.B, solve func(a []float64, m, n int, b []float64, k int, x []float64) error) {
	for _, sz := range pinvBenchSizes {
		a, rhs := pinvBenchProblem(sz.kind, sz.m, sz.n, sz.k)
		x := make([]float64, sz.n*sz.k)
		name := fmt.Sprintf("m=%d/n=%d/k=%d", sz.m, sz.n, sz.k)
		if sz.kind != "exp" {
			name = sz.kind + "/" + name
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := solve(a, sz.m, sz.n, rhs, sz.k, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPinvSolve(b *testing.B) {
	benchPinv(b, func(a []float64, m, n int, rhs []float64, k int, x []float64) error {
		_, err := PinvSolve(a, m, n, rhs, k, 1e-6, x)
		return err
	})
}

// BenchmarkPinvSolveGonum is BenchmarkPinvSolve through gonum's Dgesvd, the
// implementation this package replaced.
func BenchmarkPinvSolveGonum(b *testing.B) {
	benchPinv(b, func(a []float64, m, n int, rhs []float64, k int, x []float64) error {
		if _, ok := gonumPinvSolve(a, m, n, rhs, k, 1e-6, x); !ok {
			return ErrNoConvergence
		}
		return nil
	})
}

// decomposeBenchSizes are the Decompose benchmark problems: Gaussian
// summary-sized matrices (square and wide) and a prefix-sized tall one.
var decomposeBenchSizes = []struct{ m, n int }{{64, 64}, {32, 64}, {1024, 64}}

// benchDecompose runs one SVD implementation over decomposeBenchSizes.
func benchDecompose(b *testing.B, svd func(a []float64, m, n int) error) {
	for _, sz := range decomposeBenchSizes {
		a := randNormal(newRand(3), sz.m, sz.n)
		b.Run(fmt.Sprintf("m=%d/n=%d", sz.m, sz.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := svd(a, sz.m, sz.n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecompose(b *testing.B) {
	benchDecompose(b, func(a []float64, m, n int) error {
		_, err := Decompose(a, m, n)
		return err
	})
}

// BenchmarkDecomposeGonum is BenchmarkDecompose through gonum's Dgesvd.
func BenchmarkDecomposeGonum(b *testing.B) {
	benchDecompose(b, func(a []float64, m, n int) error {
		if _, ok := gonumDecompose(a, m, n); !ok {
			return ErrNoConvergence
		}
		return nil
	})
}
