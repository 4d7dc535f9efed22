package induction

import (
	"fmt"
	"math"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/transformer"
)

// reference builds the pass-key sequence of n tokens at depth and runs it
// with the full cache.
func reference(t testing.TB, lm eval.LM, codec eval.Codec, n int, depth float64) (*eval.Built, *eval.Reference) {
	t.Helper()
	b, err := eval.PassKey{Tokens: n, Depth: depth, Seed: uint64(n) + uint64(depth*100)}.Build(lm, codec)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eval.Prepare(lm, b.Sequence, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b, ref
}

// decoder is the checkpoint and its forward pass.
func decoder(t testing.TB) (*model.Checkpoint, eval.LM) {
	t.Helper()
	ck, err := Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.New(ck)
	if err != nil {
		t.Fatal(err)
	}
	return ck, m.Decoder("induction")
}

// TestPassKey checks the construction's promise: with the full cache the
// model answers the pass key at every depth of 1K and 4K contexts, and a
// cache that dropped the key (streaming keeps only the first and the most
// recent positions; at depth 0 the key is in neither) cannot.
func TestPassKey(t *testing.T) {
	ck, lm := decoder(t)
	for _, n := range []int{1024, 4096} {
		if n > 1024 && testing.Short() {
			continue
		}
		for _, depth := range []float64{0, 0.25, 0.5, 0.75, 1} {
			t.Run(fmt.Sprintf("n=%d/depth=%v", n, depth), func(t *testing.T) {
				t.Parallel()
				b, ref := reference(t, lm, ck.Tokenizer, n, depth)
				full, err := ref.Evaluate("full", core.DefaultParams(1))
				if err != nil {
					t.Fatal(err)
				}
				stream, err := ref.Evaluate("streaming", core.DefaultParams(0.3))
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("key %s at %d of %d: full %v streaming %v", b.Key, b.At, len(b.Tokens), full.NeedleAcc, stream.NeedleAcc)
				if full.NeedleAcc != 1 {
					t.Errorf("full cache: needle_acc %v, want 1", full.NeedleAcc)
				}
				if depth == 0 && stream.NeedleAcc != 0 {
					t.Errorf("streaming at 0.3 without the key's entries: needle_acc %v, want 0", stream.NeedleAcc)
				}
			})
		}
	}
}

// TestCodes checks what the induction head's margin rests on: distinct
// tokens' codes overlap by well under the one unit a wrong token costs.
func TestCodes(t *testing.T) {
	codes := Codes()
	worst := 0.0
	for a := range codes {
		for b := range a {
			var d float64
			for i := range codes[a] {
				d += codes[a][i] * codes[b][i]
			}
			worst = max(worst, math.Abs(d))
		}
	}
	if worst >= 0.9 {
		t.Errorf("largest |e_a . e_b| = %.3f, want < 0.9", worst)
	}
	t.Logf("largest |e_a . e_b| over %d codes: %.3f", len(codes), worst)
}

func ExampleCheckpoint() {
	ck, err := Checkpoint()
	if err != nil {
		panic(err)
	}
	c := ck.Config
	fmt.Println(c.Layers, "layers,", c.Heads, "heads of", c.HeadDim, "over", c.Vocab, "byte tokens")
	// Output: 2 layers, 8 heads of 224 over 259 byte tokens
}

// TestBudgetFindsRetrievalLayer: on this model the retrieval happens in
// the last layer, so the budget policies that share one total differently
// change the answer. At 0.5, uniform streaming loses a key at depth 0.1;
// -budget hae (measured calibration error) moves the memory to the layer
// that needs it and keeps the key, and the pyramid, which starves the last
// layer, loses it. The memory used is the same.
func TestBudgetFindsRetrievalLayer(t *testing.T) {
	ck, lm := decoder(t)
	_, ref := reference(t, lm, ck.Tokenizer, 1024, 0.1)
	want := map[string]float64{core.BudgetUniform: 0, core.BudgetHAE: 1, core.BudgetPyramid: 0}
	var used []float64
	for _, b := range []string{core.BudgetUniform, core.BudgetHAE, core.BudgetPyramid} {
		p := core.DefaultParams(0.5)
		p.Budget = b
		res, err := ref.Evaluate("streaming", p)
		if err != nil {
			t.Fatal(err)
		}
		if res.NeedleAcc != want[b] {
			t.Errorf("streaming at 0.5, budget %s: needle_acc %v, want %v", b, res.NeedleAcc, want[b])
		}
		used = append(used, res.Used)
		a, err := ref.Model.Allocate("streaming", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("budget %s: slots per layer %v, used %.4f, kl %.3g, needle_acc %v", b, a.Slots, res.Used, res.KL, res.NeedleAcc)
	}
	for _, u := range used[1:] {
		if math.Abs(u-used[0]) > 0.01 {
			t.Errorf("used %v: the policies spend different memory", used)
		}
	}
}
