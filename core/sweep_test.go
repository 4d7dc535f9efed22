package core

import (
	"context"
	"errors"
	"math"
	"sync"
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
	heads := []HeadRef{{Layer: 1, Head: 3}, {Layer: 0, Head: 0}, {Layer: 1, Head: 2}}
	sw := Sweep{Heads: heads, Ratios: []float64{0.1, 0.4}, Methods: []string{"hae-ols", "quant", "topk"}}
	one, err := m.Sweep(context.Background(), Sweep{Heads: sw.Heads, Ratios: sw.Ratios, Methods: sw.Methods, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	calls, perCell := 0, map[int]int{}
	sw.Workers, sw.Progress = 4, func(j SweepJob) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		perCell[j.Cell] += len(j.Heads)
		if j.Total != 12 || j.Done < 1 || j.Done > 12 || (j.Err == nil) != (len(j.Metrics) == len(j.Heads)) {
			t.Errorf("job %+v", j)
		}
		for k, i := range j.Heads {
			if j.Err == nil && (j.Metrics[k].Layer != heads[i].Layer || j.Metrics[k].Head != heads[i].Head || j.Layer != heads[i].Layer) {
				t.Errorf("job of layer %d KV head %d: metrics of %d/%d for head %v", j.Layer, j.KV, j.Metrics[k].Layer, j.Metrics[k].Head, heads[i])
			}
		}
	}
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
	for c, n := range perCell {
		if n != len(heads) {
			t.Errorf("cell %d: jobs of %d heads, want %d", c, n, len(heads))
		}
	}
	// Compress and Evaluate stand in for the group's: the same numbers
	// through a caller's hooks, each cache made once per (cell, KV head).
	made := 0
	hooked, err := m.Sweep(context.Background(), Sweep{Heads: sw.Heads, Ratios: sw.Ratios, Methods: sw.Methods, Workers: 1,
		Compress: func(g *Group, method string, p Params) (*Cache, error) { made++; return g.Compress(method, p) },
		Evaluate: func(g *Group, method string, p Params, c *Cache, hi int) Metrics {
			if c.Method != method || c.Budget.Ratio != p.Ratio {
				t.Errorf("evaluate %s at %g with a cache of %s at %g", method, p.Ratio, c.Method, c.Budget.Ratio)
			}
			return g.Evaluate(c, hi)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if made != 12 {
		t.Errorf("%d caches made through Compress, want 12", made)
	}
	for ci := range one {
		for i := range one[ci].Metrics {
			if math.Float64bits(hooked[ci].Metrics[i].Err) != math.Float64bits(one[ci].Metrics[i].Err) {
				t.Errorf("cell %d head %d: err %v through the hooks, %v without", ci, i, hooked[ci].Metrics[i].Err, one[ci].Metrics[i].Err)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Sweep(ctx, sw); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sweep: %v", err)
	}
	if _, err := m.Sweep(context.Background(), Sweep{Heads: []HeadRef{{Layer: 2, Head: 0}}, Ratios: []float64{0.3}, Methods: []string{"topk"}}); err == nil {
		t.Error("a head out of range was accepted")
	}
}
