package core

import (
	"math"
	"testing"
)

// TestMapsAgainstReference checks the attention maps of output samples
// against a float64 reference computed from the logits: each row's softmax
// over exact prefix tokens, synthetic tokens (with their biases) and, for
// probe rows, the suffix partial; a summary's probability spread over its
// segment by salience. Tolerance: 2e-6 absolute on probabilities (float32
// rounding of a few products and one exponential per entry).
func TestMapsAgainstReference(t *testing.T) {
	s := testSample(7, 1, 4, 2, 320, 32)
	s.Meta.Prefix = 256
	g := analyzeT(t, s, 0, 1)
	const tol = 2e-6
	for _, method := range []string{"full", "hae-ols", "hae-merge", "topk", "streaming", "quant", "lowrank"} {
		for _, rho := range []float64{0.2, 0.5} {
			c, err := g.Compress(method, DefaultParams(rho))
			if err != nil {
				t.Fatalf("%s at %g: %v", method, rho, err)
			}
			for hi := range g.Heads {
				am := g.Maps(c, hi)
				orig, comp := refMaps(g, c, hi)
				if d := maxAbsDiff64(am.Orig, orig); d > tol {
					t.Errorf("%s at %g head %d: Orig differs from the reference by %g (tolerance %g)", method, rho, hi, d, tol)
				}
				if d := maxAbsDiff64(am.Comp, comp); d > tol {
					t.Errorf("%s at %g head %d: Comp differs from the reference by %g (tolerance %g)", method, rho, hi, d, tol)
				}
			}
		}
	}
}

func maxAbsDiff64(a []float32, b []float64) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-b[i]))
	}
	return m
}

// refMaps computes Maps' Orig and Comp in float64 from the logits.
func refMaps(g *Group, c *Cache, hi int) (orig, comp []float64) {
	n, d, w, t := g.N, g.D, g.W, g.T
	p := g.Probes[hi]
	orig, comp = make([]float64, (w+t)*n), make([]float64, (w+t)*n)
	share := make([]float64, n)
	segMass := map[int32]float64{}
	segCount := map[int32]float64{}
	for j := 0; j < n; j++ {
		if c.Class[j] == Summarized {
			segMass[c.Segment[j]] += float64(g.Salience[j])
			segCount[c.Segment[j]]++
		}
	}
	approx := make([]int, n)
	k := 0
	for j := 0; j < n; j++ {
		switch c.Class[j] {
		case Summarized:
			if sm := segMass[c.Segment[j]]; sm > 0 {
				share[j] = float64(g.Salience[j]) / sm
			} else {
				share[j] = 1 / segCount[c.Segment[j]]
			}
		case Approx:
			approx[j] = k
			k++
		}
	}
	for r := 0; r < w+t; r++ {
		var s, q []float32
		suf := math.Inf(-1)
		var sufSum float64
		if r < w {
			s, q = g.S[(hi*w+r)*n:(hi*w+r+1)*n], g.Qc[(hi*w+r)*d:(hi*w+r+1)*d]
		} else {
			i := r - w
			s, q = p.S[i*n:(i+1)*n], p.Q[i*d:(i+1)*d]
			suf, sufSum = float64(p.Suffix.Max[i]), float64(p.Suffix.Sum[i])
		}
		syn := make([]float64, c.C)
		for k := range syn {
			var x float64
			for e := 0; e < d; e++ {
				x += float64(q[e]) * float64(c.Keys[k*d+e])
			}
			syn[k] = float64(g.Scale) * x
			if c.Bias != nil {
				syn[k] += float64(c.Bias[k])
			}
		}
		// Original: all prefix logits plus the suffix.
		mx := suf
		for _, x := range s {
			mx = max(mx, float64(x))
		}
		tot := sufSum * math.Exp(suf-mx)
		if r < w {
			tot = 0
		}
		for _, x := range s {
			tot += math.Exp(float64(x) - mx)
		}
		for j, x := range s {
			orig[r*n+j] = math.Exp(float64(x)-mx) / tot
		}
		// Compressed.
		mx = suf
		for j, x := range s {
			if c.All || c.Class[j].Exact() {
				mx = max(mx, float64(x))
			}
		}
		for _, x := range syn {
			mx = max(mx, x)
		}
		tot = 0
		if r >= w {
			tot = sufSum * math.Exp(suf-mx)
		}
		for j, x := range s {
			if c.All || c.Class[j].Exact() {
				tot += math.Exp(float64(x) - mx)
			}
		}
		for _, x := range syn {
			tot += math.Exp(x - mx)
		}
		for j, x := range s {
			switch cl := c.Class[j]; {
			case c.All || cl.Exact():
				comp[r*n+j] = math.Exp(float64(x)-mx) / tot
			case cl == Summarized:
				comp[r*n+j] = math.Exp(syn[c.Segment[j]]-mx) / tot * share[j]
			case cl == Approx:
				comp[r*n+j] = math.Exp(syn[approx[j]]-mx) / tot
			}
		}
	}
	return orig, comp
}

// TestMapsKeepOrig: the original map the group keeps for its latest head
// gives the same bits as a fresh group's, whatever head was asked before,
// and is shared by the maps of that head.
func TestMapsKeepOrig(t *testing.T) {
	s := testSample(7, 1, 4, 2, 320, 32)
	s.Meta.Prefix = 256
	g := analyzeT(t, s, 0, 1)
	c, err := g.Compress("hae-ols", DefaultParams(0.3))
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range [][]int{{1}, {0, 1}, {1, 1}, {1, 0, 1}} {
		for _, hi := range seq {
			g.Maps(c, hi)
		}
		hi := seq[len(seq)-1]
		got := g.Maps(c, hi)
		fresh := analyzeT(t, s, 0, 1)
		fc, err := fresh.Compress("hae-ols", DefaultParams(0.3))
		if err != nil {
			t.Fatal(err)
		}
		want := fresh.Maps(fc, hi)
		for i := range want.Orig {
			if math.Float32bits(got.Orig[i]) != math.Float32bits(want.Orig[i]) || math.Float32bits(got.Comp[i]) != math.Float32bits(want.Comp[i]) {
				t.Fatalf("heads %v: maps differ from a fresh group's at %d", seq, i)
			}
		}
		if again := g.Maps(c, hi); &again.Orig[0] != &got.Orig[0] || &again.Comp[0] == &got.Comp[0] {
			t.Errorf("heads %v: the original map is not shared, or the compressed one is", seq)
		}
	}
}
