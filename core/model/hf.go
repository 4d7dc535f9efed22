package model

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
	"github.com/haeols/haeols/core/safetensors"
)

// hfArchs maps config.json architectures to architectures.
var hfArchs = map[string]Arch{
	"LlamaForCausalLM": Llama, "MistralForCausalLM": Llama,
	"Qwen2ForCausalLM": Qwen2, "Qwen3ForCausalLM": Qwen3,
}

// hfLayer maps the per-layer Hugging Face names (after
// "model.layers.N.") to GGUF names (after "blk.N.").
var hfLayer = map[string]string{
	"input_layernorm.weight":          "attn_norm.weight",
	"self_attn.q_proj.weight":         "attn_q.weight",
	"self_attn.k_proj.weight":         "attn_k.weight",
	"self_attn.v_proj.weight":         "attn_v.weight",
	"self_attn.o_proj.weight":         "attn_output.weight",
	"self_attn.q_proj.bias":           "attn_q.bias",
	"self_attn.k_proj.bias":           "attn_k.bias",
	"self_attn.v_proj.bias":           "attn_v.bias",
	"self_attn.o_proj.bias":           "attn_output.bias",
	"self_attn.q_norm.weight":         "attn_q_norm.weight",
	"self_attn.k_norm.weight":         "attn_k_norm.weight",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	"mlp.gate_proj.weight":            "ffn_gate.weight",
	"mlp.up_proj.weight":              "ffn_up.weight",
	"mlp.down_proj.weight":            "ffn_down.weight",
}

var hfGlobal = map[string]string{
	"model.embed_tokens.weight": "token_embd.weight",
	"model.norm.weight":         "output_norm.weight",
	"lm_head.weight":            "output.weight",
}

// layerName splits "model.layers.N.REST" into N (0, or 1 to 5 digits
// without a leading zero) and REST (not empty, no newline).
func layerName(name string) (layer, rest string, ok bool) {
	s, ok := strings.CutPrefix(name, "model.layers.")
	if !ok {
		return "", "", false
	}
	layer, rest, ok = strings.Cut(s, ".")
	if !ok || rest == "" || strings.Contains(rest, "\n") || layer == "" || len(layer) > 5 || layer[0] == '0' && len(layer) > 1 {
		return "", "", false
	}
	for _, c := range []byte(layer) {
		if c < '0' || c > '9' {
			return "", "", false
		}
	}
	return layer, rest, true
}

// HFName is the GGUF name of a Hugging Face tensor name, "" if it is not
// one of the Llama family's.
func HFName(name string) string {
	if g, ok := hfGlobal[name]; ok {
		return g
	}
	layer, rest, ok := layerName(name)
	if !ok {
		return ""
	}
	g, ok := hfLayer[rest]
	if !ok {
		return ""
	}
	return "blk." + layer + "." + g
}

// GGUFToHF is the Hugging Face name of a GGUF weight name ("" if none).
func GGUFToHF(name string) string {
	for h, g := range hfGlobal {
		if g == name {
			return h
		}
	}
	var layer int
	var rest string
	if n, _ := fmt.Sscanf(name, "blk.%d.%s", &layer, &rest); n != 2 {
		return ""
	}
	for h, g := range hfLayer {
		if g == rest {
			return "model.layers." + strconv.Itoa(layer) + "." + h
		}
	}
	return ""
}

// rotaryBuffer is the name ending of the inverse-frequency buffers some
// checkpoints store; they are derived from the config and skipped.
const rotaryBuffer = "rotary_emb.inv_freq"

// FromHF builds the checkpoint of a Hugging Face folder: the config from
// config.json (Llama 3.1 rope scaling as factors), the F32, F16 or BF16
// weights as stored, and the tokenizer when the folder has tokenizer.json.
// With tied embeddings an lm_head.weight is ignored; untied, it is required.
func FromHF(f *hf.Folder) (*Checkpoint, error) {
	hc := f.Config
	c := Config{
		Arch: hfArchs[hc.Arch()], Dim: hc.HiddenSize, FFN: hc.IntermediateSize, Layers: hc.NumHiddenLayers,
		Heads: hc.NumAttentionHeads, KVHeads: hc.NumKeyValueHeads, HeadDim: hc.HeadDim, Vocab: hc.VocabSize,
		Context: hc.MaxPositionEmbeddings, RMSEps: hc.RMSNormEps, RopeTheta: hc.RopeTheta, Tied: hc.TieWordEmbeddings,
		QKVBias: hc.QKVBias(), OutputBias: hc.OutputBias(), QKNorm: hc.QKNorm(),
	}
	if c.Arch == "" {
		return nil, fmt.Errorf("model: %w: architecture %q is not supported", ErrCheckpoint, hc.Arch())
	}
	if r := hc.RopeScaling; r != nil && r.Kind() == "llama3" {
		c.RopeFactors = Llama3Factors(c.HeadDim, c.RopeTheta, r.Factor, r.LowFreqFactor, r.HighFreqFactor, r.OriginalMaxPositionEmbeddings)
	}
	ck := &Checkpoint{Config: c, Weights: map[string]*Weight{}}
	for _, t := range f.Tensors {
		if strings.HasSuffix(t.Name, rotaryBuffer) {
			continue
		}
		g := HFName(t.Name)
		if g == "" {
			return nil, fmt.Errorf("model: %w: tensor %s is not part of a %s model", ErrCheckpoint, t.Name, hc.Arch())
		}
		if g == "output.weight" && c.Tied {
			continue
		}
		typ, err := hf.WeightType(t.DType)
		if err != nil {
			return nil, fmt.Errorf("model: %w: tensor %s: %v", ErrCheckpoint, t.Name, err)
		}
		w := &Weight{Type: typ, Data: t.Data}
		switch len(t.Shape) {
		case 1:
			w.Rows, w.Cols = 1, t.Shape[0]
		case 2:
			w.Rows, w.Cols = t.Shape[0], t.Shape[1]
		default:
			return nil, fmt.Errorf("model: %w: tensor %s has shape %v, want 1 or 2 dimensions", ErrCheckpoint, t.Name, t.Shape)
		}
		ck.Weights[g] = w
	}
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if f.Tokenizer != nil || f.TokenizerModel != nil {
		var err error
		if f.Tokenizer != nil { // tokenizer.json first, as transformers' fast tokenizers
			ck.Tokenizer, err = tokenizer.FromHF(f.Tokenizer, f.TokenizerConfig)
		} else {
			ck.Tokenizer, err = tokenizer.FromSentencePiece(f.TokenizerModel, f.TokenizerConfig)
		}
		if err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		if ck.Tokenizer.Vocab() > c.Vocab {
			return nil, fmt.Errorf("model: %w: the tokenizer has %d tokens, the model %d", ErrCheckpoint, ck.Tokenizer.Vocab(), c.Vocab)
		}
	}
	return ck, nil
}

// HFConfig is the config.json of ck.
func HFConfig(ck *Checkpoint) (*hf.Config, error) {
	c := ck.Config
	arch := map[Arch]string{Llama: "LlamaForCausalLM", Qwen2: "Qwen2ForCausalLM", Qwen3: "Qwen3ForCausalLM"}[c.Arch]
	if c.RopeFactors != nil {
		return nil, fmt.Errorf("model: rope factors have no config.json form but llama3's parameters, which the checkpoint does not keep")
	}
	if c.Arch == Qwen2 && (!c.QKVBias || c.OutputBias) || c.Arch != Qwen2 && c.QKVBias != c.OutputBias {
		return nil, fmt.Errorf("model: %s with q/k/v biases %v and an output bias %v has no config.json form", c.Arch, c.QKVBias, c.OutputBias)
	}
	hc := &hf.Config{
		Architectures: []string{arch}, ModelType: string(c.Arch), HiddenSize: c.Dim, IntermediateSize: c.FFN,
		NumHiddenLayers: c.Layers, NumAttentionHeads: c.Heads, NumKeyValueHeads: c.KVHeads, HeadDim: c.HeadDim,
		VocabSize: c.Vocab, MaxPositionEmbeddings: c.Context, RMSNormEps: c.RMSEps, RopeTheta: c.RopeTheta,
		TieWordEmbeddings: c.Tied, AttentionBias: c.Arch != Qwen2 && c.QKVBias,
	}
	if ck.Tokenizer != nil {
		if id := ck.Tokenizer.BOS(); id >= 0 {
			hc.BOSTokenID = &id
		}
		if id := ck.Tokenizer.EOS(); id >= 0 {
			hc.EOSTokenID = &id
		}
	}
	return hc, hc.Validate()
}

// WriteHF writes ck as the Hugging Face folder dir (which must not exist):
// config.json and the weights in dtype (F32, F16 or BF16), sharded at
// shardBytes when positive. The tokenizer is not written (this package has
// no tokenizer.json writer).
func WriteHF(dir string, ck *Checkpoint, dtype string, shardBytes int64) error {
	if err := ck.Check(); err != nil {
		return fmt.Errorf("model: write hf: %w", err)
	}
	typ, err := hf.WeightType(dtype)
	if err != nil {
		return fmt.Errorf("model: write hf: %w", err)
	}
	hc, err := HFConfig(ck)
	if err != nil {
		return fmt.Errorf("model: write hf: %w", err)
	}
	var ts []*safetensors.Tensor
	for _, s := range ck.Config.shapes() {
		w := ck.Weights[s.name]
		data := w.Data
		if w.Type != typ {
			x, err := w.Floats()
			if err != nil {
				return fmt.Errorf("model: write hf: %s: %w", s.name, err)
			}
			if data, err = quant.Quantize(typ, x); err != nil {
				return fmt.Errorf("model: write hf: %s: %w", s.name, err)
			}
		}
		shape := []int{w.Rows, w.Cols}
		if s.rows == 1 {
			shape = shape[1:]
		}
		ts = append(ts, &safetensors.Tensor{Name: GGUFToHF(s.name), DType: dtype, Shape: shape, Data: data})
	}
	return hf.Write(dir, &hf.Folder{Config: hc, Tensors: ts}, shardBytes)
}
