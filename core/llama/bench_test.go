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

// BenchmarkTeacherForced feeds 64 known tokens after 960 cached positions
// to a model of the byte model kjv3m's shape (random weights): one at a
// time (Forward) and in blocks of 32 (ForwardBlock, the same bits), in
// tokens/s.
func BenchmarkTeacherForced(b *testing.B) {
	m, err := Random(Config{Dim: 256, HiddenDim: 768, Layers: 4, Heads: 4, KVHeads: 2, Vocab: 259, SeqLen: 1024, SharedClassifier: true}, 1)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]int, 1024)
	for i := range toks {
		toks[i] = 3 + i%256
	}
	st := m.NewState()
	for p := 0; p < 960; p++ {
		m.Forward(toks[p], p, st)
	}
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			for p := 960; p < 1024; p++ {
				m.Forward(toks[p], p, st)
			}
		}
		b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
	b.Run("block32", func(b *testing.B) {
		for b.Loop() {
			m.ForwardBlock(toks[960:992], 960, st)
			m.ForwardBlock(toks[992:1024], 992, st)
		}
		b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}
