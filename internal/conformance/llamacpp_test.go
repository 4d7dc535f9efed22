//go:build linux && cgo

package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/transformer"
)

// references returns the references' folder and ggml, skipping the test
// when they are not installed, except under CI, where that fails it.
func references(t *testing.T) (string, *GGML) {
	t.Helper()
	dir, lib, err := References(NodeDir)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI=%s: the references are required)", err, os.Getenv("CI"))
		}
		t.Skip(err)
	}
	g, err := OpenGGML(lib)
	if err != nil {
		t.Fatal(err)
	}
	return dir, g
}

// The tolerances, the same for every fixture.
//
// llama.cpp's CPU matmuls convert the activations to the weights'
// "vec_dot" type before the dot products (F16 and BF16 weights take F16
// and BF16 activations, Q4_0…Q8_0 take Q8_0 or Q8_1, the K-quants Q8_K);
// haeols multiplies the decoded weights by float32 activations. So each
// fixture also runs through llama.cpp as an F32 file holding ggml's own
// decoding of its blocks ("decoded"): there llama.cpp rounds nothing, and
// haeols must give its distributions to float32 rounding (decodedKLMax;
// the sums run in other orders, which moves a KL by about 1e-11) and its
// greedy tokens. Against llama.cpp on the fixture itself, haeols may be no
// further away than llama.cpp on the decoded file is (selfSlack): the
// whole difference is llama.cpp's rounding of its activations, which
// selfKLMax bounds so that a fixture stays a meaningful check.
const (
	decodedKLMax = 1e-9
	selfSlack    = 1.05
	selfKLMax    = 1e-2
	// greedyTie: the decoded greedy continuations may part only where
	// haeols's probabilities of the two tokens are this close.
	greedyTie = 1e-4
)

// prompts are the fixtures' inputs: BOS then random ids of the vocabulary.
func prompts() [][]int {
	r := rand.New(rand.NewPCG(11, 12))
	var ps [][]int
	for _, n := range []int{8, 24, 48} {
		p := []int{1}
		for len(p) < n {
			p = append(p, 3+r.IntN(fixtureVocab-3))
		}
		ps = append(ps, p)
	}
	return ps
}

const greedyTokens = 16

// run is one engine's answer to the prompts: per prompt the next-token
// distribution after each prefix and the greedy continuation, and for
// haeols the distributions each continuation token was chosen from.
type run struct {
	probs  [][][]float64
	greedy [][]int
	chosen [][][]float64
}

// haeolsRun runs the prompts through haeols's forward pass.
func haeolsRun(m *transformer.Model, ps [][]int) run {
	var r run
	for _, prompt := range ps {
		st := m.NewState(kvcache.NewDense(m.Shape(), len(prompt)+greedyTokens))
		var probs, chosen [][]float64
		for i, tok := range prompt {
			probs = append(probs, Softmax(m.Forward(tok, i, st)))
		}
		var greedy []int
		last := probs[len(probs)-1]
		for len(greedy) < greedyTokens {
			tok := Argmax(last)
			greedy = append(greedy, tok)
			chosen = append(chosen, last)
			if len(greedy) < greedyTokens {
				last = Softmax(m.Forward(tok, len(prompt)+len(greedy)-1, st))
			}
		}
		r.probs, r.greedy, r.chosen = append(r.probs, probs), append(r.greedy, greedy), append(r.chosen, chosen)
	}
	return r
}

// llamaRun runs the prompts through llama.cpp on the GGUF file at path.
func llamaRun(t *testing.T, dir, path string, ps [][]int, vocab int) run {
	t.Helper()
	var resp LlamaResponse
	if err := Node(dir, "llamacpp.mjs", LlamaRequest{Model: path, Prompts: ps, Greedy: greedyTokens}, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Prompts) != len(ps) {
		t.Fatalf("%s: llama.cpp answered %d prompts of %d", path, len(resp.Prompts), len(ps))
	}
	var r run
	for i, p := range resp.Prompts {
		if len(p.Probs) != len(ps[i]) || len(p.Greedy) != greedyTokens {
			t.Fatalf("%s: prompt %d: llama.cpp gave %d distributions for %d tokens and %d greedy tokens", path, i, len(p.Probs), len(ps[i]), len(p.Greedy))
		}
		for j, d := range p.Probs {
			if len(d) != vocab {
				t.Fatalf("%s: prompt %d position %d: llama.cpp's distribution has %d entries, vocabulary %d", path, i, j, len(d), vocab)
			}
		}
		r.probs, r.greedy = append(r.probs, p.Probs), append(r.greedy, p.Greedy)
	}
	return r
}

// agreement compares run b with run a (the reference): KL(a ‖ b) per
// position, top-1 agreement, and the first index (over the prompts'
// continuations in turn) where the greedy tokens differ, -1 if none.
type agreement struct {
	klMean, klMax float64
	top1          float64
	greedyAt      int
}

func compareRuns(a, b run) agreement {
	g := agreement{greedyAt: -1}
	n, same := 0, 0
	for i := range a.probs {
		for j := range a.probs[i] {
			kl := KL(a.probs[i][j], b.probs[i][j])
			g.klMean += kl
			g.klMax = math.Max(g.klMax, kl)
			if Argmax(a.probs[i][j]) == Argmax(b.probs[i][j]) {
				same++
			}
			n++
		}
		if g.greedyAt < 0 {
			for j := range a.greedy[i] {
				if a.greedy[i][j] != b.greedy[i][j] {
					g.greedyAt = i*greedyTokens + j
					break
				}
			}
		}
	}
	g.klMean /= float64(n)
	g.top1 = float64(same) / float64(n)
	return g
}

// Result is one fixture's comparison.
type Result struct {
	Name string
	// Fixture is haeols against llama.cpp on the fixture; Self llama.cpp
	// on the decoded file against llama.cpp on the fixture; Decoded
	// haeols against llama.cpp on the decoded file.
	Fixture, Self, Decoded agreement
	// DecodedGreedyTie: where the decoded greedy continuations part,
	// haeols's probabilities of the two tokens are within greedyTie.
	DecodedGreedyTie bool
	Positions        int
}

func (r Result) String() string {
	g := "same"
	if r.Fixture.greedyAt >= 0 {
		g = fmt.Sprintf("differs@%d", r.Fixture.greedyAt)
	}
	return fmt.Sprintf("conformance %s kl_mean=%.3g kl_max=%.3g top1=%.4f greedy=%s llamacpp_self_kl_max=%.3g decoded_kl_max=%.3g",
		r.Name, r.Fixture.klMean, r.Fixture.klMax, r.Fixture.top1, g, r.Self.klMax, r.Decoded.klMax)
}

// check reports whether r is within the tolerances, and why not.
func (r Result) check() error {
	var why []string
	f, s, d := r.Fixture, r.Self, r.Decoded
	if !(d.klMax <= decodedKLMax) {
		why = append(why, fmt.Sprintf("against llama.cpp on the decoded weights kl_max %.3g > %.3g", d.klMax, decodedKLMax))
	}
	if d.greedyAt >= 0 && !r.DecodedGreedyTie {
		why = append(why, fmt.Sprintf("greedy continuation differs from llama.cpp's on the decoded weights at token %d", d.greedyAt))
	}
	if !(f.klMean <= selfSlack*s.klMean+decodedKLMax) {
		why = append(why, fmt.Sprintf("kl_mean %.3g > %.2f x llama.cpp's own %.3g", f.klMean, selfSlack, s.klMean))
	}
	if !(f.klMax <= selfSlack*s.klMax+decodedKLMax) {
		why = append(why, fmt.Sprintf("kl_max %.3g > %.2f x llama.cpp's own %.3g", f.klMax, selfSlack, s.klMax))
	}
	if f.top1 < s.top1-1/float64(r.Positions) {
		why = append(why, fmt.Sprintf("top-1 agreement %.4f < llama.cpp's own %.4f", f.top1, s.top1))
	}
	if !(s.klMax <= selfKLMax) {
		why = append(why, fmt.Sprintf("llama.cpp's activation rounding alone moves the distributions by KL %.3g > %.3g: the fixture checks too little", s.klMax, selfKLMax))
	}
	if why != nil {
		return fmt.Errorf("%s: %s", r.Name, strings.Join(why, "; "))
	}
	return nil
}

func compare(t *testing.T, dir string, g *GGML, fx Fixture) Result {
	t.Helper()
	tmp := t.TempDir()
	path := filepath.Join(tmp, fx.Name+".gguf")
	if err := fx.Write(path, g.Weight); err != nil {
		t.Fatal(err)
	}
	ck, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := transformer.New(ck)
	if err != nil {
		t.Fatal(err)
	}
	ps := prompts()
	h := haeolsRun(m, ps)
	ref := llamaRun(t, dir, path, ps, ck.Config.Vocab)
	dec := ref
	if fx.Type != quant.F32 {
		decPath := filepath.Join(tmp, fx.Name+"-decoded.gguf")
		if err := fx.Write(decPath, g.Decoded); err != nil {
			t.Fatal(err)
		}
		dec = llamaRun(t, dir, decPath, ps, ck.Config.Vocab)
	}
	res := Result{Name: fx.Name, Fixture: compareRuns(ref, h), Self: compareRuns(ref, dec), Decoded: compareRuns(dec, h)}
	for _, p := range ps {
		res.Positions += len(p)
	}
	if at := res.Decoded.greedyAt; at >= 0 {
		i, j := at/greedyTokens, at%greedyTokens
		c := h.chosen[i][j]
		res.DecodedGreedyTie = c[h.greedy[i][j]]-c[dec.greedy[i][j]] < greedyTie
	}
	return res
}

// TestConformanceLlamaCpp writes every fixture (weights quantized by
// ggml), runs the prompts through llama.cpp and through haeols, and checks
// the tolerances above. It prints one `conformance NAME ...` line per
// fixture; TestMain the summary line (make conformance shows them).
func TestConformanceLlamaCpp(t *testing.T) {
	dir, g := references(t)
	for _, fx := range Fixtures() {
		t.Run(fx.Name, func(t *testing.T) {
			defer func() { record(fx.Name, false, !t.Failed()) }()
			res := compare(t, dir, g, fx)
			fmt.Println(res)
			if err := res.check(); err != nil {
				t.Error(err)
			}
		})
	}
}
