package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/haeols/haeols/core/model/quant"
)

// Random returns a checkpoint of configuration c (architecture llama,
// without a tokenizer) whose matrices hold uniform values in
// ±1/sqrt(fan-in), in typ where their width is whole blocks of it, else
// Q8_0, else F32 (as llama.cpp falls back), and whose norms are 1: a model
// of a real model's shape for benchmarks and for the browser's tests at
// real sizes. The same seed gives the same weights.
func Random(c Config, typ quant.Type, seed uint64) (*Checkpoint, error) {
	r := rand.New(rand.NewPCG(seed, 2))
	ck := &Checkpoint{Config: c, Weights: map[string]*Weight{}}
	var err error
	add := func(name string, rows, cols int) {
		if err != nil {
			return
		}
		x := make([]float32, rows*cols)
		t := quant.F32
		if rows == 1 {
			for i := range x {
				x[i] = 1
			}
		} else {
			a := float32(1 / math.Sqrt(float64(cols)))
			for i := range x {
				// Uniform in [-1, 1) from 24 random bits, without an add
				// after a product that a compiler could fuse.
				x[i] = a * (float32(int32(r.Uint32()>>8)-1<<23) / (1 << 23))
			}
			for _, try := range []quant.Type{typ, quant.Q8_0} {
				if cols%try.BlockSize() == 0 {
					t = try
					break
				}
			}
		}
		var w *Weight
		if w, err = NewWeight(t, rows, cols, x); err != nil {
			err = fmt.Errorf("model: random %s: %w", name, err)
			return
		}
		ck.Weights[name] = w
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	add("token_embd.weight", c.Vocab, c.Dim)
	add("output_norm.weight", 1, c.Dim)
	if !c.Tied {
		add("output.weight", c.Vocab, c.Dim)
	}
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
	if err != nil {
		return nil, err
	}
	if err := ck.Check(); err != nil {
		return nil, err
	}
	return ck, nil
}
