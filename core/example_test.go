package core_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/sample"
)

// randomSample is a one-layer, one-head sample of random q/k/v.
func randomSample() *sample.Sample {
	r := rand.New(rand.NewPCG(1, 2))
	n, d := 256, 16
	s := &sample.Sample{L: 1, H: 1, HKV: 1, N: n, D: d,
		Q: make([]float32, n*d), K: make([]float32, n*d), V: make([]float32, n*d)}
	for i := range s.Q {
		s.Q[i], s.K[i], s.V[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	return s
}

// Analyze once, then compress at several ratios: each re-plan reuses the
// analysis.
func Example() {
	s := randomSample()
	g, err := core.Analyze(s, 0, 0, core.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, rho := range []float64{0.25, 1} {
		c, err := g.Compress("hae-ols", core.DefaultParams(rho))
		if err != nil {
			fmt.Println(err)
			return
		}
		m := g.Evaluate(c, 0)
		fmt.Printf("ratio %.2f: used %.3f, exact %d, summaries %d, err < 1: %v\n",
			rho, m.Ratio, c.Stages.Sinks+c.Stages.Recent+c.Stages.Anchors, c.Stages.Summaries, m.Err < 1)
	}
	// Output:
	// ratio 0.25: used 0.246, exact 50, summaries 5, err < 1: true
	// ratio 1.00: used 1.000, exact 224, summaries 0, err < 1: true
}

// A Model analyses each KV head on first use; Grid evaluates every head.
func ExampleModel_Grid() {
	m, err := core.NewModel(randomSample(), core.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	grid, err := m.Grid("topk", core.DefaultParams(0.3), 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(grid), "head(s), ratio used", grid[0].Ratio)
	// Output: 1 head(s), ratio used 0.29910714285714285
}
