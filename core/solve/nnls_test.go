package solve

import (
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// nnlsGen makes one small NNLS problem of size about m x n (a generator may
// change m).
type nnlsGen func(rng *rand.Rand, m, n int) (a []float64, mm int, b []float64)

func gaussianProblem(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
	return randNormal(rng, m, n), m, randNormal(rng, m, 1)
}

var smallNNLSCases = []struct {
	name string
	gen  nnlsGen
	// zero reports that x = 0 is known to be the solution.
	zero bool
}{
	{name: "gaussian", gen: gaussianProblem},
	{name: "duplicate and proportional columns", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a, m, b := gaussianProblem(rng, m, n)
		for i := 0; i < m; i++ {
			if n > 1 {
				a[i*n+1] = a[i*n] // duplicate
			}
			if n > 3 {
				a[i*n+3] = 2 * a[i*n+2] // proportional
			}
		}
		return a, m, b
	}},
	{name: "zero column", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a, m, b := gaussianProblem(rng, m, n)
		j := rng.IntN(n)
		for i := 0; i < m; i++ {
			a[i*n+j] = 0
		}
		return a, m, b
	}},
	{name: "zero b", zero: true, gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		return randNormal(rng, m, n), m, make([]float64, m)
	}},
	{name: "nonnegative A, nonpositive b", zero: true, gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a, m, b := gaussianProblem(rng, m, n)
		for i := range a {
			a[i] = math.Abs(a[i])
		}
		for i := range b {
			b[i] = -math.Abs(b[i])
		}
		return a, m, b
	}},
	{name: "exact sparse nonnegative fit", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a := randNormal(rng, m, n)
		u := make([]float64, n)
		for j := range u {
			if rng.IntN(2) == 0 {
				u[j] = rng.Float64()
			}
		}
		return a, m, matVec(a, m, n, u)
	}},
	{name: "wide (m < n)", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		m = 1 + rng.IntN(n)
		return gaussianProblem(rng, m, n)
	}},
	{name: "columns scaled 1e-8..1e8", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a, m, b := gaussianProblem(rng, m, n)
		for j := 0; j < n; j++ {
			s := math.Pow(10, 16*rng.Float64()-8)
			for i := 0; i < m; i++ {
				a[i*n+j] *= s
			}
		}
		return a, m, b
	}},
	{name: "exp features, close slopes", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a := expFeatures(rng, m, n, 10, 0.05)
		return a, m, randNormal(rng, m, 1)
	}},
	{name: "small integers (ties, exact degeneracy)", gen: func(rng *rand.Rand, m, n int) ([]float64, int, []float64) {
		a := make([]float64, m*n)
		b := make([]float64, m)
		for i := range a {
			a[i] = float64(rng.IntN(5) - 2)
		}
		for i := range b {
			b[i] = float64(rng.IntN(5) - 2)
		}
		return a, m, b
	}},
}

// TestNNLSBruteForce compares NNLS with exhaustive search over all 2^n
// passive sets on many small problems, including degenerate ones.
func TestNNLSBruteForce(t *testing.T) { bothNNLSPaths(t, testNNLSBruteForce) }

// bothNNLSPaths runs test twice: with every problem folded to a triangle
// first, and with every problem solved on [A | b] directly.
func bothNNLSPaths(t *testing.T, test func(t *testing.T)) {
	for _, tc := range []struct {
		name string
		rows int
	}{{"folded", 0}, {"direct", 1 << 30}} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(r int) { nnlsDirectRows = r }(nnlsDirectRows)
			nnlsDirectRows = tc.rows
			test(t)
		})
	}
}

func testNNLSBruteForce(t *testing.T) {
	perCase := 150
	if testing.Short() {
		perCase = 30
	}
	drops := 0
	for ci, tc := range smallNNLSCases {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(uint64(100 + ci))
			ws := &NNLSWorkspace{}
			for it := 0; it < perCase; it++ {
				n := 1 + rng.IntN(6)
				a, m, b := tc.gen(rng, 1+rng.IntN(10), n)
				x := make([]float64, n)
				if err := ws.NNLS(a, m, n, b, x); err != nil {
					t.Fatalf("problem %d (%d x %d): %v", it, m, n, err)
				}
				drops += ws.drops
				for j, v := range x {
					if !(v >= 0) {
						t.Fatalf("problem %d: x[%d] = %g < 0", it, j, v)
					}
				}
				if tc.zero {
					for j, v := range x {
						if v != 0 {
							t.Fatalf("problem %d: x[%d] = %g, want 0", it, j, v)
						}
					}
				}
				got := objective(a, m, n, b, x)
				want := bruteNNLS(t, a, m, n, b)
				tol := 1e-9 * objective(a, m, n, b, make([]float64, n))
				if math.Abs(got-want) > tol {
					t.Fatalf("problem %d (%d x %d): objective %.17g, brute force %.17g (tol %g)\na = %v\nb = %v\nx = %v",
						it, m, n, got, want, tol, a, b, x)
				}
			}
		})
	}
	if drops == 0 {
		t.Errorf("no problem dropped a passive column: the inner loop was not exercised")
	}
}

// withNonnegFit returns b = A u (1 + noise*e) for u uniform in [0,1) on a
// random half of the columns and standard normal e.
func withNonnegFit(rng *rand.Rand, a []float64, m, n int, noise float64) []float64 {
	u := make([]float64, n)
	for j := range u {
		if rng.IntN(2) == 0 {
			u[j] = rng.Float64()
		}
	}
	b := matVec(a, m, n, u)
	for i := range b {
		b[i] *= 1 + noise*rng.NormFloat64()
	}
	return b
}

var largeNNLSCases = []struct {
	name string
	m, n int
	gen  func(rng *rand.Rand, m, n int) (a, b []float64)
}{
	{"gaussian 128x64", 128, 64, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		return randNormal(rng, m, n), randNormal(rng, m, 1)
	}},
	{"gaussian 1024x64", 1024, 64, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		return randNormal(rng, m, n), randNormal(rng, m, 1)
	}},
	{"gaussian wide 20x64", 20, 64, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		return randNormal(rng, m, n), randNormal(rng, m, 1)
	}},
	{"exp features ds=0.01 128x64", 128, 64, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		a := expFeatures(rng, m, n, 20, 0.01)
		return a, withNonnegFit(rng, a, m, n, 0.01)
	}},
	{"exp features ds=0.001 128x32", 128, 32, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		a := expFeatures(rng, m, n, 20, 0.001)
		return a, withNonnegFit(rng, a, m, n, 0.001)
	}},
	{"exp features ds=0.05 1024x64", 1024, 64, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		a := expFeatures(rng, m, n, 30, 0.05)
		return a, withNonnegFit(rng, a, m, n, 0.1)
	}},
	{"exp features, normal b 128x16", 128, 16, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		return expFeatures(rng, m, n, 10, 0.02), randNormal(rng, m, 1)
	}},
	{"columns scaled 1e-100..1e100 100x12", 100, 12, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		a := randNormal(rng, m, n)
		for j := 0; j < n; j++ {
			s := math.Pow(10, 200*rng.Float64()-100)
			for i := 0; i < m; i++ {
				a[i*n+j] *= s
			}
		}
		return a, randNormal(rng, m, 1)
	}},
	{"duplicated columns 200x30", 200, 30, func(rng *rand.Rand, m, n int) ([]float64, []float64) {
		a := randNormal(rng, m, n)
		for i := 0; i < m; i++ {
			for j := n / 2; j < n; j++ {
				a[i*n+j] = a[i*n+j-n/2]
			}
		}
		return a, withNonnegFit(rng, a, m, n, 0.1)
	}},
}

// TestNNLSKKT checks the optimality conditions on larger and ill-conditioned
// problems and compares the objective with the textbook method.
func TestNNLSKKT(t *testing.T) { bothNNLSPaths(t, testNNLSKKT) }

func testNNLSKKT(t *testing.T) {
	for ci, tc := range largeNNLSCases {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(uint64(200 + ci))
			a, b := tc.gen(rng, tc.m, tc.n)
			x := make([]float64, tc.n)
			ws := &NNLSWorkspace{}
			if err := ws.NNLS(a, tc.m, tc.n, b, x); err != nil {
				t.Fatal(err)
			}
			checkKKT(t, a, tc.m, tc.n, b, x, 100)
			got := objective(a, tc.m, tc.n, b, x)
			ref := objective(a, tc.m, tc.n, b, textbookNNLS(t, a, tc.m, tc.n, b))
			b2 := objective(a, tc.m, tc.n, b, make([]float64, tc.n))
			if got > ref+1e-10*b2 {
				t.Errorf("objective %.17g, textbook Lawson–Hanson %.17g (||b||^2 = %g)", got, ref, b2)
			}
			t.Logf("entered %d, dropped %d; objective %.6g (textbook %.6g, ||b||^2 %.6g)", ws.iters, ws.drops, got, ref, b2)
		})
	}
}

// TestNNLSScaleInvariance checks that scaling a column of A or b by a power
// of two scales the solution exactly (bit for bit), even at extreme scales.
func TestNNLSScaleInvariance(t *testing.T) { bothNNLSPaths(t, testNNLSScaleInvariance) }

func testNNLSScaleInvariance(t *testing.T) {
	rng := newRand(7)
	const m, n = 40, 8
	a := expFeatures(rng, m, n, 5, 0.1)
	b := withNonnegFit(rng, a, m, n, 0.2)
	x0 := make([]float64, n)
	if err := NNLS(a, m, n, b, x0); err != nil {
		t.Fatal(err)
	}
	positive := 0
	for _, v := range x0 {
		if v > 0 {
			positive++
		}
	}
	if positive < 2 {
		t.Fatalf("test problem has %d positive coefficients, want >= 2", positive)
	}
	for _, tc := range []struct {
		name       string
		col        int
		colExp, bx int
	}{
		{"column up 2^10", 0, 10, 0},
		{"column down 2^-600", 3, -600, 0},
		{"column up 2^700", 5, 700, 0},
		{"b up 2^300", 0, 0, 300},
		{"b down 2^-900, column down 2^-100", 2, -100, -900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := append([]float64(nil), a...)
			bs := append([]float64(nil), b...)
			for i := 0; i < m; i++ {
				as[i*n+tc.col] = math.Ldexp(as[i*n+tc.col], tc.colExp)
				bs[i] = math.Ldexp(bs[i], tc.bx)
			}
			x := make([]float64, n)
			if err := NNLS(as, m, n, bs, x); err != nil {
				t.Fatal(err)
			}
			for j := range x {
				e := tc.bx
				if j == tc.col {
					e -= tc.colExp
				}
				if want := math.Ldexp(x0[j], e); x[j] != want {
					t.Errorf("x[%d] = %g, want %g", j, x[j], want)
				}
			}
		})
	}
}

// TestNNLSEdgeCases covers shapes and inputs with a known answer.
func TestNNLSEdgeCases(t *testing.T) { bothNNLSPaths(t, testNNLSEdgeCases) }

func testNNLSEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    []float64
		m, n int
		b    []float64
		want []float64
	}{
		{"n = 0", []float64{}, 3, 0, []float64{1, 2, 3}, []float64{}},
		{"m = 0", []float64{}, 0, 2, []float64{}, []float64{0, 0}},
		{"single column, positive", []float64{1, 2}, 2, 1, []float64{2, 4}, []float64{2}},
		{"single column, negative", []float64{1, 2}, 2, 1, []float64{-2, -4}, []float64{0}},
		{"identity clips negatives", []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, 3, 3, []float64{3, -1, 2}, []float64{3, 0, 2}},
		{"zero column", []float64{0, 1, 0, 2}, 2, 2, []float64{1, 2}, []float64{0, 1}},
		{"all zero A", []float64{0, 0, 0, 0}, 2, 2, []float64{1, 2}, []float64{0, 0}},
		{"one row, negative b", []float64{1, 2}, 1, 2, []float64{-4}, []float64{0, 0}},
		{"duplicate columns", []float64{1, 1, 1, 1}, 2, 2, []float64{3, 3}, []float64{3, 0}},
		{"tiny values", []float64{1e-300, 0, 0, 2e-300}, 2, 2, []float64{3e-300, -1e-300}, []float64{3, 0}},
		{"huge values", []float64{1e300, 0, 0, 1e300}, 2, 2, []float64{2e300, 1e300}, []float64{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, tc.n)
			for j := range x {
				x[j] = 42 // must be overwritten
			}
			if err := NNLS(tc.a, tc.m, tc.n, tc.b, x); err != nil {
				t.Fatal(err)
			}
			for j := range x {
				if math.Abs(x[j]-tc.want[j]) > 1e-14*math.Max(1, math.Abs(tc.want[j])) {
					t.Errorf("x = %v, want %v", x, tc.want)
					break
				}
			}
		})
	}
}

// TestNNLSErrors checks argument validation: the error kind and the
// parameter named in the message.
func TestNNLSErrors(t *testing.T) {
	ok := []float64{1, 2, 3, 4}
	for _, tc := range []struct {
		name  string
		a     []float64
		m, n  int
		b, x  []float64
		kind  error
		param string
	}{
		{"short a", ok[:3], 2, 2, []float64{1, 2}, make([]float64, 2), ErrShape, "len(a)"},
		{"long b", ok, 2, 2, []float64{1, 2, 3}, make([]float64, 2), ErrShape, "len(b)"},
		{"short x", ok, 2, 2, []float64{1, 2}, make([]float64, 1), ErrShape, "len(x)"},
		{"negative m", nil, -1, 2, nil, make([]float64, 2), ErrShape, "a is -1 x 2"},
		{"NaN in a", []float64{1, math.NaN(), 3, 4}, 2, 2, []float64{1, 2}, make([]float64, 2), ErrNotFinite, "a[1]"},
		{"Inf in b", ok, 2, 2, []float64{1, math.Inf(-1)}, make([]float64, 2), ErrNotFinite, "b[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NNLS(tc.a, tc.m, tc.n, tc.b, tc.x)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.param) {
				t.Errorf("err = %q, want it to name %q", err, tc.param)
			}
		})
	}
}

// TestNNLSIterationLimit checks that the cap is enforced with a clear error
// and that x is left feasible.
func TestNNLSIterationLimit(t *testing.T) { bothNNLSPaths(t, testNNLSIterationLimit) }

func testNNLSIterationLimit(t *testing.T) {
	// Identity with a positive b: each column must enter, so n entries.
	const n = 5
	a := make([]float64, n*n)
	b := make([]float64, n)
	for i := 0; i < n; i++ {
		a[i*n+i] = 1
		b[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		maxIter int
		wantErr bool
	}{
		{1, true},
		{n - 1, true},
		{n, false},
		{0, false}, // default 3n
	} {
		ws := &NNLSWorkspace{MaxIter: tc.maxIter}
		x := make([]float64, n)
		err := ws.NNLS(a, n, n, b, x)
		if tc.wantErr != (err != nil) || tc.wantErr && !errors.Is(err, ErrIterationLimit) {
			t.Errorf("MaxIter %d: err = %v, want error %v", tc.maxIter, err, tc.wantErr)
		}
		if tc.wantErr && !strings.Contains(err.Error(), "MaxIter") {
			t.Errorf("MaxIter %d: err = %q does not name MaxIter", tc.maxIter, err)
		}
		entered := 0
		for _, v := range x {
			if v < 0 {
				t.Errorf("MaxIter %d: x = %v infeasible", tc.maxIter, x)
			}
			if v > 0 {
				entered++
			}
		}
		if want := min(n, max(tc.maxIter, 0)); tc.maxIter > 0 && entered != want {
			t.Errorf("MaxIter %d: %d positive coefficients, want %d", tc.maxIter, entered, want)
		}
		if it := ws.Iterations(); it != entered {
			t.Errorf("MaxIter %d: Iterations() = %d, want %d", tc.maxIter, it, entered)
		}
	}
}

// hashFloats returns an FNV-1a hash of the bits of v.
func hashFloats(v []float64) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	for _, f := range v {
		u := math.Float64bits(f)
		for i := range buf {
			buf[i] = byte(u >> (8 * i))
		}
		h.Write(buf[:])
	}
	return h.Sum64()
}

// pexp approximates exp(x) by (1 + x/1024)^1024 with arithmetic only, so it
// gives the same bits on every platform (math.Exp has assembly versions).
func pexp(x float64) float64 {
	y := 1 + x/1024
	for range 10 {
		y *= y
	}
	return y
}

// goldenProblem builds a platform-independent problem (PCG and arithmetic
// only) shaped like the HAE-OLS fit: nearly collinear exp features and a
// noisy non-negative combination of them as right-hand side. Every product
// is rounded explicitly (float64(x*y)) so that GOAMD64=v3 and arm64, which
// may fuse x*y+z, build the same bits.
func goldenProblem(m, n int) (a, b []float64) {
	rng := newRand(99)
	a = make([]float64, m*n)
	for i := 0; i < m; i++ {
		u := 8 * (2*rng.Float64() - 1)
		for j := 0; j < n; j++ {
			a[i*n+j] = pexp(float64((1+float64(0.03*float64(j)))*u) - 8)
		}
	}
	u := make([]float64, n)
	for j := range u {
		if rng.IntN(2) == 0 {
			u[j] = rng.Float64()
		}
	}
	b = make([]float64, m)
	for i := range b {
		s := 0.0
		for j, v := range a[i*n : i*n+n] {
			s += float64(v * u[j])
		}
		b[i] = s * (1 + float64(0.05*rng.NormFloat64()))
	}
	return a, b
}

// TestNNLSDeterminism checks that repeated solves give bit-identical results
// (fresh workspace, reused workspace after other sizes, package function) and
// that they match a golden hash recorded on linux/amd64: NNLS is plain Go
// with explicitly rounded products, so js/wasm and arm64 must agree.
func TestNNLSDeterminism(t *testing.T) {
	for _, tc := range []struct {
		m, n   int
		golden uint64
	}{
		{128, 64, 0x6a1af5893d4cd1fb},
		{300, 12, 0x4dfdfaf7d42378e1},
	} {
		a, b := goldenProblem(tc.m, tc.n)
		first := make([]float64, tc.n)
		ws := &NNLSWorkspace{}
		if err := ws.NNLS(a, tc.m, tc.n, b, first); err != nil {
			t.Fatal(err)
		}
		if ws.drops == 0 {
			t.Errorf("%dx%d: golden problem does not exercise dropping", tc.m, tc.n)
		}
		for rep := 0; rep < 3; rep++ {
			oa, ob := goldenProblem(50, 3+rep*20) // dirty the workspace
			_ = ws.NNLS(oa, 50, 3+rep*20, ob, make([]float64, 3+rep*20))
			x := make([]float64, tc.n)
			if err := ws.NNLS(a, tc.m, tc.n, b, x); err != nil {
				t.Fatal(err)
			}
			y := make([]float64, tc.n)
			if err := NNLS(a, tc.m, tc.n, b, y); err != nil {
				t.Fatal(err)
			}
			for j := range x {
				if x[j] != first[j] || y[j] != first[j] {
					t.Fatalf("%dx%d rep %d: x[%d] = %v / %v, first solve %v", tc.m, tc.n, rep, j, x[j], y[j], first[j])
				}
			}
		}
		if h := hashFloats(first); h != tc.golden {
			t.Errorf("%dx%d: hash %#x, golden %#x", tc.m, tc.n, h, tc.golden)
		}
	}
}

// TestKKTCheckerDetects makes sure the KKT check used above is tight enough to
// reject a slightly wrong solution, so that TestNNLSKKT can fail.
func TestKKTCheckerDetects(t *testing.T) {
	rng := newRand(5)
	const m, n = 128, 32
	a := expFeatures(rng, m, n, 20, 0.01)
	b := withNonnegFit(rng, a, m, n, 0.01)
	x := make([]float64, n)
	if err := NNLS(a, m, n, b, x); err != nil {
		t.Fatal(err)
	}
	if bad, _ := kktViolations(a, m, n, b, x, 100); len(bad) > 0 {
		t.Fatalf("solution rejected: %v", bad)
	}
	j := 0
	for x[j] == 0 {
		j++
	}
	for _, tc := range []struct {
		name string
		edit func(x []float64)
	}{
		{"passive coefficient off by 1e-6", func(x []float64) { x[j] *= 1 + 1e-6 }},
		{"passive coefficient zeroed", func(x []float64) { x[j] = 0 }},
		{"negative coefficient", func(x []float64) { x[j] = -x[j] }},
	} {
		y := append([]float64(nil), x...)
		tc.edit(y)
		if bad, _ := kktViolations(a, m, n, b, y, 100); len(bad) == 0 {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// TestNNLSSafeguards sets the optimality tolerance to zero, so that columns
// whose gradient is positive only through rounding try to enter. The
// independence and positivity checks must refuse them: the solve must end
// without hitting the iteration cap and with an optimal objective.
func TestNNLSSafeguards(t *testing.T) { bothNNLSPaths(t, testNNLSSafeguards) }

func testNNLSSafeguards(t *testing.T) {
	saved := nnlsGradTol
	nnlsGradTol = 0
	defer func() { nnlsGradTol = saved }()
	rejections := 0
	for ci, tc := range largeNNLSCases {
		rng := newRand(uint64(200 + ci))
		a, b := tc.gen(rng, tc.m, tc.n)
		x := make([]float64, tc.n)
		ws := &NNLSWorkspace{}
		if err := ws.NNLS(a, tc.m, tc.n, b, x); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rejections += ws.rejections
		if bad, _ := kktViolations(a, tc.m, tc.n, b, x, 100); len(bad) > 0 {
			t.Errorf("%s: %v", tc.name, bad)
		}
	}
	if rejections == 0 {
		t.Errorf("no column was refused: the safeguards were not exercised")
	}
}
