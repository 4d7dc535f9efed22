// Package hf reads and writes Hugging Face model folders of the Llama
// family: config.json, the weights as one model.safetensors or as shards
// listed by model.safetensors.index.json (F32, F16 or BF16), and the
// tokenizer files, kept as bytes for package tokenizer.
//
// Open reads a folder on disk; Decode takes the files by base name, as the
// browser gets them when a user picks or drops a folder's files together.
// Everything is checked before it is used: the architecture (Llama,
// Mistral, Qwen2, Qwen3; others are refused by name), the dimensions
// against named limits, every shard name (a plain file name, no paths),
// the index against the shards' own headers (each tensor exactly once, in
// the shard the index names), and the dtypes.
package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Architectures are the values of config.json "architectures" this
// package reads.
var Architectures = []string{"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}

// Limits on config.json, checked before anything is allocated from it.
const (
	MaxDim    = 1 << 16 // hidden_size, intermediate_size, head_dim
	MaxLayers = 1 << 10
	MaxHeads  = 1 << 10
	MaxVocab  = 1 << 21
	MaxSeqLen = 1 << 24
)

// ErrConfig is wrapped by every error about a config.json this package
// does not accept.
var ErrConfig = errors.New("unsupported or invalid config.json")

// RopeScaling is config.json "rope_scaling". Only "llama3" (Llama 3.1 and
// 3.2) and no scaling ("default" or null) are accepted.
type RopeScaling struct {
	RopeType                      string  `json:"rope_type,omitempty"`
	Type                          string  `json:"type,omitempty"` // the older spelling of rope_type
	Factor                        float64 `json:"factor,omitempty"`
	LowFreqFactor                 float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor                float64 `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings,omitempty"`
}

// Kind is the scaling's type, rope_type or else type.
func (r *RopeScaling) Kind() string {
	if r.RopeType != "" {
		return r.RopeType
	}
	return r.Type
}

// Config is the part of config.json the Llama-family models use. Zero
// fields that config.json may omit take the defaults of the transformers
// configuration classes when read (see Normalize).
type Config struct {
	Architectures         []string     `json:"architectures"`
	ModelType             string       `json:"model_type"`
	HiddenSize            int          `json:"hidden_size"`
	IntermediateSize      int          `json:"intermediate_size"`
	NumHiddenLayers       int          `json:"num_hidden_layers"`
	NumAttentionHeads     int          `json:"num_attention_heads"`
	NumKeyValueHeads      int          `json:"num_key_value_heads,omitempty"`
	HeadDim               int          `json:"head_dim,omitempty"`
	VocabSize             int          `json:"vocab_size"`
	MaxPositionEmbeddings int          `json:"max_position_embeddings,omitempty"`
	RMSNormEps            float64      `json:"rms_norm_eps,omitempty"`
	RopeTheta             float64      `json:"rope_theta,omitempty"`
	RopeScaling           *RopeScaling `json:"rope_scaling,omitempty"`
	TieWordEmbeddings     bool         `json:"tie_word_embeddings"`
	AttentionBias         bool         `json:"attention_bias,omitempty"`
	TorchDtype            string       `json:"torch_dtype,omitempty"`
	BOSTokenID            *int         `json:"bos_token_id,omitempty"`
	EOSTokenID            *int         `json:"eos_token_id,omitempty"`
}

// Arch is the architecture: the first entry of Architectures.
func (c *Config) Arch() string {
	if len(c.Architectures) == 0 {
		return ""
	}
	return c.Architectures[0]
}

// QKVBias reports whether the q, k and v projections have biases: always
// for Qwen2, when attention_bias is set for Llama and Qwen3.
func (c *Config) QKVBias() bool { return c.Arch() == "Qwen2ForCausalLM" || c.AttentionBias }

// OutputBias reports whether the attention output projection has a bias
// (Llama and Qwen3 with attention_bias; never Qwen2).
func (c *Config) OutputBias() bool { return c.AttentionBias && c.Arch() != "Qwen2ForCausalLM" }

// QKNorm reports whether queries and keys are RMS-normalized per head
// before RoPE (Qwen3).
func (c *Config) QKNorm() bool { return c.Arch() == "Qwen3ForCausalLM" }

// ParseConfig decodes config.json, fills defaults (Normalize) and
// validates the result.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	c.Normalize()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// UnmarshalJSON decodes config.json; bos_token_id and eos_token_id may
// be an integer or a list (Llama 3.1 lists several end tokens), of which
// the first is kept.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	ids := map[string]*int{}
	for _, k := range []string{"bos_token_id", "eos_token_id"} {
		v, ok := raw[k]
		if !ok || len(v) == 0 || v[0] != '[' {
			continue
		}
		var list []int
		if err := json.Unmarshal(v, &list); err != nil {
			return fmt.Errorf("%s %.40s: %w", k, v, err)
		}
		if len(list) > 0 {
			ids[k] = &list[0]
		}
		delete(raw, k)
	}
	rest, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(rest, (*plain)(c)); err != nil {
		return err
	}
	if id, ok := ids["bos_token_id"]; ok {
		c.BOSTokenID = id
	}
	if id, ok := ids["eos_token_id"]; ok {
		c.EOSTokenID = id
	}
	return nil
}

// Normalize fills the fields config.json may omit with the transformers
// defaults: num_key_value_heads = num_attention_heads, head_dim =
// hidden_size / num_attention_heads, rope_theta 10000, rms_norm_eps 1e-6,
// max_position_embeddings 32768 for Qwen2 and Qwen3, else 2048.
func (c *Config) Normalize() {
	if c.NumKeyValueHeads == 0 {
		c.NumKeyValueHeads = c.NumAttentionHeads
	}
	if c.HeadDim == 0 && c.NumAttentionHeads > 0 {
		c.HeadDim = c.HiddenSize / c.NumAttentionHeads
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	if c.RMSNormEps == 0 {
		c.RMSNormEps = 1e-6
	}
	if c.MaxPositionEmbeddings == 0 {
		c.MaxPositionEmbeddings = 2048
		if a := c.Arch(); a == "Qwen2ForCausalLM" || a == "Qwen3ForCausalLM" {
			c.MaxPositionEmbeddings = 32768
		}
	}
}

// Validate checks a normalized config: a known architecture, dimensions
// within the limits and consistent, a rope scaling this package knows.
func (c *Config) Validate() error {
	arch := c.Arch()
	known := false
	for _, a := range Architectures {
		known = known || a == arch
	}
	if !known {
		return fmt.Errorf("%w: architecture %q is not supported (supported: %s)", ErrConfig, arch, strings.Join(Architectures, ", "))
	}
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"hidden_size", c.HiddenSize, MaxDim},
		{"intermediate_size", c.IntermediateSize, MaxDim},
		{"num_hidden_layers", c.NumHiddenLayers, MaxLayers},
		{"num_attention_heads", c.NumAttentionHeads, MaxHeads},
		{"num_key_value_heads", c.NumKeyValueHeads, MaxHeads},
		{"head_dim", c.HeadDim, MaxDim},
		{"vocab_size", c.VocabSize, MaxVocab},
		{"max_position_embeddings", c.MaxPositionEmbeddings, MaxSeqLen},
	} {
		if f.v <= 0 || f.v > f.max {
			return fmt.Errorf("%w: %s = %d, want 1 to %d", ErrConfig, f.name, f.v, f.max)
		}
	}
	switch {
	case c.NumAttentionHeads%c.NumKeyValueHeads != 0:
		return fmt.Errorf("%w: num_key_value_heads %d does not divide num_attention_heads %d", ErrConfig, c.NumKeyValueHeads, c.NumAttentionHeads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("%w: head_dim %d is odd; RoPE rotates pairs", ErrConfig, c.HeadDim)
	case !(c.RMSNormEps > 0) || math.IsInf(c.RMSNormEps, 0):
		return fmt.Errorf("%w: rms_norm_eps = %v", ErrConfig, c.RMSNormEps)
	case !(c.RopeTheta > 1) || math.IsInf(c.RopeTheta, 0):
		return fmt.Errorf("%w: rope_theta = %v", ErrConfig, c.RopeTheta)
	case c.BOSTokenID != nil && (*c.BOSTokenID < 0 || *c.BOSTokenID >= c.VocabSize):
		return fmt.Errorf("%w: bos_token_id %d outside the vocabulary of %d", ErrConfig, *c.BOSTokenID, c.VocabSize)
	case c.EOSTokenID != nil && (*c.EOSTokenID < 0 || *c.EOSTokenID >= c.VocabSize):
		return fmt.Errorf("%w: eos_token_id %d outside the vocabulary of %d", ErrConfig, *c.EOSTokenID, c.VocabSize)
	}
	if r := c.RopeScaling; r != nil {
		switch r.Kind() {
		case "", "default":
		case "llama3":
			if !(r.Factor >= 1) || !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || r.OriginalMaxPositionEmbeddings <= 0 ||
				math.IsInf(r.Factor, 0) || math.IsInf(r.HighFreqFactor, 0) {
				return fmt.Errorf("%w: llama3 rope_scaling %+v: want factor >= 1, 0 < low_freq_factor < high_freq_factor, original_max_position_embeddings > 0", ErrConfig, *r)
			}
		default:
			return fmt.Errorf("%w: rope_scaling type %q is not supported (supported: llama3, or none)", ErrConfig, r.Kind())
		}
	}
	return nil
}
