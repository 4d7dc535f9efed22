// Package model is the architecture-neutral form of a Llama-family
// checkpoint (Llama 2/3/3.1/3.2, Mistral, TinyLlama, SmolLM, Qwen2/2.5,
// Qwen3), whatever file it came from: its hyperparameters (Config) and its
// weights, each a matrix of a quant type kept as stored, so that a forward
// pass multiplies straight from the blocks (quant.MatVec) and a Q4_K model
// stays Q4_K in memory.
//
// The subpackages hold the file formats (gguf, hf), the block types (quant)
// and the tokenizers (tokenizer). FromGGUF and FromHF read a checkpoint;
// WriteGGUF and WriteHF write one, for tests by round trip.
//
// Weights are named as in GGUF files ("token_embd.weight",
// "blk.3.attn_q.weight") and their q and k rows are always in the
// half-split ("NEOX") RoPE order of Hugging Face and of GGUF qwen2/qwen3:
// dimension i of a head rotates with dimension i + head_dim/2. GGUF llama
// files store q and k rows in the interleaved order of the original Llama
// (dimensions 2i and 2i+1 rotate together); FromGGUF and WriteGGUF permute
// whole rows between the two (moving bytes, so quantized rows stay as they
// are). docs/CHECKPOINTS.md states the conventions.
package model

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// Arch is a model architecture, named as GGUF's general.architecture.
type Arch string

// The architectures.
const (
	// Llama covers Llama 2/3/3.1/3.2, Mistral, TinyLlama and SmolLM.
	Llama Arch = "llama"
	// Qwen2 is Qwen2 and Qwen2.5: biases on the q, k and v projections.
	Qwen2 Arch = "qwen2"
	// Qwen3: per-head RMSNorm of queries and keys before RoPE.
	Qwen3 Arch = "qwen3"
)

// Limits on a Config, checked before anything is allocated from it.
const (
	MaxDim    = 1 << 16
	MaxLayers = 1 << 10
	MaxHeads  = 1 << 10
	MaxVocab  = 1 << 21
	MaxSeqLen = 1 << 24
)

// ErrCheckpoint is wrapped by every error about a checkpoint that does not
// describe a model of this package.
var ErrCheckpoint = errors.New("unsupported or invalid checkpoint")

// Config is a checkpoint's hyperparameters.
type Config struct {
	Arch    Arch
	Dim     int // embedding width
	FFN     int // feed-forward width
	Layers  int
	Heads   int // query heads
	KVHeads int // key/value heads
	HeadDim int
	Vocab   int
	Context int // context length the model was trained for
	RMSEps  float64
	// RopeTheta is the RoPE base: pair i of a head turns at
	// RopeTheta^(-2i/HeadDim) radians per position, divided by
	// RopeFactors[i] when set (Llama 3.1 scaling).
	RopeTheta   float64
	RopeFactors []float32
	// Tied reports that the output classifier is the token embedding.
	Tied bool
	// QKVBias: biases on q, k, v; OutputBias: on the attention output;
	// QKNorm: per-head RMSNorm of q and k (Qwen3).
	QKVBias, OutputBias, QKNorm bool
}

// Validate checks c: a known architecture, dimensions within the limits
// and consistent.
func (c *Config) Validate() error {
	switch c.Arch {
	case Llama, Qwen2, Qwen3:
	default:
		return fmt.Errorf("%w: architecture %q is not supported (supported: llama, qwen2, qwen3)", ErrCheckpoint, c.Arch)
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"dim", c.Dim, MaxDim}, {"ffn", c.FFN, MaxDim}, {"layers", c.Layers, MaxLayers},
		{"heads", c.Heads, MaxHeads}, {"kv heads", c.KVHeads, MaxHeads}, {"head dim", c.HeadDim, MaxDim},
		{"vocab", c.Vocab, MaxVocab}, {"context", c.Context, MaxSeqLen},
	} {
		if f.v <= 0 || f.v > f.max {
			return fmt.Errorf("%w: %s = %d, want 1 to %d", ErrCheckpoint, f.name, f.v, f.max)
		}
	}
	switch {
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("%w: %d kv heads do not divide %d heads", ErrCheckpoint, c.KVHeads, c.Heads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("%w: head dim %d is odd; RoPE rotates pairs", ErrCheckpoint, c.HeadDim)
	case !(c.RMSEps > 0) || math.IsInf(c.RMSEps, 0):
		return fmt.Errorf("%w: rms eps %v", ErrCheckpoint, c.RMSEps)
	case !(c.RopeTheta > 1) || math.IsInf(c.RopeTheta, 0):
		return fmt.Errorf("%w: rope theta %v", ErrCheckpoint, c.RopeTheta)
	case c.RopeFactors != nil && len(c.RopeFactors) != c.HeadDim/2:
		return fmt.Errorf("%w: %d rope factors for head dim %d (want %d)", ErrCheckpoint, len(c.RopeFactors), c.HeadDim, c.HeadDim/2)
	}
	for i, f := range c.RopeFactors {
		if !(f > 0) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("%w: rope factor %d is %v", ErrCheckpoint, i, f)
		}
	}
	return nil
}

// Params is the number of weights the config implies.
func (c *Config) Params() int64 {
	var n int64
	for _, s := range c.shapes() {
		n += int64(s.rows) * int64(s.cols)
	}
	return n
}

// Weight is a matrix of Rows rows of Cols elements of Type, stored row
// after row (a vector has one row).
type Weight struct {
	Type       quant.Type
	Rows, Cols int
	Data       []byte
}

// RowBytes is the size of one row.
func (w *Weight) RowBytes() int {
	n, _ := w.Type.RowBytes(w.Cols)
	return n
}

// Row returns the bytes of row r.
func (w *Weight) Row(r int) []byte {
	n := w.RowBytes()
	return w.Data[r*n : (r+1)*n]
}

// Floats decodes the whole weight to float32 (for small weights and
// tests; the forward pass multiplies from the blocks).
func (w *Weight) Floats() ([]float32, error) {
	out := make([]float32, w.Rows*w.Cols)
	if err := quant.Dequantize(w.Type, out, w.Data); err != nil {
		return nil, err
	}
	return out, nil
}

// NewWeight quantizes the rows x cols float32 matrix x to t.
func NewWeight(t quant.Type, rows, cols int, x []float32) (*Weight, error) {
	if len(x) != rows*cols {
		return nil, fmt.Errorf("model: %d values for a %dx%d weight", len(x), rows, cols)
	}
	b, err := quant.Quantize(t, x)
	if err != nil {
		return nil, err
	}
	return &Weight{Type: t, Rows: rows, Cols: cols, Data: b}, nil
}

// Checkpoint is a model: its config, weights by GGUF name (q and k rows in
// the half-split RoPE order), and its tokenizer when the file has one.
type Checkpoint struct {
	Config    Config
	Weights   map[string]*Weight
	Tokenizer *tokenizer.Tokenizer
}

// Weight returns the weight named name.
func (c *Checkpoint) Weight(name string) (*Weight, bool) {
	w, ok := c.Weights[name]
	return w, ok
}

// shape is an expected weight.
type shape struct {
	name       string
	rows, cols int
	// rope marks q and k weights and biases: rows per head to permute.
	rope bool
}

// Layer weight names.
func blk(i int, s string) string { return fmt.Sprintf("blk.%d.%s", i, s) }

// shapes lists the weights a config implies, in GGUF file order.
func (c *Config) shapes() []shape {
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	s := []shape{{name: "token_embd.weight", rows: c.Vocab, cols: c.Dim}}
	for i := 0; i < c.Layers; i++ {
		s = append(s,
			shape{name: blk(i, "attn_norm.weight"), rows: 1, cols: c.Dim},
			shape{name: blk(i, "attn_q.weight"), rows: q, cols: c.Dim, rope: true},
			shape{name: blk(i, "attn_k.weight"), rows: kv, cols: c.Dim, rope: true},
			shape{name: blk(i, "attn_v.weight"), rows: kv, cols: c.Dim},
			shape{name: blk(i, "attn_output.weight"), rows: c.Dim, cols: q})
		if c.QKVBias {
			s = append(s,
				shape{name: blk(i, "attn_q.bias"), rows: 1, cols: q, rope: true},
				shape{name: blk(i, "attn_k.bias"), rows: 1, cols: kv, rope: true},
				shape{name: blk(i, "attn_v.bias"), rows: 1, cols: kv})
		}
		if c.OutputBias {
			s = append(s, shape{name: blk(i, "attn_output.bias"), rows: 1, cols: c.Dim})
		}
		if c.QKNorm {
			s = append(s,
				shape{name: blk(i, "attn_q_norm.weight"), rows: 1, cols: c.HeadDim},
				shape{name: blk(i, "attn_k_norm.weight"), rows: 1, cols: c.HeadDim})
		}
		s = append(s,
			shape{name: blk(i, "ffn_norm.weight"), rows: 1, cols: c.Dim},
			shape{name: blk(i, "ffn_gate.weight"), rows: c.FFN, cols: c.Dim},
			shape{name: blk(i, "ffn_up.weight"), rows: c.FFN, cols: c.Dim},
			shape{name: blk(i, "ffn_down.weight"), rows: c.Dim, cols: c.FFN})
	}
	s = append(s, shape{name: "output_norm.weight", rows: 1, cols: c.Dim})
	if !c.Tied {
		s = append(s, shape{name: "output.weight", rows: c.Vocab, cols: c.Dim})
	}
	return s
}

// Check verifies that the checkpoint has exactly the weights its config
// implies, of the right shapes, sizes and finite scales.
func (c *Checkpoint) Check() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	want := c.Config.shapes()
	if len(c.Weights) != len(want) {
		seen := map[string]bool{}
		for _, s := range want {
			seen[s.name] = true
		}
		names := make([]string, 0, len(c.Weights))
		for name := range c.Weights {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if !seen[name] {
				return fmt.Errorf("%w: weight %s is not part of a %s model with this config", ErrCheckpoint, name, c.Config.Arch)
			}
		}
	}
	for _, s := range want {
		w, ok := c.Weights[s.name]
		if !ok {
			return fmt.Errorf("%w: weight %s is missing", ErrCheckpoint, s.name)
		}
		if w.Rows != s.rows || w.Cols != s.cols {
			return fmt.Errorf("%w: weight %s is %dx%d, the config implies %dx%d", ErrCheckpoint, s.name, w.Rows, w.Cols, s.rows, s.cols)
		}
		if s.rows == 1 && w.Type.BlockSize() != 1 {
			return fmt.Errorf("%w: vector %s is %s; norms and biases must be F32, F16 or BF16", ErrCheckpoint, s.name, w.Type)
		}
		rb, err := w.Type.RowBytes(w.Cols)
		if err != nil {
			return fmt.Errorf("%w: weight %s: %v", ErrCheckpoint, s.name, err)
		}
		if len(w.Data) != rb*w.Rows {
			return fmt.Errorf("%w: weight %s has %d bytes, want %d", ErrCheckpoint, s.name, len(w.Data), rb*w.Rows)
		}
		if err := quant.CheckFinite(w.Type, w.Data); err != nil {
			return fmt.Errorf("%w: weight %s: %v", ErrCheckpoint, s.name, err)
		}
	}
	return nil
}
