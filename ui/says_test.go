package ui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

func TestKLColor(t *testing.T) {
	tests := []struct {
		kl   float64
		want string
	}{
		{0, "#ffffff"}, {1e-5, "#ffffff"}, {1e-4, "#ffffff"}, {1, "#d7301f"}, {50, "#d7301f"}, {math.NaN(), NAColor},
	}
	for _, tc := range tests {
		if got := KLColor(tc.kl); got != tc.want {
			t.Errorf("KLColor(%g) = %s, want %s", tc.kl, got, tc.want)
		}
	}
	// Monotone: a larger KL is never lighter (the green channel falls).
	prev := 256
	for e := -4.0; e <= 0; e += 0.25 {
		c := KLColor(math.Pow(10, e))
		var r, g, b int
		if _, err := fmtSscanf(c, &r, &g, &b); err != nil {
			t.Fatal(err)
		}
		if g > prev {
			t.Errorf("KLColor(1e%g) = %s is lighter than the smaller KL's", e, c)
		}
		prev = g
	}
}

// evalFixture is a run of 8 tokens, prefix 5, an answer at [6, 8), and a
// method's result whose prediction of token 7 misses and whose free run
// parts at index 1.
func evalFixture() (*wire.EvalInfo, *wire.EvalResult) {
	ev := &wire.EvalInfo{Tokenizer: true, IDs: []int{1, 10, 11, 12, 13, 14, 15, 16}, Text: []string{"", "a", "<b>", "c", "\n", "e", "f", "g"},
		Prefix: 5, Answers: []wire.Span{{Start: 6, End: 8}}, Needles: []int{2}, Top: []int{14, 15, 16, 9}, Free: []int{14, 15, 16}, FreeText: []string{"e", "f", "g"}}
	r := &wire.EvalResult{Method: "topk", KLs: []result.Num{0.001, 0.5, 2}, Top: []int{14, 15, 99, 9}, Diverge: 1, FreeText: []string{"e", "x", "y"}}
	return ev, r
}

func TestSequenceHTML(t *testing.T) {
	ev, r := evalFixture()
	h := SequenceHTML(ev, r)
	for _, want := range []string{
		`class="tok needle" data-pos="2">&lt;b&gt;</span>`,                 // escaped, the needle marked
		`class="tok nl" data-pos="4">` + "\n" + `</span>`,                  // a line break, marked by the style sheet
		`data-pos="5" style="background:#ffffff"`,                          // predicted by the exact prefill: KL 0
		`data-pos="6" data-kl="0.001" style="background:` + KLColor(0.001), // the prediction after position 5
		`class="tok answer disagree missed" data-pos="7"`,                  // top 99, not the full cache's 16 nor the token
		`data-kl="0.5"`, `data-kl="2"`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("SequenceHTML lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "<b>") {
		t.Errorf("a token's text is not escaped: %s", h)
	}
	// Without a result (or with one of another sequence) nothing is tinted.
	for _, res := range []*wire.EvalResult{nil, {KLs: []result.Num{1}}, {NA: "needs ratio >= 0.2"}} {
		if h := SequenceHTML(ev, res); strings.Contains(h, "background") || strings.Contains(h, "data-kl") {
			t.Errorf("SequenceHTML(%+v) tints: %s", res, h)
		}
	}
}

func TestFreeRunHTML(t *testing.T) {
	h := FreeRunHTML([]string{"e", "x", "y"}, 1, false)
	if !strings.Contains(h, `class="tok" data-pos="0">e<`) || !strings.Contains(h, `class="tok diverged first" data-pos="1">x<`) || !strings.Contains(h, `class="tok diverged" data-pos="2">y<`) {
		t.Errorf("FreeRunHTML: %s", h)
	}
	if h := FreeRunHTML([]string{"1", "2"}, 2, true); strings.Contains(h, "diverged") || !strings.Contains(h, "</span> <span") {
		t.Errorf("ids never diverging: %s", h)
	}
	if h := FreeRunHTML(nil, 0, false); !strings.Contains(h, "no free run") {
		t.Errorf("an empty run: %s", h)
	}
}

func TestSaysCells(t *testing.T) {
	r := &wire.EvalResult{Used: 0.25, KL: 0.00123456, KLMax: 0.01, Agree: 1, PPLRatio: result.Num(math.NaN()), NeedleAcc: 0.5, Diverge: 4}
	cells := saysCells(r, 4)
	got := map[string]saysCell{}
	for _, c := range cells {
		got[c.Name] = c
	}
	if c := got["kl"]; c.Value != "0.00123456" || c.Text != "0.001235" {
		t.Errorf("kl cell %+v", c)
	}
	if c := got["ppl_ratio"]; c.Value != "NaN" || c.Text != "–" {
		t.Errorf("NaN cell %+v", c)
	}
	if c := got["diverge"]; c.Value != "4" || c.Text != "never" {
		t.Errorf("diverge cell %+v (a run of 4 that never parts)", c)
	}
	r.FreePending = true
	for _, c := range saysCells(r, 4) {
		if c.Name == "diverge" && (c.Text != "…" || c.Value != "") {
			t.Errorf("diverge before the free run: %+v", c)
		}
	}
	for _, c := range saysCells(nil, 4) {
		if c.Text != "…" || c.Value != "" {
			t.Errorf("a pending cell %+v", c)
		}
	}
	for _, c := range saysCells(&wire.EvalResult{NA: "needs ratio >= 0.3"}, 4) {
		if c.Text != "n/a" || c.Value != "" {
			t.Errorf("an n/a cell %+v", c)
		}
	}
}

func TestKLStripSVG(t *testing.T) {
	s := KLStripSVG([]result.Num{0, 0.01, 1, result.Num(math.NaN())}, 10, []wire.Span{{Start: 12, End: 14}})
	if strings.Count(s, "<rect") != 1+3+1 || !strings.Contains(s, "after position 12: KL 1 nats") || !strings.Contains(s, "positions 12 to 13") {
		t.Errorf("KLStripSVG: %s", s)
	}
	if KLStripSVG(nil, 0, nil) != "" {
		t.Errorf("an empty strip is drawn")
	}
}

func fmtSscanf(c string, r, g, b *int) (int, error) { return fmt.Sscanf(c, "#%02x%02x%02x", r, g, b) }

func TestDepthOptions(t *testing.T) {
	tests := []struct {
		depth float64
		want  string
	}{
		{0.5, "0 0.1 0.25 0.5 0.75 0.9 1"},
		{0.3, "0 0.1 0.25 0.3 0.5 0.75 0.9 1"}, // a link's own depth is offered, and selected
		{1, "0 0.1 0.25 0.5 0.75 0.9 1"},
	}
	for _, tc := range tests {
		c := &Root{}
		c.S.Depth = tc.depth
		var vals []string
		selected := 0
		for _, o := range c.DepthOptions() {
			vals = append(vals, o.Value)
			if o.Value == c.Depth() {
				selected++
			}
		}
		if got := strings.Join(vals, " "); got != tc.want || selected != 1 {
			t.Errorf("depth %v: options %q (%d selected), want %q (one selected)", tc.depth, got, selected, tc.want)
		}
	}
}
