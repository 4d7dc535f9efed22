package eval

import (
	"math"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/transformer"
)

// TestTransformerDecoder runs the end-to-end evaluation through the
// checkpoint forward pass (core/model/transformer) of the tiny llama2.c
// model: full is the reference bit for bit there too, and every method's
// numbers agree with the llama2.c path's within float32 rounding.
func TestTransformerDecoder(t *testing.T) {
	lm, err := llama.Random(tinyCfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := model.FromLlama2C(lm)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := transformer.New(ck)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Prepare(tm.Decoder("tiny"), tinySeq(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := tiny(t)
	for _, m := range []string{"full", "hae-ols", "topk", "quant"} {
		p := core.DefaultParams(0.4)
		got, err := ref.Evaluate(m, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := base.Evaluate(m, p)
		if err != nil {
			t.Fatal(err)
		}
		if m == "full" && (got.KL != 0 || got.Agree != 1) {
			t.Errorf("full through the transformer: kl %g agree %g", got.KL, got.Agree)
		}
		if math.Abs(got.KL-want.KL) > 1e-4+0.02*want.KL || math.Abs(got.Used-want.Used) > 1e-12 {
			t.Errorf("%s: kl %g used %g through the transformer, %g %g through llama2.c", m, got.KL, got.Used, want.KL, want.Used)
		}
	}
}
