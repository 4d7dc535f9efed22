package solve

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// frob2 returns the squared Frobenius norm of a - b.
func frob2(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// TestDecomposeReconstruct checks, for tall, wide, square, low-rank and
// graded matrices: S decreasing and non-negative, orthonormal U and V, the
// sign convention, and that the rank-r reconstruction error equals the tail
// energy sum_{i >= r} S[i]^2 for every r.
func TestDecomposeReconstruct(t *testing.T) {
	graded := randNormal(newRand(3), 30, 8)
	for i := 0; i < 30; i++ {
		for j := 0; j < 8; j++ {
			graded[i*8+j] *= math.Pow(10, -float64(j))
		}
	}
	for _, tc := range []struct {
		name string
		m, n int
		a    []float64
	}{
		{"tall 50x8", 50, 8, randNormal(newRand(1), 50, 8)},
		{"wide 6x20", 6, 20, randNormal(newRand(2), 6, 20)},
		{"square 16x16", 16, 16, randNormal(newRand(4), 16, 16)},
		{"rank 3 of 40x12", 40, 12, lowRank(5, 40, 12, 3)},
		{"graded columns 30x8", 30, 8, graded},
		{"1x1", 1, 1, []float64{-3}},
		{"exp features 128x64", 128, 64, expFeatures(newRand(6), 128, 64, 10, 0.05)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decompose(tc.a, tc.m, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			k := min(tc.m, tc.n)
			if d.M != tc.m || d.N != tc.n || d.K != k || len(d.U) != tc.m*k || len(d.S) != k || len(d.VT) != k*tc.n {
				t.Fatalf("shape M %d N %d K %d len U %d S %d VT %d", d.M, d.N, d.K, len(d.U), len(d.S), len(d.VT))
			}
			for i := 1; i < k; i++ {
				if d.S[i] > d.S[i-1] || d.S[i] < 0 {
					t.Fatalf("S not decreasing and non-negative: %v", d.S)
				}
			}
			total := 0.0
			for _, v := range tc.a {
				total += v * v
			}
			tol := 1e-12 * total
			// Orthonormality: U^T U = I and V^T V = I (rows of VT).
			for p := 0; p < k; p++ {
				for q := 0; q < k; q++ {
					uu, vv := 0.0, 0.0
					for i := 0; i < tc.m; i++ {
						uu += d.U[i*k+p] * d.U[i*k+q]
					}
					for j := 0; j < tc.n; j++ {
						vv += d.VT[p*tc.n+j] * d.VT[q*tc.n+j]
					}
					want := 0.0
					if p == q {
						want = 1
					}
					if math.Abs(uu-want) > 1e-12 || math.Abs(vv-want) > 1e-12 {
						t.Fatalf("U^T U or V^T V [%d,%d] = %g, %g", p, q, uu, vv)
					}
				}
				// sign convention
				big, at := -1.0, 0
				for i := 0; i < tc.m; i++ {
					if v := math.Abs(d.U[i*k+p]); v > big {
						big, at = v, i
					}
				}
				if d.U[at*k+p] < 0 {
					t.Errorf("column %d of U has a negative largest entry", p)
				}
			}
			dst := make([]float64, tc.m*tc.n)
			for r := 0; r <= k; r++ {
				d.Reconstruct(r, dst)
				tail := 0.0
				for _, v := range d.S[r:] {
					tail += v * v
				}
				if got := frob2(tc.a, dst); math.Abs(got-tail) > tol {
					t.Errorf("rank %d: error %.17g, tail energy %.17g", r, got, tail)
				}
			}
		})
	}
}

// TestDecomposeDegenerate covers zero and empty matrices.
func TestDecomposeDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m, n int
	}{
		{"zero 4x3", 4, 3},
		{"zero 2x5", 2, 5},
		{"0x3", 0, 3},
		{"3x0", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decompose(make([]float64, tc.m*tc.n), tc.m, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range d.S {
				if v != 0 {
					t.Errorf("S = %v, want zeros", d.S)
				}
			}
			for _, tau := range []float64{0.5, 0.99, 1} {
				if r := d.RankForEnergy(tau); r != 0 {
					t.Errorf("RankForEnergy(%g) = %d, want 0", tau, r)
				}
			}
			dst := make([]float64, tc.m*tc.n)
			for i := range dst {
				dst[i] = 1
			}
			d.Reconstruct(d.K, dst)
			for _, v := range dst {
				if v != 0 {
					t.Fatalf("Reconstruct gave %v, want zeros", dst)
				}
			}
		})
	}
}

// TestRankForEnergy is a table over singular values and tau.
func TestRankForEnergy(t *testing.T) {
	// energies 9, 4, 1, 0: total 14
	s := &SVD{S: []float64{3, 2, 1, 0}, K: 4}
	tiny := &SVD{S: []float64{1, 1e-10, 1e-200}, K: 3}
	// 0.1 is not exact in binary: the cumulative sums round, but tau = 1
	// must still return the count of nonzero values.
	tenths := &SVD{S: []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, K: 7}
	zero := &SVD{S: []float64{0, 0}, K: 2}
	empty := &SVD{}
	for _, tc := range []struct {
		name string
		s    *SVD
		tau  float64
		want int
	}{
		{"tau 0", s, 0, 0},
		{"negative tau", s, -1, 0},
		{"first value exactly", s, 9.0 / 14, 1},
		{"just above first", s, 9.0/14 + 1e-9, 2},
		{"two values exactly", s, 13.0 / 14, 2},
		{"0.99", s, 0.99, 3},
		{"tau 1", s, 1, 3},
		{"tau above 1", s, 1.5, 3},
		{"NaN tau keeps everything nonzero", s, math.NaN(), 3},
		{"tiny tail, 0.99", tiny, 0.99, 1},
		{"tiny tail, 1 - 1e-16", tiny, 1 - 1e-16, 1},
		{"tiny tail, tau 1 counts nonzero", tiny, 1, 3},
		{"equal values, 0.5", tenths, 0.5, 4},
		{"equal values, 1 - 1e-15", tenths, 1 - 1e-15, 7},
		{"equal values, tau 1", tenths, 1, 7},
		{"zero matrix", zero, 0.99, 0},
		{"zero matrix, tau 1", zero, 1, 0},
		{"empty", empty, 0.99, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.RankForEnergy(tc.tau); got != tc.want {
				t.Errorf("RankForEnergy(%v) = %d, want %d", tc.tau, got, tc.want)
			}
		})
	}
}

// TestRankForEnergyMinimal checks on random spectra that the rank returned
// is the smallest one meeting tau.
func TestRankForEnergyMinimal(t *testing.T) {
	rng := newRand(8)
	for it := 0; it < 200; it++ {
		k := 1 + rng.IntN(20)
		s := make([]float64, k)
		v := 1.0
		for i := range s {
			s[i] = v
			v *= rng.Float64()
		}
		d := &SVD{S: s, K: k}
		tau := rng.Float64()
		r := d.RankForEnergy(tau)
		total, kept := 0.0, 0.0
		for i, v := range s {
			total += v * v
			if i < r {
				kept += v * v
			}
		}
		last := 0.0
		if r > 0 {
			last = s[r-1] * s[r-1]
		}
		if kept < tau*total*(1-1e-15) || r > 1 && kept-last >= tau*total {
			t.Fatalf("tau %g, S %v: rank %d is not minimal (kept %g of %g)", tau, s, r, kept, total)
		}
	}
}

// TestReconstructClampAndPanic checks that r is clamped and that a wrong
// dst length panics with a message naming dst.
func TestReconstructClampAndPanic(t *testing.T) {
	a := randNormal(newRand(9), 5, 3)
	d, err := Decompose(a, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	full, over, neg := make([]float64, 15), make([]float64, 15), make([]float64, 15)
	d.Reconstruct(3, full)
	d.Reconstruct(10, over)
	d.Reconstruct(-2, neg)
	if hashFloats(full) != hashFloats(over) {
		t.Errorf("r = 10 not clamped to K")
	}
	if frob2(full, a) > 1e-24*frob2(a, make([]float64, 15)) {
		t.Errorf("full-rank reconstruction differs from a")
	}
	for _, v := range neg {
		if v != 0 {
			t.Fatalf("r = -2 gave %v, want zeros", neg)
		}
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "len(dst)") {
			t.Errorf("panic %q, want a message naming len(dst)", msg)
		}
	}()
	d.Reconstruct(1, make([]float64, 14))
}

// TestDecomposeErrors checks argument validation.
func TestDecomposeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     []float64
		m, n  int
		kind  error
		param string
	}{
		{"short a", []float64{1, 2, 3}, 2, 2, ErrShape, "len(a)"},
		{"negative n", nil, 2, -2, ErrShape, "a is 2 x -2"},
		{"NaN", []float64{1, math.NaN()}, 1, 2, ErrNotFinite, "a[1]"},
		{"Inf", []float64{math.Inf(1), 0}, 2, 1, ErrNotFinite, "a[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decompose(tc.a, tc.m, tc.n)
			if d != nil || !errors.Is(err, tc.kind) {
				t.Fatalf("Decompose = %v, %v; want nil, %v", d, err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.param) {
				t.Errorf("err = %q, want it to name %q", err, tc.param)
			}
		})
	}
}

// TestDecomposeDeterminism checks that repeated factorizations are
// bit-identical.
func TestDecomposeDeterminism(t *testing.T) {
	a := expFeatures(newRand(10), 200, 32, 10, 0.05)
	d0, err := Decompose(a, 200, 32)
	if err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 3; rep++ {
		d, err := Decompose(a, 200, 32)
		if err != nil {
			t.Fatal(err)
		}
		if hashFloats(d.U) != hashFloats(d0.U) || hashFloats(d.S) != hashFloats(d0.S) || hashFloats(d.VT) != hashFloats(d0.VT) {
			t.Fatalf("rep %d differs", rep)
		}
	}
}
