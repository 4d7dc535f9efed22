package transformer_test

import (
	"fmt"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/transformer"
)

// onePosition is the smallest Cache: it holds one position, whose
// attention output is its own value.
type onePosition struct{ v []float32 }

func (c *onePosition) Append(l, pos int, k, v []float32) { c.v = append(c.v[:0], v...) }
func (c *onePosition) Attend(l, pos int, q, out []float32) {
	kv := len(c.v)
	for h := 0; h < len(q)/kv*kv; h += kv { // every query head of a group reads the same KV head
		copy(out[h:h+kv], c.v)
	}
}

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
	logits := m.Forward(1, 0, m.NewState(&onePosition{}))
	fmt.Println(len(logits), ck.Config.Arch)
	// Output: 8 llama
}
