package solve

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/lapack/gonum"
)

// refRotSeq applies the rotations one at a time, row by row, in the order
// of xLASR (forward: j = 0, 1, ...; backward: j = k-1, ..., 0).
func refRotSeq(a []float64, ld, w int, c, s []float64, forward bool) {
	for jj := range c {
		j := jj
		if !forward {
			j = len(c) - 1 - jj
		}
		for i := 0; i < w; i++ {
			t, y := a[j*ld+i], a[(j+1)*ld+i]
			a[(j+1)*ld+i] = float64(c[j]*y) - float64(s[j]*t)
			a[j*ld+i] = float64(s[j]*y) + float64(c[j]*t)
		}
	}
}

// TestRotSeq checks that the fused kernels rotSeqFwd and rotSeqBwd give the
// same bits as applying the rotations one at a time, for sequences whose
// length is and is not a multiple of the fusion depth.
func TestRotSeq(t *testing.T) {
	rng := newRand(5)
	for _, k := range []int{0, 1, 2, 3, 4, 5, 6, 7, 63} {
		for _, w := range []int{0, 1, 5, 64} {
			c := make([]float64, k)
			s := make([]float64, k)
			for j := range c {
				c[j], s[j], _ = dlartg(rng.NormFloat64(), rng.NormFloat64())
			}
			ld := w + 3
			orig := randNormal(rng, k+1, ld)
			for _, fwd := range []bool{true, false} {
				got := append([]float64(nil), orig...)
				if fwd {
					rotSeqFwd(got, ld, w, c, s)
				} else {
					rotSeqBwd(got, ld, w, c, s)
				}
				want := append([]float64(nil), orig...)
				refRotSeq(want, ld, w, c, s, fwd)
				if hashFloats(got) != hashFloats(want) {
					t.Errorf("k %d, w %d, forward %v: fused kernel differs from one-at-a-time", k, w, fwd)
				}
			}
		}
	}
}

// ulps returns the distance of x and y in units of the last place of the
// larger.
func ulps(x, y float64) float64 {
	if x == y {
		return 0
	}
	return math.Abs(x-y) / (eps * max(math.Abs(x), math.Abs(y)))
}

// TestPlaneRotations compares dlartg, dlas2 and dlasv2 with gonum's LAPACK
// ports on random and extreme arguments: they are the same formulas, up
// to rounding (one division instead of two in dlartg, no math.Hypot).
func TestPlaneRotations(t *testing.T) {
	var impl gonum.Implementation
	rng := newRand(12)
	args := [][3]float64{
		{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {-2, 3, -4},
		{1e-300, 1e300, 1}, {1e300, 1e-300, -1}, {3e-320, 1, 2}, {1, 1e-17, 1},
		{1, 1e17, 1}, {-1e200, 1e200, 1e-200},
	}
	for range 300 {
		e := func() float64 { return math.Ldexp(rng.NormFloat64(), rng.IntN(80)-40) }
		args = append(args, [3]float64{e(), e(), e()})
	}
	const tol = 8
	for _, a := range args {
		f, g, h := a[0], a[1], a[2]
		c, s, r := dlartg(f, g)
		gc, gs, gr := impl.Dlartg(f, g)
		if ulps(c, gc) > tol || ulps(s, gs) > tol || ulps(r, gr) > tol {
			t.Errorf("dlartg(%g, %g) = %g %g %g, gonum %g %g %g", f, g, c, s, r, gc, gs, gr)
		}
		mn, mx := dlas2(f, g, h)
		gmn, gmx := impl.Dlas2(f, g, h)
		if ulps(mn, gmn) > tol || ulps(mx, gmx) > tol {
			t.Errorf("dlas2(%g, %g, %g) = %g %g, gonum %g %g", f, g, h, mn, mx, gmn, gmx)
		}
		smn, smx, snr, csr, snl, csl := dlasv2(f, g, h)
		gsmn, gsmx, gsnr, gcsr, gsnl, gcsl := impl.Dlasv2(f, g, h)
		for i, p := range [][2]float64{{smn, gsmn}, {smx, gsmx}, {snr, gsnr}, {csr, gcsr}, {snl, gsnl}, {csl, gcsl}} {
			// Cosines and sines near zero are compared absolutely.
			if ulps(p[0], p[1]) > tol && !(i >= 2 && math.Abs(p[0]-p[1]) < tol*eps) {
				t.Errorf("dlasv2(%g, %g, %g) output %d = %g, gonum %g", f, g, h, i, p[0], p[1])
			}
		}
	}
}

// TestBdsqrNoConvergence checks that hitting the iteration cap of the
// bidiagonal QR surfaces as ErrNoConvergence from Decompose and PinvSolve,
// naming the matrix. (PinvSolve of these well-conditioned matrices would
// skip the SVD; the shortcut is off here to reach it.)
func TestBdsqrNoConvergence(t *testing.T) {
	defer func(v int) { bdMaxIter = v }(bdMaxIter)
	bdMaxIter = 0
	pinvQRShortcut = false
	defer func() { pinvQRShortcut = true }()
	for _, sz := range []struct{ m, n int }{{40, 30}, {30, 30}, {10, 30}} {
		a := randNormal(newRand(13), sz.m, sz.n)
		d, err := Decompose(a, sz.m, sz.n)
		if d != nil || !errors.Is(err, ErrNoConvergence) || !strings.Contains(err.Error(), "a (") {
			t.Errorf("%dx%d: Decompose = %v, %v; want nil and ErrNoConvergence naming a", sz.m, sz.n, d, err)
		}
		x := make([]float64, sz.n*2)
		for i := range x {
			x[i] = 1
		}
		r, err := PinvSolve(a, sz.m, sz.n, randNormal(newRand(14), sz.m, 2), 2, 1e-6, x)
		if r != 0 || !errors.Is(err, ErrNoConvergence) || !strings.Contains(err.Error(), "a (") {
			t.Errorf("%dx%d: PinvSolve = %d, %v; want 0 and ErrNoConvergence naming a", sz.m, sz.n, r, err)
		}
		if maxAbs(x) != 0 {
			t.Errorf("%dx%d: PinvSolve left x nonzero after an error", sz.m, sz.n)
		}
	}
}

// TestPinvSolvePaths checks that the two ways pinvTall forms the projected
// right-hand side (through the left singular vectors, or through Q^T B)
// agree, on a numerically low-rank, a rank-deficient and a full-rank
// problem.
func TestPinvSolvePaths(t *testing.T) {
	defer func(f func(q, r, k int) bool) { pinvViaVectors = f }(pinvViaVectors)
	pinvQRShortcut = false // both ways are after the SVD
	defer func() { pinvQRShortcut = true }()
	for _, tc := range []struct {
		name string
		m, n int
		a    []float64
	}{
		{"exp features 200x40", 200, 40, expFeatures(newRand(15), 200, 40, 10, 0.02)},
		{"rank 6 of 90x30", 90, 30, lowRank(16, 90, 30, 6)},
		{"gaussian 70x70", 70, 70, randNormal(newRand(17), 70, 70)},
	} {
		for _, k := range []int{1, 5, 64} {
			t.Run(fmt.Sprintf("%s/k=%d", tc.name, k), func(t *testing.T) {
				b := randNormal(newRand(18), tc.m, k)
				var xs [2][]float64
				var ranks [2]int
				for i, vectors := range []bool{true, false} {
					pinvViaVectors = func(q, r, k int) bool { return vectors }
					xs[i] = make([]float64, tc.n*k)
					var err error
					if ranks[i], err = PinvSolve(tc.a, tc.m, tc.n, b, k, 1e-6, xs[i]); err != nil {
						t.Fatal(err)
					}
				}
				if ranks[0] != ranks[1] {
					t.Fatalf("ranks %d and %d", ranks[0], ranks[1])
				}
				if d := maxRelDiff(xs[0], xs[1]); d > 1e-9 {
					t.Errorf("rank %d: solutions differ by %.3g", ranks[0], d)
				}
			})
		}
	}
}
