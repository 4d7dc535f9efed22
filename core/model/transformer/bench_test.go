package transformer

import (
	"testing"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
)

// smolLM2 is the shape of SmolLM2-135M (architecture llama, tied
// embeddings): 576 wide, 30 layers, 9 heads over 3 KV heads of 64, a
// feed-forward of 1536, 49152 tokens.
var smolLM2 = model.Config{Arch: model.Llama, Dim: 576, FFN: 1536, Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64,
	Vocab: 49152, Context: 2048, RMSEps: 1e-5, RopeTheta: 100000, Tied: true}

// BenchmarkPrefill: tokens per second of a 64-token prefill of a model
// of SmolLM2-135M's shape with random weights (Q8_0; Q4_K where the width
// is whole super-blocks, i.e. ffn_down, Q8_0 elsewhere), against 64 Forward
// calls. Building the model takes a few seconds before the timing.
func BenchmarkPrefill(b *testing.B) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_K} {
		ck, err := model.Random(smolLM2, typ, 1)
		if err != nil {
			b.Fatal(err)
		}
		m, err := New(ck)
		if err != nil {
			b.Fatal(err)
		}
		toks := make([]int, 64)
		for i := range toks {
			toks[i] = (i * 7919) % smolLM2.Vocab
		}
		b.Run(typ.String()+"/Prefill", func(b *testing.B) {
			for b.Loop() {
				m.Prefill(toks, 0, m.NewState(newDense(smolLM2)))
			}
			b.ReportMetric(float64(len(toks)*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
		b.Run(typ.String()+"/Forward", func(b *testing.B) {
			for b.Loop() {
				st := m.NewState(newDense(smolLM2))
				for pos, tok := range toks {
					m.Forward(tok, pos, st)
				}
			}
			b.ReportMetric(float64(len(toks)*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
