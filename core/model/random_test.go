package model

import (
	"bytes"
	"testing"

	"github.com/haeols/haeols/core/model/quant"
)

// TestRandom checks Random's weights: their types (typ where the width is
// whole blocks, else Q8_0, else F32; norms F32 ones), the same bytes for
// the same seed, other bytes for another, and a checkpoint that passes
// Check.
func TestRandom(t *testing.T) {
	c := Config{Arch: Llama, Dim: 64, FFN: 256, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 16, Vocab: 40, Context: 64, RMSEps: 1e-5, RopeTheta: 10000, Tied: true}
	a, err := Random(c, quant.Q4_K, 7)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]quant.Type{
		"token_embd.weight":      quant.Q8_0, // 64 wide: no Q4_K super-block
		"blk.0.ffn_down.weight":  quant.Q4_K, // 256 wide
		"blk.1.attn_norm.weight": quant.F32,
	} {
		if w := a.Weights[name]; w == nil || w.Type != want {
			t.Errorf("%s: %+v, want type %v", name, w, want)
		}
	}
	b, _ := Random(c, quant.Q4_K, 7)
	d, _ := Random(c, quant.Q4_K, 8)
	name := "blk.1.attn_q.weight"
	if !bytes.Equal(a.Weights[name].Data, b.Weights[name].Data) || bytes.Equal(a.Weights[name].Data, d.Weights[name].Data) {
		t.Errorf("%s: the same seed must give the same bytes, another seed others", name)
	}
	if _, ok := a.Weights["output.weight"]; ok {
		t.Error("tied embeddings: no output.weight")
	}
	c.Tied = false
	if u, err := Random(c, quant.Q8_0, 7); err != nil || u.Weights["output.weight"] == nil {
		t.Errorf("untied: %v", err)
	}
}
