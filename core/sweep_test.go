package core

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestSweep checks the sweep against one compression and evaluation per
// head, its independence of the number of workers, its n/a cells and its
// cancellation.
func TestSweep(t *testing.T) {
	s := testSample(5, 2, 4, 2, 160, 16)
	m, err := NewModel(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	heads := []HeadRef{{1, 3}, {0, 0}, {1, 2}}
	sw := Sweep{Heads: heads, Ratios: []float64{0.1, 0.4}, Methods: []string{"hae-ols", "quant", "topk"}}
	one, err := m.Sweep(context.Background(), Sweep{Heads: sw.Heads, Ratios: sw.Ratios, Methods: sw.Methods, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	sw.Workers, sw.Progress = 4, func(done, total int) { calls++ }
	four, err := m.Sweep(context.Background(), sw)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 6 || calls != 6*2 {
		t.Fatalf("%d cells, %d progress calls; want 6 and 12 (6 cells x 2 KV heads: heads 3 and 2 of layer 1 share one)", len(one), calls)
	}
	for ci, c := range one {
		if want := sw.Methods[ci%3]; c.Method != want || c.Ratio != sw.Ratios[ci/3] {
			t.Fatalf("cell %d is %s at %g, want %s at %g", ci, c.Method, c.Ratio, want, sw.Ratios[ci/3])
		}
		if c.Method == "quant" && c.Ratio == 0.1 {
			if c.NA == "" || c.Metrics != nil || !errors.Is(c.Cause, ErrDoesNotFit) {
				t.Errorf("quant at 0.1: na %q, cause %v, want n/a for ErrDoesNotFit", c.NA, c.Cause)
			}
			continue
		}
		for i, h := range heads {
			g, hi, err := m.Head(h.Layer, h.Head)
			if err != nil {
				t.Fatal(err)
			}
			cache, err := g.Compress(c.Method, c.Params)
			if err != nil {
				t.Fatal(err)
			}
			want := g.Evaluate(cache, hi)
			if math.Float64bits(c.Metrics[i].Err) != math.Float64bits(want.Err) || math.Float64bits(four[ci].Metrics[i].Err) != math.Float64bits(want.Err) {
				t.Errorf("%s at %g, head %v: err %v (1 worker), %v (4), %v evaluated alone", c.Method, c.Ratio, h, c.Metrics[i].Err, four[ci].Metrics[i].Err, want.Err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Sweep(ctx, sw); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sweep: %v", err)
	}
	if _, err := m.Sweep(context.Background(), Sweep{Heads: []HeadRef{{2, 0}}, Ratios: []float64{0.3}, Methods: []string{"topk"}}); err == nil {
		t.Error("a head out of range was accepted")
	}
}
