package conformance

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// Quantizer makes the weight of a fixture of type t from a rows x cols
// float32 matrix: in the tests ggml's blocks (GGML.Quantize), or those
// blocks decoded again by ggml into an F32 weight.
type Quantizer func(t quant.Type, rows, cols int, x []float32) (*model.Weight, error)

// Fixture is one small model: an architecture, the type of every matrix,
// and its hyperparameters.
type Fixture struct {
	Name   string
	Config model.Config
	Type   quant.Type
	Seed   uint64
}

// fixtureVocab is the fixtures' vocabulary size: <unk>, <s>, </s>, the 256
// byte tokens and 253 word pieces.
const fixtureVocab = 512

// baseConfig is a fixture's shape: every matrix's width a whole number of
// K-quant super-blocks (256), grouped-query attention (4 query heads on 2
// KV heads of 64 dimensions), two layers.
func baseConfig(arch model.Arch) model.Config {
	c := model.Config{
		Arch: arch, Dim: 256, FFN: 512, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 64,
		Vocab: fixtureVocab, Context: 256, RMSEps: 1e-5, RopeTheta: 10000,
	}
	switch arch {
	case model.Qwen2:
		// Qwen2: biases on q, k and v, a tied classifier, RoPE base 1e6.
		c.QKVBias, c.Tied, c.RopeTheta, c.RMSEps = true, true, 1e6, 1e-6
	case model.Qwen3:
		// Qwen3: q/k norms and a head width that is not Dim/Heads
		// (8 heads of 64 on a 256-wide model).
		c.QKNorm, c.Heads, c.RopeTheta, c.RMSEps = true, 8, 1e6, 1e-6
	}
	return c
}

// MatrixTypes are the tensor types haeols reads, each the type of every
// matrix of one llama fixture.
var MatrixTypes = []quant.Type{
	quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
}

// Fixtures lists the conformance models: llama (grouped-query attention)
// in every type of MatrixTypes, and qwen2 (q/k/v biases, tied classifier)
// and qwen3 (q/k norms) in F32, Q8_0 and Q4_K.
func Fixtures() []Fixture {
	var fs []Fixture
	for i, t := range MatrixTypes {
		fs = append(fs, Fixture{Name: "llama-gqa-" + t.String(), Config: baseConfig(model.Llama), Type: t, Seed: uint64(100 + i)})
	}
	for i, arch := range []model.Arch{model.Qwen2, model.Qwen3} {
		for j, t := range []quant.Type{quant.F32, quant.Q8_0, quant.Q4_K} {
			fs = append(fs, Fixture{Name: string(arch) + "-" + t.String(), Config: baseConfig(arch), Type: t, Seed: uint64(200 + 10*i + j)})
		}
	}
	return fs
}

// Vocabulary builds the fixtures' SentencePiece vocabulary through its
// GGUF metadata, as a file written by llama.cpp's converter holds it.
func Vocabulary() (*tokenizer.Tokenizer, error) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{int32(tokenizer.Unknown), int32(tokenizer.Control), int32(tokenizer.Control)}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, int32(tokenizer.Byte))
	}
	seen := map[string]bool{}
	r := rand.New(rand.NewPCG(7, 7))
	const letters = "etaoinshrdlucmfwypvbgk"
	for len(tokens) < fixtureVocab {
		n := 1 + r.IntN(4)
		w := []byte("▁")
		if r.IntN(3) == 0 {
			w = nil
		}
		for i := 0; i < n; i++ {
			w = append(w, letters[r.IntN(len(letters))])
		}
		if !seen[string(w)] {
			seen[string(w)] = true
			tokens = append(tokens, string(w))
			types = append(types, int32(tokenizer.Normal))
		}
	}
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	kv := []gguf.KV{
		{Key: tokenizer.KeyModel, Value: "llama"},
		{Key: tokenizer.KeyTokens, Value: tokens},
		{Key: tokenizer.KeyScores, Value: scores},
		{Key: tokenizer.KeyTokenType, Value: types},
		{Key: tokenizer.KeyBOS, Value: uint32(1)},
		{Key: tokenizer.KeyEOS, Value: uint32(2)},
		{Key: tokenizer.KeyUNK, Value: uint32(0)},
	}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, nil); err != nil {
		return nil, fmt.Errorf("conformance: vocabulary: %w", err)
	}
	f, err := gguf.Decode("vocabulary", buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("conformance: vocabulary: %w", err)
	}
	return tokenizer.FromGGUF(f)
}

// Checkpoint builds fx's weights: model.Random's uniform matrices, a
// classifier sharpened by an output norm of 4 so that the next-token
// distributions are peaked as a trained model's are, random biases and
// q/k norm weights where the architecture has them, and every matrix in
// fx.Type as q quantizes it.
func (fx Fixture) Checkpoint(q Quantizer) (*model.Checkpoint, error) {
	// Random writes the matrices of a plain llama model of the same
	// shape; the biases and q/k norms are added below.
	plain := fx.Config
	plain.Arch, plain.QKVBias, plain.QKNorm = model.Llama, false, false
	ck, err := model.Random(plain, quant.F32, fx.Seed)
	if err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", fx.Name, err)
	}
	ck.Config = fx.Config
	r := rand.New(rand.NewPCG(fx.Seed, 3))
	vec := func(n int, base, spread float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = base + spread*(2*r.Float32()-1)
		}
		return x
	}
	set := func(name string, x []float32) error {
		w, err := model.NewWeight(quant.F32, 1, len(x), x)
		if err != nil {
			return fmt.Errorf("conformance: %s: %s: %w", fx.Name, name, err)
		}
		ck.Weights[name] = w
		return nil
	}
	c := fx.Config
	if err := set("output_norm.weight", vec(c.Dim, 4, 1)); err != nil {
		return nil, err
	}
	for l := 0; l < c.Layers; l++ {
		blk := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		var vs []struct {
			name string
			x    []float32
		}
		add := func(name string, x []float32) {
			vs = append(vs, struct {
				name string
				x    []float32
			}{blk(name), x})
		}
		add("attn_norm.weight", vec(c.Dim, 1, 0.5))
		add("ffn_norm.weight", vec(c.Dim, 1, 0.5))
		if c.QKVBias {
			add("attn_q.bias", vec(c.Heads*c.HeadDim, 0, 0.5))
			add("attn_k.bias", vec(c.KVHeads*c.HeadDim, 0, 0.5))
			add("attn_v.bias", vec(c.KVHeads*c.HeadDim, 0, 0.5))
		}
		if c.QKNorm {
			add("attn_q_norm.weight", vec(c.HeadDim, 1, 0.5))
			add("attn_k_norm.weight", vec(c.HeadDim, 1, 0.5))
		}
		for _, v := range vs {
			if err := set(v.name, v.x); err != nil {
				return nil, err
			}
		}
	}
	names := make([]string, 0, len(ck.Weights))
	for name := range ck.Weights {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		w := ck.Weights[name]
		if w.Rows == 1 || fx.Type == quant.F32 {
			continue
		}
		x, err := w.Floats()
		if err != nil {
			return nil, fmt.Errorf("conformance: %s: %s: %w", fx.Name, name, err)
		}
		if ck.Weights[name], err = q(fx.Type, w.Rows, w.Cols, x); err != nil {
			return nil, fmt.Errorf("conformance: %s: %s: %w", fx.Name, name, err)
		}
	}
	if ck.Tokenizer, err = Vocabulary(); err != nil {
		return nil, err
	}
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", fx.Name, err)
	}
	return ck, nil
}

// Write builds fx's checkpoint (its matrices made by q) and writes it as a
// GGUF file at path.
func (fx Fixture) Write(path string, q Quantizer) error {
	ck, err := fx.Checkpoint(q)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := model.WriteGGUF(&buf, ck, model.GGUFOptions{Name: fx.Name}); err != nil {
		return fmt.Errorf("conformance: %s: %w", fx.Name, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("conformance: %s: %w", fx.Name, err)
	}
	return nil
}
