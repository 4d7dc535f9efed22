package eval_test

import (
	"fmt"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/llama"
)

// A model with random weights, 96 tokens of its own text, the last 16
// continued from caches compressed to 30 % of their memory.
func Example() {
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 128}, 1)
	if err != nil {
		panic(err)
	}
	lm := m.Decoder()
	seq := eval.Sequence{Tokens: eval.Continue(lm, []int{eval.BOS}, 96), Prefix: 80, Gen: 16}
	ref, err := eval.Prepare(lm, seq, core.Options{})
	if err != nil {
		panic(err)
	}
	for _, method := range []string{"full", "hae-ols", "quant"} {
		r, err := ref.Evaluate(method, core.DefaultParams(0.3))
		if err != nil {
			panic(err)
		}
		if r.NA != "" {
			fmt.Printf("%s: n/a (%s)\n", method, r.NA)
			continue
		}
		fmt.Printf("%s: used %.2f, kl %.2g, agree %.2f, diverges at %d of %d\n", method, r.Used, r.KL, r.Agree, r.Diverge, len(r.Free))
	}
	// Output:
	// full: used 1.00, kl 0, agree 1.00, diverges at 16 of 16
	// hae-ols: used 0.30, kl 0.0012, agree 0.88, diverges at 3 of 16
	// quant: used 0.29, kl 0.0021, agree 0.88, diverges at 3 of 16
}
