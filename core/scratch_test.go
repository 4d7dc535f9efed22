package core

import (
	"reflect"
	"slices"
	"sync"
	"testing"
)

// TestScratchDoesNotLeak checks that nothing a Cache or its Metrics keep
// lives in the pooled scratch memory: caches made earlier, and their
// metrics, stay the same while later Compress and Evaluate calls (in this
// goroutine and in others at once) reuse the scratch.
func TestScratchDoesNotLeak(t *testing.T) {
	s := testSample(7, 1, 2, 1, 600+32, 32)
	s.Meta.Prefix = 600
	g := analyzeT(t, s, 0, 0)
	type snap struct {
		keys, values, bias []float32
		class              []Class
		segment            []int32
		m                  [2]Metrics
	}
	take := func(c *Cache) snap {
		return snap{slices.Clone(c.Keys), slices.Clone(c.Values), slices.Clone(c.Bias), slices.Clone(c.Class), slices.Clone(c.Segment),
			[2]Metrics{g.Evaluate(c, 0), g.Evaluate(c, 1)}}
	}
	ratios := []float64{0.1, 0.2, 0.3, 0.5, 0.7}
	var caches []*Cache
	var snaps []snap
	for _, r := range ratios {
		for _, m := range []string{"hae-ols", "hae-merge", "topk"} {
			c, err := g.Compress(m, DefaultParams(r))
			if err != nil {
				t.Fatal(err)
			}
			caches = append(caches, c)
			snaps = append(snaps, take(c))
		}
	}
	// Churn the pool from several goroutines.
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				c, err := g.Compress("hae-ols", DefaultParams(ratios[(i+w)%len(ratios)]))
				if err != nil {
					t.Error(err)
					return
				}
				g.Evaluate(c, w%2)
			}
		}()
	}
	wg.Wait()
	for i, c := range caches {
		if got := take(c); !reflect.DeepEqual(got.keys, snaps[i].keys) || !reflect.DeepEqual(got.values, snaps[i].values) ||
			!reflect.DeepEqual(got.bias, snaps[i].bias) || !reflect.DeepEqual(got.class, snaps[i].class) ||
			!reflect.DeepEqual(got.segment, snaps[i].segment) || !sameMetrics(got.m[0], snaps[i].m[0]) || !sameMetrics(got.m[1], snaps[i].m[1]) {
			t.Errorf("cache %d (%s at %.1f) changed after later calls", i, c.Method, c.Budget.Ratio)
		}
	}
}

// sameMetrics compares metrics bit for bit (NaN equal to NaN).
func sameMetrics(a, b Metrics) bool {
	na, nb := a.NeedleErr, b.NeedleErr
	a.NeedleErr, b.NeedleErr = 0, 0
	if !(na == nb || na != na && nb != nb) {
		return false
	}
	return reflect.DeepEqual(a, b)
}
