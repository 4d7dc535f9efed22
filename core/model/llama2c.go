package model

import (
	"fmt"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model/quant"
)

// FromLlama2C is the checkpoint of a llama2.c model (architecture llama,
// F32 weights, RMSNorm eps 1e-5, RoPE base 10000), so that the llama2.c
// models go through the same interface as GGUF and Hugging Face ones. The
// weights are read from the legacy file m.MarshalBinary writes, in
// llama2.c's order; q and k rows are permuted from llama2.c's interleaved
// RoPE order to the half-split order.
func FromLlama2C(m *llama.Model) (*Checkpoint, error) {
	lc := m.Config()
	data, err := m.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("model: llama2.c %s: %w", m.Name, err)
	}
	c := Config{Arch: Llama, Dim: lc.Dim, FFN: lc.HiddenDim, Layers: lc.Layers, Heads: lc.Heads, KVHeads: lc.KVHeads,
		HeadDim: lc.HeadSize(), Vocab: lc.Vocab, Context: lc.SeqLen, RMSEps: 1e-5, RopeTheta: 10000, Tied: lc.SharedClassifier}
	ck := &Checkpoint{Config: c, Weights: map[string]*Weight{}}
	off := llama.HeaderSize
	next := func(n int) ([]byte, error) {
		if off+4*n > len(data) {
			return nil, fmt.Errorf("model: llama2.c %s: the file ends at %d, before %d more floats", m.Name, len(data), n)
		}
		b := data[off : off+4*n : off+4*n]
		off += 4 * n
		return b, nil
	}
	put := func(name string, rows, cols int) error {
		b, err := next(rows * cols)
		if err != nil {
			return err
		}
		ck.Weights[name] = &Weight{Type: quant.F32, Rows: rows, Cols: cols, Data: b}
		return nil
	}
	perLayer := func(name string, rows, cols int) error {
		for l := 0; l < c.Layers; l++ {
			if err := put(blk(l, name), rows, cols); err != nil {
				return err
			}
		}
		return nil
	}
	kv := c.KVHeads * c.HeadDim
	steps := []func() error{
		func() error { return put("token_embd.weight", c.Vocab, c.Dim) },
		func() error { return perLayer("attn_norm.weight", 1, c.Dim) },
		func() error { return perLayer("attn_q.weight", c.Dim, c.Dim) },
		func() error { return perLayer("attn_k.weight", kv, c.Dim) },
		func() error { return perLayer("attn_v.weight", kv, c.Dim) },
		func() error { return perLayer("attn_output.weight", c.Dim, c.Dim) },
		func() error { return perLayer("ffn_norm.weight", 1, c.Dim) },
		func() error { return perLayer("ffn_gate.weight", c.FFN, c.Dim) },
		func() error { return perLayer("ffn_down.weight", c.Dim, c.FFN) },
		func() error { return perLayer("ffn_up.weight", c.FFN, c.Dim) },
		func() error { return put("output_norm.weight", 1, c.Dim) },
		func() error { _, err := next(c.Context * c.HeadDim); return err }, // the RoPE tables
	}
	if !c.Tied {
		steps = append(steps, func() error { return put("output.weight", c.Vocab, c.Dim) })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if off != len(data) {
		return nil, fmt.Errorf("model: llama2.c %s: read %d of %d bytes", m.Name, off, len(data))
	}
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("model: llama2.c %s: %w", m.Name, err)
	}
	ck.permute(ToHalfSplit)
	return ck, nil
}
