package core

import (
	"math"
	"testing"

	"github.com/haeols/haeols/core/kernel"
)

// exactSums is an exact share (exactShare) summed out row by row, the
// form TestBinTargets checks: z[i] and y[i*D+c] are exactRows.z(i) and
// exactRows.y(i*D+c).
type exactSums struct{ cal, probe *exactSumRows }

type exactSumRows struct{ z, y []float64 }

// binTargets is Group.targets with the exact share summed out.
func (g *Group) binTargets(sc *scratch, order *binOrder, from int, withY bool) (z, y []float64, ex *exactSums) {
	z, y, sh := g.targets(sc, order, from, withY)
	if sh == nil {
		return z, y, nil
	}
	ex = &exactSums{cal: sh.cal.sums()}
	if sh.probe != nil {
		ex.probe = sh.probe.sums()
	}
	return z, y, ex
}

func (e *exactRows) sums() *exactSumRows {
	r := &exactSumRows{z: make([]float64, len(e.z32)), y: make([]float64, len(e.y32))}
	for i := range r.z {
		r.z[i] = e.z(i)
	}
	for k := range r.y {
		r.y[k] = e.y(k)
	}
	return r
}

// TestCalLogits checks that the logits an HAE-OLS cache keeps from its
// features are the bits kernel.Logits gives for its keys and the group's
// calibration rows, with the SVD stage off and on (where lowering a rank
// to fit changes the keys after the features), at several ratios.
func TestCalLogits(t *testing.T) {
	s := testSample(5, 1, 4, 1, 560, 32)
	s.Meta.Prefix = 512
	g := analyzeT(t, s, 0, 0)
	kept := 0
	for _, tau := range []float64{1, 0.9, 0.6} {
		for _, rho := range []float64{0.08, 0.15, 0.3, 0.5, 0.8} {
			p := DefaultParams(rho)
			p.Tau = tau
			c, err := g.Compress("hae-ols", p)
			if err != nil {
				t.Fatalf("tau %g ratio %g: %v", tau, rho, err)
			}
			if c.calLogits == nil {
				continue
			}
			kept++
			want := make([]float32, g.Rows*c.C)
			kernel.Logits(want, g.Qc, g.Rows, c.Keys, c.C, g.D, g.Scale)
			if len(c.calLogits) != len(want) {
				t.Fatalf("tau %g ratio %g: %d logits, want %d", tau, rho, len(c.calLogits), len(want))
			}
			for i, x := range want {
				if math.Float32bits(c.calLogits[i]) != math.Float32bits(x) {
					t.Fatalf("tau %g ratio %g: logit %d is %v, kernel.Logits gives %v", tau, rho, i, c.calLogits[i], x)
				}
			}
		}
	}
	if kept < 8 {
		t.Fatalf("only %d caches kept their logits", kept)
	}
}
