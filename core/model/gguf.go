package model

import (
	"fmt"
	"io"
	"strings"

	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// KeyRopeFreqs is the GGUF tensor of Llama 3.1's RoPE frequency divisors.
const KeyRopeFreqs = "rope_freqs.weight"

// intKey reads a GGUF integer key of at most max, or def when absent (def
// < 0: required).
func intKey(f *gguf.File, key string, def, max int) (int, error) {
	if _, ok := f.Get(key); !ok {
		if def < 0 {
			return 0, fmt.Errorf("%w: metadata %s is missing", ErrCheckpoint, key)
		}
		return def, nil
	}
	v, err := f.Uint(key)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if v > uint64(max) {
		return 0, fmt.Errorf("%w: metadata %s = %d, more than %d", ErrCheckpoint, key, v, max)
	}
	return int(v), nil
}

// FromGGUF builds the checkpoint of a GGUF file of architecture llama,
// qwen2 or qwen3 (others are refused by name): the config from the
// {arch}.* metadata, the weights as stored (q and k rows of llama files
// permuted to the half-split order), Llama 3.1 rope factors from
// rope_freqs.weight, and the tokenizer when the file has one.
func FromGGUF(f *gguf.File) (*Checkpoint, error) {
	arch, err := f.String("general.architecture")
	if err != nil {
		return nil, fmt.Errorf("model: %w: %v", ErrCheckpoint, err)
	}
	c := Config{Arch: Arch(arch)}
	switch c.Arch {
	case Llama:
	case Qwen2:
		c.QKVBias = true
	case Qwen3:
		c.QKNorm = true
	default:
		return nil, fmt.Errorf("model: %w: GGUF architecture %q is not supported (supported: llama, qwen2, qwen3)", ErrCheckpoint, arch)
	}
	p := arch + "."
	for _, k := range []struct {
		key      string
		dst      *int
		def, max int
	}{
		{"embedding_length", &c.Dim, -1, MaxDim},
		{"feed_forward_length", &c.FFN, -1, MaxDim},
		{"block_count", &c.Layers, -1, MaxLayers},
		{"attention.head_count", &c.Heads, -1, MaxHeads},
		{"context_length", &c.Context, -1, MaxSeqLen},
	} {
		if *k.dst, err = intKey(f, p+k.key, k.def, k.max); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if c.Heads == 0 {
		return nil, fmt.Errorf("model: %w: %sattention.head_count is 0", ErrCheckpoint, p)
	}
	if c.KVHeads, err = intKey(f, p+"attention.head_count_kv", c.Heads, MaxHeads); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if c.HeadDim, err = intKey(f, p+"attention.key_length", c.Dim/c.Heads, MaxDim); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	for _, k := range []string{"attention.value_length", "rope.dimension_count"} {
		if v, err := intKey(f, p+k, c.HeadDim, MaxDim); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		} else if v != c.HeadDim {
			return nil, fmt.Errorf("model: %w: %s%s = %d differs from the head dimension %d (not supported)", ErrCheckpoint, p, k, v, c.HeadDim)
		}
	}
	if c.RMSEps, err = f.Float(p + "attention.layer_norm_rms_epsilon"); err != nil {
		return nil, fmt.Errorf("model: %w: %v", ErrCheckpoint, err)
	}
	c.RopeTheta = 10000
	if _, ok := f.Get(p + "rope.freq_base"); ok {
		if c.RopeTheta, err = f.Float(p + "rope.freq_base"); err != nil {
			return nil, fmt.Errorf("model: %w: %v", ErrCheckpoint, err)
		}
	}
	if _, ok := f.Get(p + "rope.scaling.type"); ok {
		if s, _ := f.String(p + "rope.scaling.type"); s != "none" {
			return nil, fmt.Errorf("model: %w: %srope.scaling.type %q is not supported", ErrCheckpoint, p, s)
		}
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return nil, fmt.Errorf("model: %w: no 2-dimensional token_embd.weight", ErrCheckpoint)
	}
	if c.Vocab, err = intKey(f, p+"vocab_size", int(min(emb.Dims[1], MaxVocab+1)), MaxVocab); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	_, hasOutput := f.Tensor("output.weight")
	c.Tied = !hasOutput
	_, qb := f.Tensor("blk.0.attn_q.bias")
	_, ob := f.Tensor("blk.0.attn_output.bias")
	c.QKVBias = c.QKVBias || qb
	c.OutputBias = ob
	ck := &Checkpoint{Config: c, Weights: map[string]*Weight{}}
	for _, t := range f.Tensors {
		if t.Name == KeyRopeFreqs {
			if t.Type != quant.F32 || len(t.Dims) != 1 || t.Dims[0] != uint64(c.HeadDim/2) {
				return nil, fmt.Errorf("model: %w: %s is %s %v, want F32 [%d]", ErrCheckpoint, t.Name, t.Type, t.Dims, c.HeadDim/2)
			}
			ck.Config.RopeFactors = make([]float32, c.HeadDim/2)
			if err := quant.Dequantize(quant.F32, ck.Config.RopeFactors, t.Data); err != nil {
				return nil, fmt.Errorf("model: %s: %w", t.Name, err)
			}
			continue
		}
		w := &Weight{Type: t.Type, Data: t.Data}
		switch len(t.Dims) {
		case 1:
			w.Rows, w.Cols = 1, int(t.Dims[0])
		case 2:
			if t.Dims[0] > MaxVocab || t.Dims[1] > MaxVocab {
				return nil, fmt.Errorf("model: %w: tensor %s has dimensions %v", ErrCheckpoint, t.Name, t.Dims)
			}
			w.Rows, w.Cols = int(t.Dims[1]), int(t.Dims[0])
		default:
			return nil, fmt.Errorf("model: %w: tensor %s has %d dimensions, want 1 or 2", ErrCheckpoint, t.Name, len(t.Dims))
		}
		ck.Weights[t.Name] = w
	}
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if c.Arch == Llama {
		ck.permute(ToHalfSplit)
	}
	if _, ok := f.Get(tokenizer.KeyModel); ok {
		if ck.Tokenizer, err = tokenizer.FromGGUF(f); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		if ck.Tokenizer.Vocab() != c.Vocab {
			return nil, fmt.Errorf("model: %w: the tokenizer has %d tokens, the model %d", ErrCheckpoint, ck.Tokenizer.Vocab(), c.Vocab)
		}
	}
	return ck, nil
}

// permute applies f (ToHalfSplit or ToInterleaved) to every q and k
// weight and bias; Check must have passed.
func (c *Checkpoint) permute(f func(*Weight, int, int) *Weight) {
	for _, s := range c.Config.shapes() {
		if !s.rope {
			continue
		}
		heads := c.Config.Heads
		if strings.Contains(s.name, "attn_k") {
			heads = c.Config.KVHeads
		}
		c.Weights[s.name] = f(c.Weights[s.name], heads, c.Config.HeadDim)
	}
}

// GGUFOptions are the choices of WriteGGUF.
type GGUFOptions struct {
	// Name is general.name.
	Name string
	// Type gives the type each weight is written in; nil keeps every
	// weight's type. A weight whose type changes is decoded to float32
	// and quantized again.
	Type func(name string, w *Weight) quant.Type
}

// WriteGGUF writes ck as a GGUF file of its architecture: the metadata
// FromGGUF reads, the tokenizer's tokenizer.ggml.* metadata when ck has a
// tokenizer, and the weights in file order, q and k rows permuted to the
// interleaved order for llama.
func WriteGGUF(w io.Writer, ck *Checkpoint, opt GGUFOptions) error {
	if err := ck.Check(); err != nil {
		return fmt.Errorf("model: write gguf: %w", err)
	}
	c := ck.Config
	p := string(c.Arch) + "."
	kv := []gguf.KV{
		{Key: "general.architecture", Value: string(c.Arch)},
		{Key: "general.name", Value: opt.Name},
		{Key: p + "context_length", Value: uint32(c.Context)},
		{Key: p + "embedding_length", Value: uint32(c.Dim)},
		{Key: p + "block_count", Value: uint32(c.Layers)},
		{Key: p + "feed_forward_length", Value: uint32(c.FFN)},
		{Key: p + "attention.head_count", Value: uint32(c.Heads)},
		{Key: p + "attention.head_count_kv", Value: uint32(c.KVHeads)},
		{Key: p + "attention.key_length", Value: uint32(c.HeadDim)},
		{Key: p + "attention.value_length", Value: uint32(c.HeadDim)},
		{Key: p + "attention.layer_norm_rms_epsilon", Value: float32(c.RMSEps)},
		{Key: p + "rope.freq_base", Value: float32(c.RopeTheta)},
		{Key: p + "rope.dimension_count", Value: uint32(c.HeadDim)},
		{Key: p + "vocab_size", Value: uint32(c.Vocab)},
	}
	if ck.Tokenizer != nil {
		tk, err := ck.Tokenizer.GGUF()
		if err != nil {
			return fmt.Errorf("model: write gguf: %w", err)
		}
		kv = append(kv, tk...)
	}
	out := &Checkpoint{Config: c, Weights: map[string]*Weight{}}
	for name, wt := range ck.Weights {
		out.Weights[name] = wt
	}
	if c.Arch == Llama {
		out.permute(ToInterleaved)
	}
	var ts []*gguf.Tensor
	for _, s := range c.shapes() {
		wt := out.Weights[s.name]
		if opt.Type != nil {
			if t := opt.Type(s.name, wt); t != wt.Type {
				x, err := wt.Floats()
				if err != nil {
					return fmt.Errorf("model: write gguf: %s: %w", s.name, err)
				}
				if wt, err = NewWeight(t, wt.Rows, wt.Cols, x); err != nil {
					return fmt.Errorf("model: write gguf: %s: %w", s.name, err)
				}
			}
		}
		dims := []uint64{uint64(wt.Cols), uint64(wt.Rows)}
		if s.rows == 1 {
			dims = dims[:1]
		}
		ts = append(ts, &gguf.Tensor{Name: s.name, Type: wt.Type, Dims: dims, Data: wt.Data})
	}
	if c.RopeFactors != nil {
		t, err := gguf.NewTensor(KeyRopeFreqs, quant.F32, []uint64{uint64(len(c.RopeFactors))}, c.RopeFactors)
		if err != nil {
			return fmt.Errorf("model: write gguf: %w", err)
		}
		ts = append(ts, t)
	}
	return gguf.Write(w, kv, ts)
}
