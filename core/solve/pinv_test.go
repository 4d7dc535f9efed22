package solve

import (
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// maxRelDiff returns max_i |x_i - y_i| / max(max_i |y_i|, tiny).
func maxRelDiff(x, y []float64) float64 {
	d, s := 0.0, 0.0
	for i := range x {
		d = max(d, math.Abs(x[i]-y[i]))
		s = max(s, math.Abs(y[i]))
	}
	if s == 0 {
		return d
	}
	return d / s
}

// TestPinvSolveFullRank compares PinvSolve on well-conditioned full-column-
// rank problems with gonum's QR least-squares solve and with the normal
// equations solved by Cholesky.
func TestPinvSolveFullRank(t *testing.T) {
	for _, tc := range []struct{ m, n, k int }{
		{1, 1, 1}, {5, 3, 2}, {64, 8, 16}, {128, 64, 64}, {300, 20, 1},
	} {
		rng := newRand(uint64(tc.m*1000 + tc.n*10 + tc.k))
		a := randNormal(rng, tc.m, tc.n)
		b := randNormal(rng, tc.m, tc.k)
		x := make([]float64, tc.n*tc.k)
		rank, err := PinvSolve(a, tc.m, tc.n, b, tc.k, 1e-6, x)
		if err != nil {
			t.Fatal(err)
		}
		if rank != tc.n {
			t.Errorf("%v: rank %d, want %d", tc, rank, tc.n)
		}

		var qr mat.Dense
		if err := qr.Solve(mat.NewDense(tc.m, tc.n, a), mat.NewDense(tc.m, tc.k, b)); err != nil {
			t.Fatal(err)
		}
		if d := maxRelDiff(x, qr.RawMatrix().Data); d > 1e-11 {
			t.Errorf("%v: differs from gonum Solve by %g", tc, d)
		}

		A := mat.NewDense(tc.m, tc.n, a)
		var g mat.SymDense
		g.SymOuterK(1, A.T())
		var chol mat.Cholesky
		if !chol.Factorize(&g) {
			t.Fatalf("%v: A^T A not positive definite", tc)
		}
		var atb, ne mat.Dense
		atb.Mul(A.T(), mat.NewDense(tc.m, tc.k, b))
		if err := chol.SolveTo(&ne, &atb); err != nil {
			t.Fatal(err)
		}
		if d := maxRelDiff(x, ne.RawMatrix().Data); d > 1e-10 {
			t.Errorf("%v: differs from the normal equations by %g", tc, d)
		}
	}
}

// lowRank returns an m x n matrix of rank r (product of normal factors).
func lowRank(seed uint64, m, n, r int) []float64 {
	rng := newRand(seed)
	var p mat.Dense
	p.Mul(mat.NewDense(m, r, randNormal(rng, m, r)), mat.NewDense(r, n, randNormal(rng, r, n)))
	return p.RawMatrix().Data
}

// TestPinvSolveMinimumNorm checks rank-deficient and underdetermined problems:
// the returned rank, the normal equations A^T (A x - b) = 0 and that x has no
// component in the null space of A (the minimum-norm solution).
func TestPinvSolveMinimumNorm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m, n, r int
	}{
		{"tall rank-deficient", 40, 10, 4},
		{"square rank-deficient", 12, 12, 7},
		{"wide full row rank", 5, 12, 5},
		{"wide rank-deficient", 8, 20, 3},
		{"rank one", 30, 6, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := lowRank(uint64(tc.m+tc.n+tc.r), tc.m, tc.n, tc.r)
			rng := newRand(11)
			const k = 3
			b := randNormal(rng, tc.m, k)
			x := make([]float64, tc.n*k)
			rank, err := PinvSolve(a, tc.m, tc.n, b, k, 1e-6, x)
			if err != nil {
				t.Fatal(err)
			}
			if rank != tc.r {
				t.Errorf("rank %d, want %d", rank, tc.r)
			}
			A := mat.NewDense(tc.m, tc.n, a)
			X := mat.NewDense(tc.n, k, x)
			var res, grad mat.Dense
			res.Mul(A, X)
			res.Sub(&res, mat.NewDense(tc.m, k, b))
			grad.Mul(A.T(), &res)
			if g := mat.Norm(&grad, math.Inf(1)); g > 1e-10*mat.Norm(A, 2)*mat.Norm(mat.NewDense(tc.m, k, b), 2) {
				t.Errorf("normal equations residual %g", g)
			}
			// Null space of A: right singular vectors beyond the rank.
			var svd mat.SVD
			if !svd.Factorize(A, mat.SVDFullV) {
				t.Fatal("SVD failed")
			}
			var v mat.Dense
			svd.VTo(&v)
			var proj mat.Dense
			proj.Mul(v.Slice(0, tc.n, tc.r, tc.n).T(), X)
			if p := mat.Norm(&proj, math.Inf(1)); p > 1e-10*mat.Norm(X, math.Inf(1)) {
				t.Errorf("x has a null-space component of size %g", p)
			}
		})
	}
}

// TestPinvSolveCutoff checks the relative cutoff on a diagonal matrix.
func TestPinvSolveCutoff(t *testing.T) {
	a := []float64{
		2, 0, 0,
		0, 2e-3, 0,
		0, 0, 2e-7,
		0, 0, 0,
	}
	b := []float64{4, 4, 4, 4}
	for _, tc := range []struct {
		rcond float64
		rank  int
		want  []float64
	}{
		{0, 3, []float64{2, 2e3, 2e7}},
		{1e-8, 3, []float64{2, 2e3, 2e7}},
		{1e-6, 2, []float64{2, 2e3, 0}},
		{1e-3, 1, []float64{2, 0, 0}}, // 2e-3 is not > 1e-3 * 2
		{0.5, 1, []float64{2, 0, 0}},
		{1, 0, []float64{0, 0, 0}},
	} {
		x := []float64{9, 9, 9}
		rank, err := PinvSolve(a, 4, 3, b, 1, tc.rcond, x)
		if err != nil {
			t.Fatal(err)
		}
		if rank != tc.rank || maxRelDiff(x, tc.want) > 1e-12 {
			t.Errorf("rcond %g: rank %d x %v, want %d %v", tc.rcond, rank, x, tc.rank, tc.want)
		}
	}
}

// TestPinvSolveDegenerate covers zero and empty inputs.
func TestPinvSolveDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m, n, k int
		a, b    []float64
	}{
		{"zero matrix", 3, 2, 2, make([]float64, 6), []float64{1, 2, 3, 4, 5, 6}},
		{"m = 0", 0, 2, 1, nil, nil},
		{"n = 0", 3, 0, 1, nil, []float64{1, 2, 3}},
		{"k = 0", 2, 2, 0, []float64{1, 0, 0, 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, tc.n*tc.k)
			for i := range x {
				x[i] = 7
			}
			rank, err := PinvSolve(tc.a, tc.m, tc.n, tc.b, tc.k, 1e-6, x)
			if err != nil {
				t.Fatal(err)
			}
			wantRank := 0
			if tc.name == "k = 0" {
				wantRank = 2
			}
			if rank != wantRank {
				t.Errorf("rank %d, want %d", rank, wantRank)
			}
			for i, v := range x {
				if v != 0 {
					t.Errorf("x[%d] = %g, want 0", i, v)
				}
			}
		})
	}
}

// TestPinvSolveErrors checks argument validation.
func TestPinvSolveErrors(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	b := []float64{1, 2}
	for _, tc := range []struct {
		name  string
		a     []float64
		m, n  int
		b     []float64
		k     int
		rcond float64
		x     []float64
		kind  error
		param string
	}{
		{"short a", a[:3], 2, 2, b, 1, 1e-6, make([]float64, 2), ErrShape, "len(a)"},
		{"b not m x k", a, 2, 2, b, 2, 1e-6, make([]float64, 4), ErrShape, "len(b)"},
		{"short x", a, 2, 2, b, 1, 1e-6, make([]float64, 1), ErrShape, "len(x)"},
		{"negative k", a, 2, 2, b, -1, 1e-6, nil, ErrShape, "b is 2 x -1"},
		{"negative rcond", a, 2, 2, b, 1, -1, make([]float64, 2), ErrInvalid, "rcond"},
		{"NaN rcond", a, 2, 2, b, 1, math.NaN(), make([]float64, 2), ErrInvalid, "rcond"},
		{"Inf rcond", a, 2, 2, b, 1, math.Inf(1), make([]float64, 2), ErrInvalid, "rcond"},
		{"NaN in a", []float64{1, 2, math.NaN(), 4}, 2, 2, b, 1, 1e-6, make([]float64, 2), ErrNotFinite, "a[2]"},
		{"Inf in b", a, 2, 2, []float64{math.Inf(1), 0}, 1, 1e-6, make([]float64, 2), ErrNotFinite, "b[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PinvSolve(tc.a, tc.m, tc.n, tc.b, tc.k, tc.rcond, tc.x)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.param) {
				t.Errorf("err = %q, want it to name %q", err, tc.param)
			}
		})
	}
}

// TestPinvSolveDeterminism checks that repeated solves are bit-identical.
func TestPinvSolveDeterminism(t *testing.T) {
	rng := newRand(21)
	const m, n, k = 128, 64, 64
	a := expFeatures(rng, m, n, 10, 0.05)
	b := randNormal(rng, m, k)
	first := make([]float64, n*k)
	r0, err := PinvSolve(a, m, n, b, k, 1e-6, first)
	if err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 3; rep++ {
		x := make([]float64, n*k)
		r, err := PinvSolve(a, m, n, b, k, 1e-6, x)
		if err != nil {
			t.Fatal(err)
		}
		if r != r0 || hashFloats(x) != hashFloats(first) {
			t.Fatalf("rep %d: rank %d (first %d) or x differs", rep, r, r0)
		}
	}
}
