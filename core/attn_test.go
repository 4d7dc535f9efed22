package core

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/core/xmath"
)

// attnOnly returns the attention-only sample of the softmax attention of the
// q/k/v sample s, computed in float64: row i attends causally to keys 0..i,
// except that the w calibration rows n-w..n-1 attend to the whole prefix
// when calibNonCausal (as the q/k/v path's calibration queries do). Like a
// sample read from a file, it has no q, k, v, HKV or D.
func attnOnly(s *sample.Sample, w int, calibNonCausal bool) *sample.Sample {
	N, d, n := s.N, s.D, s.Prefix()
	scale := s.Scale()
	a := &sample.Sample{L: s.L, H: s.H, N: N, Meta: s.Meta, Attn: make([]float32, s.L*s.H*N*N)}
	logit := make([]float64, N)
	for l := 0; l < s.L; l++ {
		for h := 0; h < s.H; h++ {
			q, k := s.QHead(l, h), s.KHead(l, s.KVHeadOf(h))
			out := a.AttnHead(l, h)
			for i := 0; i < N; i++ {
				last := i
				if calibNonCausal && i >= n-w && i < n {
					last = n - 1
				}
				mx := math.Inf(-1)
				for j := 0; j <= last; j++ {
					var dot float64
					for c := 0; c < d; c++ {
						dot += float64(q[i*d+c]) * float64(k[j*d+c])
					}
					logit[j] = scale * dot
					mx = max(mx, logit[j])
				}
				var sum float64
				for j := 0; j <= last; j++ {
					logit[j] = xmath.Exp(logit[j] - mx)
					sum += logit[j]
				}
				for j := 0; j <= last; j++ {
					out[i*N+j] = float32(logit[j] / sum)
				}
			}
		}
	}
	return a
}

func maxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// The attention-only analysis of a sample's own softmax attention agrees
// with the q/k/v analysis on the same rows: salience, key and row entropy,
// the attention maps, and an eviction cache's lost mass.
func TestAttnOnlyAgreesWithQKV(t *testing.T) {
	s := testSample(3, 1, 2, 2, 120, 16)
	n := s.Prefix()
	w := min(128, n/2)
	a := attnOnly(s, w, true)
	for h := 0; h < s.H; h++ {
		gq, ga := analyzeT(t, s, 0, h), analyzeT(t, a, 0, h)
		if !ga.AttnOnly || gq.AttnOnly || ga.W != gq.W || ga.T != gq.T || !slices.Equal(ga.Heads, []int{h}) {
			t.Fatalf("head %d: attention-only group %+v vs q/k/v W %d T %d", h, ga, gq.W, gq.T)
		}
		for _, c := range []struct {
			name      string
			got, want []float32
			tol       float64
		}{
			{"salience", ga.Salience, gq.Salience, 1e-6},
			{"key entropy", ga.KeyEntropy, gq.KeyEntropy, 1e-4},
			{"row entropy", ga.RowEntropy, gq.RowEntropy, 1e-5},
		} {
			if dd := maxAbsDiff(c.got, c.want); dd > c.tol {
				t.Errorf("head %d: %s differs by %g > %g", h, c.name, dd, c.tol)
			}
		}
		if dd := math.Abs(ga.MeanRowEntropy() - gq.MeanRowEntropy()); dd > 1e-6 {
			t.Errorf("head %d: mean row entropy differs by %g", h, dd)
		}
		p := DefaultParams(0.5)
		p.Recent = 8
		cq, err := gq.Compress("topk", p)
		if err != nil {
			t.Fatal(err)
		}
		ca, err := ga.Compress("topk", p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cq.Exact, ca.Exact) {
			t.Fatalf("head %d: topk keeps %v on q/k/v, %v on attention", h, cq.Exact, ca.Exact)
		}
		mq, ma := gq.Maps(cq, 0), ga.Maps(ca, 0)
		if dd := maxAbsDiff(ma.Orig, mq.Orig); dd > 1e-5 {
			t.Errorf("head %d: original maps differ by %g", h, dd)
		}
		// Attention-only Comp renormalises the kept probabilities: it is what
		// softmax over the smaller cache gives.
		if dd := maxAbsDiff(ma.Comp, mq.Comp); dd > 1e-5 {
			t.Errorf("head %d: compressed maps differ by %g", h, dd)
		}
		// Lost mass = the full-cache probe attention on the evicted tokens.
		m := ga.Evaluate(ca, 0)
		for i := 0; i < gq.T; i++ {
			var lost float64
			for j := 0; j < n; j++ {
				if !ca.Class[j].Exact() {
					lost += float64(mq.Orig[(w+i)*n+j])
				}
			}
			if math.Abs(m.Profile[i]-lost) > 1e-5 {
				t.Errorf("head %d probe %d: lost mass %g, q/k/v attention says %g", h, i, m.Profile[i], lost)
			}
		}
		if !(m.Err > 0 && m.Err < 1) {
			t.Errorf("head %d: topk at 0.5 loses %g of the attention, want in (0, 1)", h, m.Err)
		}
	}
}

// attnTestSample is an attention-only sample as read from a file: causal
// softmax attention of a random q/k/v sample, 2 layers of 3 heads.
func attnTestSample() *sample.Sample {
	return attnOnly(testSample(5, 2, 3, 3, 150, 8), 0, false)
}

func TestAttnOnlyMethods(t *testing.T) {
	g := analyzeT(t, attnTestSample(), 1, 2)
	needKV := map[string]bool{"hae-ols": true, "hae-nosvd": true, "hae-merge": true, "lowrank": true, "quant": true}
	for _, name := range MethodNames() {
		for _, rho := range []float64{0.1, 0.3, 1} {
			c, err := g.Compress(name, DefaultParams(rho))
			if needKV[name] {
				if !errors.Is(err, ErrNeedsKV) || !contains(err.Error(), "attention only") || !contains(err.Error(), name) {
					t.Errorf("%s at %g: error %v, want ErrNeedsKV naming the method", name, rho, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s at %g: %v", name, rho, err)
			}
			m := g.Evaluate(c, 0)
			if m.Metric != MetricLostMass || !math.IsNaN(m.Cos) {
				t.Errorf("%s at %g: metric %q cos %v, want %q and NaN", name, rho, m.Metric, m.Cos, MetricLostMass)
			}
			kept := 0
			for _, cl := range c.Class {
				if cl.Exact() {
					kept++
				}
			}
			if want := float64(kept) / float64(g.N); m.Ratio != want || (name != "full" && m.Ratio > rho) {
				t.Errorf("%s at %g: ratio %g, want slots kept / n = %g <= asked", name, rho, m.Ratio, want)
			}
			switch {
			case rho == 1 || name == "full":
				if m.Err != 0 || m.ErrMax != 0 || m.ErrP95 != 0 || m.ErrCal != 0 {
					t.Errorf("%s at %g: lost mass %g max %g p95 %g cal %g, want all 0", name, rho, m.Err, m.ErrMax, m.ErrP95, m.ErrCal)
				}
			case !(m.Err > 0 && m.Err <= m.ErrP95 && m.ErrP95 <= m.ErrMax && m.ErrMax < 1 && m.ErrCal > 0 && m.ErrCal < 1):
				t.Errorf("%s at %g: lost mass %g p95 %g max %g cal %g, want 0 < err <= p95 <= max < 1, cal in (0, 1)", name, rho, m.Err, m.ErrP95, m.ErrMax, m.ErrCal)
			}
			am := g.Maps(c, 0)
			for i := 0; i < am.Rows; i++ {
				var orig, comp float64
				for _, x := range am.Orig[i*am.Cols : (i+1)*am.Cols] {
					orig += float64(x)
				}
				for _, x := range am.Comp[i*am.Cols : (i+1)*am.Cols] {
					comp += float64(x)
				}
				// Comp is the kept mass over the retained mass (kept prefix
				// plus suffix): 1 for calibration rows, which see the prefix
				// only, less for probe rows, which keep their suffix share.
				lost := lostRow(am.Orig[i*am.Cols:(i+1)*am.Cols], c)
				want := (orig - lost) / (1 - lost)
				if i < am.Calib && math.Abs(orig-1) > 1e-5 || math.Abs(comp-want) > 1e-5 {
					t.Errorf("%s at %g row %d: map rows sum to %g and %g, want %g", name, rho, i, orig, comp, want)
					break
				}
			}
		}
	}
}

func lostRow(o []float32, c *Cache) float64 {
	var s float64
	for j, x := range o {
		if !c.All && !c.Class[j].Exact() {
			s += float64(x)
		}
	}
	return s
}

// A model of an attention-only sample has one group per query head, refuses
// the K/V methods with ErrNeedsKV and gives the same numbers every time.
func TestAttnOnlyModel(t *testing.T) {
	s := attnTestSample()
	if s.HasQKV() || s.KVHeads() != s.H || s.Group() != 1 || s.KVHeadOf(2) != 2 {
		t.Fatalf("attention-only sample: KVHeads %d Group %d, want %d and 1", s.KVHeads(), s.Group(), s.H)
	}
	grid := func() string {
		m, err := NewModel(s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Grid("hae-ols", DefaultParams(0.3), 2); !errors.Is(err, ErrNeedsKV) {
			t.Errorf("Grid(hae-ols) error %v, want ErrNeedsKV", err)
		}
		var out string
		for _, name := range []string{"topk", "snapkv", "streaming", "entropy"} {
			ms, err := m.Grid(name, DefaultParams(0.3), 3)
			if err != nil {
				t.Fatalf("Grid(%s): %v", name, err)
			}
			if len(ms) != s.L*s.H {
				t.Fatalf("Grid(%s): %d metrics, want %d", name, len(ms), s.L*s.H)
			}
			for i, mt := range ms {
				if mt.Layer != i/s.H || mt.Head != i%s.H || mt.Metric != MetricLostMass {
					t.Errorf("Grid(%s)[%d]: layer %d head %d metric %q", name, i, mt.Layer, mt.Head, mt.Metric)
				}
			}
			out += fmt.Sprintf("%v\n", ms)
		}
		g, hi, err := m.Head(1, 2)
		if err != nil || hi != 0 || g.KV != 2 {
			t.Errorf("Head(1, 2) = group of KV %v, index %d, %v; want 2, 0, nil", g, hi, err)
		}
		return out
	}
	if a, b := grid(), grid(); a != b {
		t.Errorf("attention-only results differ between two models:\n%s\n%s", a, b)
	}
	if _, err := Analyze(s, 0, s.H, Options{}); err == nil {
		t.Error("Analyze accepted query head H of an attention-only sample")
	}
}
