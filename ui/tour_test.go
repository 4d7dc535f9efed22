package ui

import (
	"strings"
	"testing"

	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

// TestTourTextNamesItsAnswer checks that a tour step's sentence gives the
// numbers of the head it names, at the parameters they were computed for:
// while another head's answer is shown it waits, and while a slider's
// answer is out it names the previous ratio with the previous error.
func TestTourTextNamesItsAnswer(t *testing.T) {
	p := func(ratio float64) wire.Params { return wire.Params{Ratio: ratio, Lambda: 0.5, Phi: 0.5, Tau: 1} }
	answer := func(err float64) *wire.HeadResult {
		return &wire.HeadResult{Method: "hae-ols", Metrics: result.Metrics{Err: err, RowEntropy: 0.4}, BudgetBits: 30, FullBits: 100}
	}
	tests := []struct {
		name        string
		layer, head int
		method      string
		ratio       float64
		step        int
		hr          *wire.HeadResult
		at          headKey
		want        []string
	}{
		{"no answer yet", 0, 0, "hae-ols", 0.3, 2, nil, headKey{}, []string{"Waiting for this head's numbers"}},
		{"the answer is this head's", 2, 1, "hae-ols", 0.3, 2, answer(0.492), headKey{2, 1, "hae-ols", p(0.3), "orig"}, []string{"At ratio 0.30", "Held-out error: 49.2%"}},
		{"another head's answer", 2, 1, "hae-ols", 0.3, 2, answer(0.026), headKey{0, 0, "hae-ols", p(0.3), "orig"}, []string{"Waiting for this head's numbers"}},
		{"another head's answer, step 1", 2, 1, "hae-ols", 0.3, 1, answer(0.026), headKey{0, 0, "hae-ols", p(0.3), "orig"}, []string{"Waiting for this head's numbers"}},
		{"another method's answer", 0, 0, "hae-ols", 0.3, 2, answer(0.026), headKey{0, 0, "h2o", p(0.3), "comp"}, []string{"Waiting for this head's numbers"}},
		{"the slider's answer is out", 2, 1, "hae-ols", 0.5, 2, answer(0.492), headKey{2, 1, "hae-ols", p(0.3), "comp"}, []string{"At ratio 0.30", "Held-out error: 49.2%"}},
		{"step 1 names the answer's head", 2, 1, "hae-ols", 0.3, 1, answer(0.492), headKey{2, 1, "hae-ols", p(0.3), "orig"}, []string{"layer 2, head 1", "row entropy of 40.0%"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Root{Info: &wire.Info{Layers: 4, Heads: 4, KVHeads: 4, Prefix: 100}, head: tc.hr, headFor: tc.at}
			c.S = state.State{Layer: tc.layer, Head: tc.head, Method: tc.method, Tour: tc.step}
			c.S.Ratio, c.S.Lambda, c.S.Phi, c.S.Tau = tc.ratio, 0.5, 0.5, 1
			got := c.TourText()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("TourText() = %q, want it to say %q", got, w)
				}
			}
		})
	}
}
