package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
)

// smolLM2 is the shape of SmolLM2-135M (architecture llama, tied
// embeddings): 576 wide, 30 layers, 9 heads over 3 KV heads of 64, a
// feed-forward of 1536, 49152 tokens.
var smolLM2 = model.Config{Arch: model.Llama, Dim: 576, FFN: 1536, Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64,
	Vocab: 49152, Context: 2048, RMSEps: 1e-5, RopeTheta: 100000, Tied: true}

// randomCheckpoint fills c's weights with uniform values in ±1/sqrt(fan-in)
// (norms 1), matrices in typ where their width allows it, else Q8_0, else
// F32 — as llama.cpp falls back for widths that are not whole super-blocks.
func randomCheckpoint(b *testing.B, c model.Config, typ quant.Type) *model.Checkpoint {
	r := rand.New(rand.NewPCG(1, 2))
	ck := &model.Checkpoint{Config: c, Weights: map[string]*model.Weight{}}
	add := func(name string, rows, cols int) {
		x := make([]float32, rows*cols)
		t := quant.F32
		if rows == 1 {
			for i := range x {
				x[i] = 1
			}
		} else {
			a := float32(1 / math.Sqrt(float64(cols)))
			for i := range x {
				x[i] = a * (2*r.Float32() - 1)
			}
			for _, try := range []quant.Type{typ, quant.Q8_0} {
				if cols%try.BlockSize() == 0 {
					t = try
					break
				}
			}
		}
		w, err := model.NewWeight(t, rows, cols, x)
		if err != nil {
			b.Fatal(err)
		}
		ck.Weights[name] = w
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	add("token_embd.weight", c.Vocab, c.Dim)
	add("output_norm.weight", 1, c.Dim)
	for l := 0; l < c.Layers; l++ {
		p := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		add(p("attn_norm.weight"), 1, c.Dim)
		add(p("ffn_norm.weight"), 1, c.Dim)
		add(p("attn_q.weight"), q, c.Dim)
		add(p("attn_k.weight"), kv, c.Dim)
		add(p("attn_v.weight"), kv, c.Dim)
		add(p("attn_output.weight"), c.Dim, q)
		add(p("ffn_gate.weight"), c.FFN, c.Dim)
		add(p("ffn_up.weight"), c.FFN, c.Dim)
		add(p("ffn_down.weight"), c.Dim, c.FFN)
	}
	return ck
}

// BenchmarkPrefill: tokens per second of a 64-token prefill of a model
// of SmolLM2-135M's shape with random weights (Q8_0; Q4_K where the width
// is whole super-blocks, i.e. ffn_down, Q8_0 elsewhere), against 64 Forward
// calls. Building the model takes a few seconds before the timing.
func BenchmarkPrefill(b *testing.B) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_K} {
		ck := randomCheckpoint(b, smolLM2, typ)
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
