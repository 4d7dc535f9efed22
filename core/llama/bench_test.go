package llama

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkForward measures single-sequence decoding speed in tokens/s,
// averaged over every position of the context (attention cost grows with
// the position). stories260K uses the real model when present, else random
// weights of its shape (same speed); stories15M-shape is random weights of
// the stories15M shape, the largest model the browser demo targets.
func BenchmarkForward(b *testing.B) {
	real := func(b *testing.B) *Model {
		dir := os.Getenv("HAEOLS_MODELS")
		if dir == "" {
			dir = filepath.Join("..", "..", "..", "shared", "models")
		}
		if m, err := Load(filepath.Join(dir, "stories260K.bin")); err == nil {
			return m
		}
		m, err := Random(stories260K, 1)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	random15M := func(b *testing.B) *Model {
		m, err := Random(Config{Dim: 288, HiddenDim: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, SeqLen: 256, SharedClassifier: true}, 1)
		if err != nil {
			b.Fatal(err)
		}
		return m
	}
	for _, bc := range []struct {
		name  string
		model func(*testing.B) *Model
	}{{"stories260K", real}, {"stories15M-shape", random15M}} {
		b.Run(bc.name, func(b *testing.B) {
			m := bc.model(b)
			st := m.NewState()
			seq := m.Config().SeqLen
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				m.Forward(i%m.Config().Vocab, i%seq, st)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
