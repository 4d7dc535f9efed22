package hf_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/core/safetensors"
)

// Write a tiny Qwen2 folder in BF16 and open it again.
func Example() {
	cfg, err := hf.ParseConfig([]byte(`{"architectures": ["Qwen2ForCausalLM"], "hidden_size": 8,
		"intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 4}`))
	if err != nil {
		panic(err)
	}
	emb, err := hf.NewTensor("model.embed_tokens.weight", "BF16", []int{4, 8}, make([]float32, 32))
	if err != nil {
		panic(err)
	}
	tmp, _ := os.MkdirTemp("", "hf-example")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "qwen")
	if err := hf.Write(dir, &hf.Folder{Config: cfg, Tensors: []*safetensors.Tensor{emb}}, 0); err != nil {
		panic(err)
	}
	f, err := hf.Open(dir)
	if err != nil {
		panic(err)
	}
	t, _ := f.Tensor("model.embed_tokens.weight")
	fmt.Println(f.Config.Arch(), f.Config.HeadDim, f.Config.QKVBias(), t.DType, t.Shape)
	// Output: Qwen2ForCausalLM 4 true BF16 [4 8]
}
