package solve

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Accuracy of Decompose and PinvSolve against gonum's LAPACK (Dgesvd), the
// implementation they replaced.

// randOrtho returns an m x k matrix with orthonormal columns (the Q factor of
// a Gaussian matrix), k <= m.
func randOrtho(seed uint64, m, k int) []float64 {
	var qr mat.QR
	qr.Factorize(mat.NewDense(m, k, randNormal(newRand(seed), m, k)))
	var q mat.Dense
	qr.QTo(&q)
	out := make([]float64, m*k)
	for i := 0; i < m; i++ {
		for j := 0; j < k; j++ {
			out[i*k+j] = q.At(i, j)
		}
	}
	return out
}

// withSpectrum returns U diag(s) V^T for random orthonormal U (m x k) and V
// (n x k), k = len(s) <= min(m, n).
func withSpectrum(seed uint64, m, n int, s []float64) []float64 {
	k := len(s)
	u, v := randOrtho(seed, m, k), randOrtho(seed+1, n, k)
	a := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			t := 0.0
			for l := 0; l < k; l++ {
				t += u[i*k+l] * s[l] * v[j*k+l]
			}
			a[i*n+j] = t
		}
	}
	return a
}

// geometric returns k values from 1 down to 1/cond, equally spaced in log.
func geometric(k int, cond float64) []float64 {
	s := make([]float64, k)
	for i := range s {
		s[i] = math.Pow(cond, -float64(i)/float64(max(k-1, 1)))
	}
	return s
}

// refMatrices are the test matrices for the comparisons with gonum.
func refMatrices() []struct {
	name string
	m, n int
	a    []float64
} {
	gapped := append(geometric(20, 1e4), geometric(20, 1e4)...)
	for i := 20; i < 40; i++ {
		gapped[i] *= 1e-8 // 1 .. 1e-4, then a gap, then 1e-8 .. 1e-12
	}
	clustered := []float64{3, 3, 3, 2, 1, 1, 1e-3, 1e-3}
	return []struct {
		name string
		m, n int
		a    []float64
	}{
		{"gaussian 1x1", 1, 1, []float64{-0.7}},
		{"gaussian 7x1", 7, 1, randNormal(newRand(40), 7, 1)},
		{"gaussian 1x7", 1, 7, randNormal(newRand(41), 1, 7)},
		{"gaussian 5x3", 5, 3, randNormal(newRand(42), 5, 3)},
		{"gaussian 3x5", 3, 5, randNormal(newRand(43), 3, 5)},
		{"gaussian 64x64", 64, 64, randNormal(newRand(44), 64, 64)},
		{"gaussian 128x64", 128, 64, randNormal(newRand(45), 128, 64)},
		{"gaussian 1024x64", 1024, 64, randNormal(newRand(46), 1024, 64)},
		{"gaussian 32x64 wide", 32, 64, randNormal(newRand(47), 32, 64)},
		{"gaussian 64x200 wide", 64, 200, randNormal(newRand(48), 64, 200)},
		{"cond 1e12 100x40", 100, 40, withSpectrum(49, 100, 40, geometric(40, 1e12))},
		{"cond 1e12 64x64", 64, 64, withSpectrum(50, 64, 64, geometric(64, 1e12))},
		{"cond 1e12 30x80 wide", 30, 80, withSpectrum(51, 30, 80, geometric(30, 1e12))},
		{"gapped spectrum 200x40", 200, 40, withSpectrum(52, 200, 40, gapped)},
		{"clustered 50x8", 50, 8, withSpectrum(53, 50, 8, clustered)},
		{"rank 5 of 60x30", 60, 30, lowRank(54, 60, 30, 5)},
		{"rank 3 of 20x20", 20, 20, lowRank(55, 20, 20, 3)},
		{"rank 4 of 10x40 wide", 10, 40, lowRank(56, 10, 40, 4)},
		{"exp features 128x64", 128, 64, expFeatures(newRand(57), 128, 64, 10, 0.02)},
		{"exp features 512x48", 512, 48, expFeatures(newRand(58), 512, 48, 10, 0.05)},
		{"tiny scale 30x20", 30, 20, scaled(randNormal(newRand(59), 30, 20), 1e-200)},
		{"huge scale 30x20", 30, 20, scaled(randNormal(newRand(60), 30, 20), 1e200)},
	}
}

func scaled(a []float64, f float64) []float64 {
	for i := range a {
		a[i] *= f
	}
	return a
}

// maxAbs returns max |x_i|.
func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// orthoErr returns max |X^T X - I| over the k columns of the r x k matrix x
// (row-major, column stride 1, row stride k).
func orthoErr(x []float64, r, k int) float64 {
	e := 0.0
	for p := 0; p < k; p++ {
		for q := 0; q < k; q++ {
			s := 0.0
			for i := 0; i < r; i++ {
				s += x[i*k+p] * x[i*k+q]
			}
			if p == q {
				s--
			}
			e = max(e, math.Abs(s))
		}
	}
	return e
}

// TestDecomposeVsGonum compares Decompose with gonum's Dgesvd: singular
// values to a small multiple of eps*max(m,n)*S[0], the reconstruction, the
// orthonormality of both factors, and each singular vector whose singular
// value is separated from the others by a relative gap g to within
// 100*eps*max(m,n)/g in angle.
func TestDecomposeVsGonum(t *testing.T) {
	var worstS, worstRec, worstOrth, worstVec float64
	for _, tc := range refMatrices() {
		t.Run(tc.name, func(t *testing.T) {
			m, n, k := tc.m, tc.n, min(tc.m, tc.n)
			d, err := Decompose(tc.a, m, n)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := gonumDecompose(tc.a, m, n)
			if !ok {
				t.Fatal("gonum SVD failed")
			}
			s0 := g.S[0]
			unit := eps * float64(max(m, n)) * s0
			ds := 0.0
			for i := range k {
				ds = max(ds, math.Abs(d.S[i]-g.S[i]))
			}
			if ds > 4*unit {
				t.Errorf("singular values differ by %.3g = %.3g eps max(m,n) S[0]", ds, ds/unit*eps)
			}
			rec := make([]float64, m*n)
			d.Reconstruct(k, rec)
			dr := 0.0
			for i := range rec {
				dr = max(dr, math.Abs(rec[i]-tc.a[i]))
			}
			if dr > 4*unit {
				t.Errorf("reconstruction error %.3g = %.3g eps max(m,n) S[0]", dr, dr/unit*eps)
			}
			du, dv := orthoErr(d.U, m, k), orthoErr(transpose(d.VT, k, n), n, k)
			tolOrth := 10 * eps * float64(max(m, n))
			if du > tolOrth || dv > tolOrth {
				t.Errorf("orthonormality: U %.3g, V %.3g, want <= %.3g", du, dv, tolOrth)
			}
			dvec := 0.0
			for i := range k {
				gap := 1.0
				for j := range k {
					if j != i {
						gap = min(gap, math.Abs(g.S[i]-g.S[j])/s0)
					}
				}
				if g.S[i] == 0 || gap < 1e-6 {
					continue // not unique
				}
				// Distances between our and gonum's unit vectors (about the
				// sine of the angle between them), signs aligned.
				cu, cv := 0.0, 0.0
				for r := range m {
					cu += d.U[r*k+i] * g.U[r*k+i]
				}
				for c := range n {
					cv += d.VT[i*n+c] * g.VT[i*n+c]
				}
				su, sv := 0.0, 0.0
				for r := range m {
					x := d.U[r*k+i] - math.Copysign(1, cu)*g.U[r*k+i]
					su += x * x
				}
				for c := range n {
					x := d.VT[i*n+c] - math.Copysign(1, cv)*g.VT[i*n+c]
					sv += x * x
				}
				for _, sin := range []float64{math.Sqrt(su), math.Sqrt(sv)} {
					dvec = max(dvec, sin*gap)
					if sin > 100*eps*float64(max(m, n))/gap {
						t.Errorf("singular vector %d (gap %.3g): angle %.3g", i, gap, sin)
					}
				}
				if cu < 0 || cv < 0 {
					t.Errorf("singular vector %d: sign differs from gonum's (cos U %.3g, V %.3g)", i, cu, cv)
				}
			}
			t.Logf("|dS|/(eps max(m,n) S0) %.3g, rec %.3g, ortho U %.3g V %.3g (eps units), sin*gap %.3g eps",
				ds/unit, dr/unit, du/eps, dv/eps, dvec/eps)
			worstS = max(worstS, ds/unit)
			worstRec = max(worstRec, dr/unit)
			worstOrth = max(worstOrth, du/eps, dv/eps)
			worstVec = max(worstVec, dvec/eps/float64(max(m, n)))
		})
	}
	t.Logf("worst: singular values %.3g, reconstruction %.3g (units eps max(m,n) S0); orthonormality %.3g eps; vectors sin*gap %.3g eps max(m,n)",
		worstS, worstRec, worstOrth, worstVec)
}

// TestPinvSolveVsGonum compares PinvSolve with the same formula evaluated
// through gonum's SVD, at rcond = 1e-6 (the HAE-OLS cutoff) and 1e-10, on
// matrices whose singular values keep a clear gap from the cutoff: the
// ranks must agree and the solutions differ by at most a small multiple of
// eps times the condition number of the kept part.
func TestPinvSolveVsGonum(t *testing.T) {
	worst := 0.0
	for _, tc := range refMatrices() {
		for _, rcond := range []float64{1e-6, 1e-10} {
			t.Run(fmt.Sprintf("%s/rcond=%g", tc.name, rcond), func(t *testing.T) {
				m, n := tc.m, tc.n
				const k = 40 // large enough that low-rank problems take the singular-vector path
				b := randNormal(newRand(61), m, k)
				_, sg, _, ok := gonumSVD(tc.a, m, n)
				g := gonumS(sg)
				if !ok {
					t.Fatal("gonum SVD failed")
				}
				// Skip problems with a singular value near the cutoff.
				cut, kept := rcond*g.s0(), 0.0
				for _, v := range g {
					if v > 0 && math.Abs(v-cut) < 1e-3*cut+100*eps*float64(max(m, n))*g.s0() {
						t.Skipf("singular value %g too close to the cutoff %g", v, cut)
					}
					if v > cut {
						kept = v
					}
				}
				x := make([]float64, n*k)
				r, err := PinvSolve(tc.a, m, n, b, k, rcond, x)
				if err != nil {
					t.Fatal(err)
				}
				xg := make([]float64, n*k)
				rg, _ := gonumPinvSolve(tc.a, m, n, b, k, rcond, xg)
				if r != rg {
					t.Fatalf("rank %d, gonum %d", r, rg)
				}
				d := maxRelDiff(x, xg)
				cond := 1.0
				if kept > 0 {
					cond = g.s0() / kept
				}
				rel := d / (eps * float64(max(m, n)) * cond)
				if rel > 10 {
					t.Errorf("rank %d, cond %.3g: differs by %.3g = %.3g eps max(m,n) cond", r, cond, d, rel)
				}
				t.Logf("rank %d, cond of kept part %.3g: max rel diff %.3g = %.3g eps max(m,n) cond", r, cond, d, rel)
				worst = max(worst, rel)
			})
		}
	}
	t.Logf("worst: %.3g eps max(m,n) cond", worst)
}

// gonumS is the singular values from gonumSVD, as a type for s0.
type gonumS []float64

func (s gonumS) s0() float64 { return s[0] }
