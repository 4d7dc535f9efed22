package model_test

import (
	"fmt"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
)

// The q rows of one head of 4 in the interleaved RoPE order (GGUF llama,
// llama2.c) and in the half-split order (Hugging Face, qwen2) this package
// keeps.
func ExampleToHalfSplit() {
	w, err := model.NewWeight(quant.F32, 4, 1, []float32{0, 1, 2, 3})
	if err != nil {
		panic(err)
	}
	x, _ := model.ToHalfSplit(w, 1, 4).Floats()
	fmt.Println(x)
	// Output: [0 2 1 3]
}
