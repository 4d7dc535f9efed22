package core

import (
	"testing"

	"github.com/haeols/haeols/core/sample"
)

// BenchmarkHeadDefault is what the browser does for the selected head on a
// slider move of the shipped default sample (4 query heads per KV head):
// compress one group with HAE-OLS at a new ratio, evaluate one head and
// compute its attention maps.
func BenchmarkHeadDefault(b *testing.B) {
	g := defaultGroup(b, 2, 0)
	ratios := []float64{0.1, 0.2, 0.3, 0.5}
	i := 0
	for b.Loop() {
		c, err := g.Compress("hae-ols", DefaultParams(ratios[i%len(ratios)]))
		if err != nil {
			b.Fatal(err)
		}
		g.Evaluate(c, 1)
		g.Maps(c, 1)
		i++
	}
}

// defaultGroup analyses KV head kv of layer l of the shipped default
// sample.
func defaultGroup(tb testing.TB, l, kv int) *Group {
	tb.Helper()
	s, err := sample.Read("../samples/default.safetensors")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := NewModel(s, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	g, err := m.Group(l, kv)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
