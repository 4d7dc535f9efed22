package core

import (
	"errors"
	"slices"
	"testing"
)

// TestAllocate checks every budget policy's accounting (the same total as
// uniform, each KV head in [1, n]) and its shape: the pyramid falls with
// depth, AdaKV keeps each layer's total, and HAE-OLS's own choice costs
// no more calibration error than uniform at the same memory.
func TestAllocate(t *testing.T) {
	s := testSample(7, 3, 4, 2, 320, 16)
	m, err := NewModel(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ratio := range []float64{0.1, 0.3, 0.6} {
		p := DefaultParams(ratio)
		uni, err := m.Allocate("hae-ols", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, policy := range Budgets {
			p.Budget = policy
			a, err := m.Allocate("hae-ols", p)
			if err != nil {
				t.Fatalf("%s at %g: %v", policy, ratio, err)
			}
			sum := 0
			for i, x := range a.Slots {
				sum += x
				if x < 1 || x > a.N {
					t.Errorf("%s at %g: KV head %d gets %d slots of %d", policy, ratio, i, x, a.N)
				}
			}
			if sum != uni.Total || a.Total != uni.Total {
				t.Errorf("%s at %g: %d slots in all (total %d), uniform %d", policy, ratio, sum, a.Total, uni.Total)
			}
			layer := func(l int) int { return a.Slots[2*l] + a.Slots[2*l+1] }
			switch policy {
			case BudgetUniform:
				if !slices.Equal(a.Slots, uni.Slots) || a.Slots[0] != int(ratio*float64(a.N)+1e-9) {
					t.Errorf("uniform at %g: %v", ratio, a.Slots)
				}
			case BudgetPyramid:
				if !(layer(0) >= layer(1) && layer(1) >= layer(2) && layer(0) > layer(2)) {
					t.Errorf("pyramid at %g: layers %d %d %d do not fall", ratio, layer(0), layer(1), layer(2))
				}
			case BudgetAdaKV:
				for l := 0; l < 3; l++ {
					if layer(l) != 2*uni.Slots[0] {
						t.Errorf("adakv at %g: layer %d has %d slots, uniform %d", ratio, l, layer(l), 2*uni.Slots[0])
					}
				}
			case BudgetHAE:
				calErr := func(a *Allocation) float64 {
					var e float64
					for l := 0; l < 3; l++ {
						for kv := 0; kv < 2; kv++ {
							g, _ := m.Group(l, kv)
							c, err := g.Compress("hae-ols", a.ParamsOf(p, l, kv))
							if err != nil {
								t.Fatal(err)
							}
							for hi := range g.Heads {
								e += g.Evaluate(c, hi).ErrCal
							}
						}
					}
					return e
				}
				if h, u := calErr(a), calErr(uni); h > u*1.02 {
					t.Errorf("hae at %g: calibration error %.4g, uniform %.4g", ratio, h, u)
				} else {
					t.Logf("hae at %g: slots %v, calibration error %.4g (uniform %.4g)", ratio, a.Slots, h, u)
				}
			}
		}
	}
	if _, err := m.Allocate("hae-ols", Params{Ratio: 0.3, Tau: 1, Budget: "even"}); err == nil {
		t.Error("an unknown policy was accepted")
	}
	// A grid under a policy compresses each head at its share.
	p := DefaultParams(0.3)
	p.Budget = BudgetPyramid
	a, _ := m.Allocate("topk", p)
	ms, err := m.Grid("topk", p, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range ms {
		if want := a.RatioOf(mt.Layer, s.KVHeadOf(mt.Head)); mt.Asked != want {
			t.Errorf("layer %d head %d: asked %v, its share %v", mt.Layer, mt.Head, mt.Asked, want)
		}
	}
	// quant needs about 0.19: the pyramid's last layer at 0.3 gets less.
	if _, err := m.Grid("quant", p, 2); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("quant under the pyramid at 0.3: %v, want ErrDoesNotFit", err)
	}
}
