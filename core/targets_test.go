package core

import (
	"math"
	"testing"
)

// TestBinTargets checks the bin targets of every kind of tail of a HAE
// order (empty, one token, across and on chunk boundaries, everything)
// against float64 sums of exp(S - mu) and exp(S - mu) V over the bin.
// Tolerance: 1e-5 of the row's full mass (and of that times max |V|): the
// sums are of float32 attention, differences of totals included.
func TestBinTargets(t *testing.T) {
	s := testSample(11, 1, 2, 1, 700, 16)
	s.Meta.Prefix = 640
	g := analyzeT(t, s, 0, 0)
	b, err := NewBudget(g.N, g.D, 0.3, 4, 32)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := b.Candidates()
	o := haeOrder(g, lo, hi, 0.25)
	nc := len(o.idx)
	ch := sumChunk(nc)
	var vmax float64
	for _, x := range g.V {
		vmax = max(vmax, math.Abs(float64(x)))
	}
	d := g.D
	// Out of order on purpose: the sums grow as far as each call needs.
	for _, from := range []int{ch + 1, 0, 1, ch - 1, ch, 3*ch + 5, nc - 1, nc, 2 * ch} {
		z, y, ex := g.binTargets(new(scratch), o, from, true)
		z2, _, _ := g.binTargets(new(scratch), o, from, false)
		for i := 0; i < g.Rows; i++ {
			var zr float64
			yr := make([]float64, d)
			for _, j := range o.idx[from:] {
				e := math.Exp(float64(g.S[i*g.N+int(j)]) - float64(g.Mu[i]))
				zr += e
				for c := 0; c < d; c++ {
					yr[c] += e * float64(g.V[int(j)*d+c])
				}
			}
			rs := float64(g.RowSum[i])
			// The exact tokens' share is what the bin leaves of the row.
			if ez := ex.cal.z[i] + zr/rs; math.Abs(ez-1) > 1e-5 {
				t.Fatalf("from %d row %d: exact share %g + bin share %g = %g, want 1", from, i, ex.cal.z[i], zr/rs, ez)
			}
			for c := 0; c < d; c++ {
				if ey := ex.cal.y[i*d+c] + yr[c]/rs; math.Abs(ey-float64(g.Oc[i*d+c])) > 1e-5*vmax {
					t.Fatalf("from %d row %d col %d: exact share of Y %g + bin share %g, want the full output %g", from, i, c, ex.cal.y[i*d+c], yr[c]/rs, g.Oc[i*d+c])
				}
			}
			if math.Abs(z[i]-zr) > 1e-5*rs || z2[i] != z[i] {
				t.Fatalf("from %d row %d: z = %g (mass only %g), want %g", from, i, z[i], z2[i], zr)
			}
			for c := 0; c < d; c++ {
				if math.Abs(y[i*d+c]-yr[c]) > 1e-5*rs*vmax {
					t.Fatalf("from %d row %d col %d: Y = %g, want %g", from, i, c, y[i*d+c], yr[c])
				}
			}
		}
	}
}

// TestEvaluateFromShare checks the metrics Evaluate gets from the exact
// tokens' share (what it uses for HAE-OLS caches: calibration and probe
// outputs without work per exact token) against attention over the cache,
// for the OLS methods, several ratios and every query head of a GQA group.
// Tolerance on every error (each probe's, err_cal) and on cos: 1e-5 + 1e-4
// of the value (both are float32-accurate outputs of the same softmax,
// summed in different orders).
func TestEvaluateFromShare(t *testing.T) {
	s := testSample(5, 1, 4, 1, 560, 32)
	s.Meta.Prefix = 512
	g := analyzeT(t, s, 0, 0)
	used, worst := 0, 0.0
	check := func(what string, a, b float64) bool {
		d := math.Abs(a - b)
		worst = max(worst, d)
		return d <= 1e-5+1e-4*math.Abs(b)
	}
	for _, method := range []string{"hae-ols", "hae-nosvd"} {
		for _, rho := range []float64{0.08, 0.15, 0.3, 0.5, 0.8} {
			p := DefaultParams(rho)
			if method == "hae-ols" {
				p.Tau = 0.9 // the SVD stage on: truncated keys and values
			}
			c, err := g.Compress(method, p)
			if err != nil {
				t.Fatalf("%s at %g: %v", method, rho, err)
			}
			if c.exactShare == nil {
				continue
			}
			used++
			plain := *c
			plain.exactShare = nil
			for hi := range g.Heads {
				a, b := g.Evaluate(c, hi), g.Evaluate(&plain, hi)
				if !check("err_cal", a.ErrCal, b.ErrCal) || !check("cos", a.Cos, b.Cos) {
					t.Errorf("%s at %g head %d: err_cal %g, cos %g from the exact share; %g, %g attending", method, rho, hi, a.ErrCal, a.Cos, b.ErrCal, b.Cos)
				}
				for i := range a.Profile {
					if !check("probe", a.Profile[i], b.Profile[i]) {
						t.Errorf("%s at %g head %d probe %d: error %g from the exact share, %g attending", method, rho, hi, i, a.Profile[i], b.Profile[i])
						break
					}
				}
			}
		}
	}
	t.Logf("%d caches, largest difference %.3g", used, worst)
	if used < 6 {
		t.Fatalf("only %d caches carried the exact share", used)
	}
}
