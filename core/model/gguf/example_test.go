package gguf_test

import (
	"bytes"
	"fmt"

	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/quant"
)

// Write a one-tensor GGUF file with some metadata and read it back.
func Example() {
	w := make([]float32, 2*32)
	for i := range w {
		w[i] = float32(i) / 64
	}
	t, err := gguf.NewTensor("blk.0.attn_q.weight", quant.Q8_0, []uint64{32, 2}, w)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	kv := []gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.block_count", Value: uint32(1)}}
	if err := gguf.Write(&buf, kv, []*gguf.Tensor{t}); err != nil {
		panic(err)
	}
	f, err := gguf.Decode("example.gguf", buf.Bytes())
	if err != nil {
		panic(err)
	}
	arch, _ := f.String("general.architecture")
	n, _ := f.Uint("llama.block_count")
	q, _ := f.Tensor("blk.0.attn_q.weight")
	fmt.Println(arch, n, q.Type, q.Dims, len(q.Data), "bytes")
	// Output: llama 1 Q8_0 [32 2] 68 bytes
}
