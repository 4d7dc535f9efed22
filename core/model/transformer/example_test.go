package transformer_test

import (
	"fmt"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/transformer"
)

// Run the first position of a random llama2.c model through the
// checkpoint interface.
func Example() {
	lm, err := llama.Random(llama.Config{Dim: 16, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 2, Vocab: 8, SeqLen: 4, SharedClassifier: true}, 1)
	if err != nil {
		panic(err)
	}
	ck, err := model.FromLlama2C(lm)
	if err != nil {
		panic(err)
	}
	m, err := transformer.New(ck)
	if err != nil {
		panic(err)
	}
	logits := m.Forward(1, 0, m.NewState(kvcache.NewDense(m.Shape(), 4)))
	fmt.Println(len(logits), ck.Config.Arch)
	// Output: 8 llama
}
