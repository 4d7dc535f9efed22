package eval

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/llama"
)

// tinyCfg is a small random model with grouped KV heads and head size 8.
var tinyCfg = llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 96, SharedClassifier: false}

var (
	tinyOnce sync.Once
	tinyRef  *Reference
	tinyErr  error
)

// tinySeq is 80 pseudo-random tokens, the last 16 continued, with two
// answer spans in the continuation.
func tinySeq() Sequence {
	toks := make([]int, 80)
	x := uint32(7)
	for i := range toks {
		x = x*1664525 + 1013904223
		toks[i] = 3 + int(x>>16)%(tinyCfg.Vocab-3)
	}
	toks[0] = llama.BOS
	return Sequence{Tokens: toks, Prefix: 64, Answers: []Span{{66, 68}, {70, 71}}, Gen: 20}
}

// tiny returns the reference of tinySeq on a random tiny model.
func tiny(t *testing.T) *Reference {
	t.Helper()
	tinyOnce.Do(func() {
		m, err := llama.Random(tinyCfg, 3)
		if err != nil {
			tinyErr = err
			return
		}
		tinyRef, tinyErr = Prepare(m.Decoder(), tinySeq(), core.Options{})
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	return tinyRef
}

// TestFullIsReference checks that the method full reproduces the reference
// bit for bit: kl exactly 0, every prediction and the free run equal.
func TestFullIsReference(t *testing.T) {
	r := tiny(t)
	res, err := r.Evaluate("full", core.DefaultParams(1))
	if err != nil {
		t.Fatal(err)
	}
	if res.KL != 0 || res.KLMax != 0 || res.Agree != 1 || res.PPLRatio != 1 || res.Diverge != r.Seq.Gen || res.Used != 1 {
		t.Errorf("full: kl %g kl_max %g agree %g ppl_ratio %g diverge %d used %g, want 0 0 1 1 %d 1", res.KL, res.KLMax, res.Agree, res.PPLRatio, res.Diverge, res.Used, r.Seq.Gen)
	}
	if !slices.Equal(res.Top, r.Top) || !slices.Equal(res.Free, r.Free) {
		t.Errorf("full: top %v free %v, reference %v %v", res.Top, res.Free, r.Top, r.Free)
	}
	if len(res.Free) != r.Seq.Gen {
		t.Errorf("free run of %d tokens, want %d", len(res.Free), r.Seq.Gen)
	}
}

// TestContinuationEqualsForward checks the compressed cache's machinery
// against a plain forward pass: a compressed prefix that keeps every token,
// continued, gives the dense run's logits bit for bit at every position.
func TestContinuationEqualsForward(t *testing.T) {
	m, err := llama.Random(tinyCfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	seq := tinySeq().Tokens
	dense := m.NewState()
	sh := tinyCfg.Shape()
	n := 50
	pre := make([]kvcache.Prefix, sh.Layers*sh.KVHeads)
	hs := sh.HeadSize
	keys := make([][]float32, len(pre))
	vals := make([][]float32, len(pre))
	dense.Observe = func(l, pos int, _, k, v, _ []float32) {
		if pos >= n {
			return
		}
		for kv := 0; kv < sh.KVHeads; kv++ {
			keys[l*sh.KVHeads+kv] = append(keys[l*sh.KVHeads+kv], k[kv*hs:(kv+1)*hs]...)
			vals[l*sh.KVHeads+kv] = append(vals[l*sh.KVHeads+kv], v[kv*hs:(kv+1)*hs]...)
		}
	}
	var want [][]float32
	for pos, tok := range seq {
		lg := m.Forward(tok, pos, dense)
		if pos >= n {
			want = append(want, slices.Clone(lg))
		}
	}
	for i := range pre {
		pre[i] = kvcache.Prefix{Keys: keys[i], Values: vals[i], Biased: n}
	}
	kvc, err := kvcache.NewCompressed(sh, n, len(seq), pre)
	if err != nil {
		t.Fatal(err)
	}
	run := m.Decoder().NewRun(kvc, nil)
	for pos := n; pos < len(seq); pos++ {
		got := run.Forward(seq[pos], pos)
		w := want[pos-n]
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
				t.Fatalf("position %d logit %d: %v from the compressed cache, %v from the forward pass", pos, i, got[i], w[i])
			}
		}
	}
}

// TestRatioOne checks that every method keeps the cache whole at ratio 1.
func TestRatioOne(t *testing.T) {
	r := tiny(t)
	for _, name := range core.MethodNames() {
		res, err := r.Evaluate(name, core.DefaultParams(1))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.NA != "" || res.KL != 0 || res.Agree != 1 || res.Diverge != r.Seq.Gen {
			t.Errorf("%s at ratio 1: na %q kl %g agree %g diverge %d, want kl 0, agree 1, diverge %d", name, res.NA, res.KL, res.Agree, res.Diverge, r.Seq.Gen)
		}
	}
}

// TestOneTokenLess checks that evicting a single token moves the numbers by
// a little, in the right direction: kl above 0 and small, ppl_ratio near 1.
func TestOneTokenLess(t *testing.T) {
	r := tiny(t)
	n := r.Seq.Prefix
	p := core.DefaultParams(float64(n-1) / float64(n))
	res, err := r.Evaluate("topk", p)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.KL > 0 && res.KL < 0.01) || !(res.KLMax >= res.KL) || math.Abs(res.PPLRatio-1) > 0.01 {
		t.Errorf("topk keeping %d of %d tokens: kl %g kl_max %g ppl_ratio %g, want 0 < kl < 0.01, kl_max >= kl, ppl_ratio within 0.01 of 1", n-1, n, res.KL, res.KLMax, res.PPLRatio)
	}
	if res.Used > p.Ratio+1e-12 {
		t.Errorf("used %g > asked %g", res.Used, p.Ratio)
	}
	// Fewer tokens kept, larger divergence (on average over the positions).
	low, err := r.Evaluate("topk", core.DefaultParams(0.2))
	if err != nil {
		t.Fatal(err)
	}
	if !(low.KL > res.KL) {
		t.Errorf("topk kl %g at ratio 0.2, %g keeping all but one token: want it larger", low.KL, res.KL)
	}
}

// TestMetricsByHand checks kl, agree, ppl_ratio and the needles of one
// compressed run against the definitions, recomputed from its own
// predictions' log-probabilities.
func TestMetricsByHand(t *testing.T) {
	r := tiny(t)
	res, err := r.Evaluate("streaming", core.DefaultParams(0.3))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.KLs) != r.T || len(res.Top) != r.T+1 {
		t.Fatalf("%d kl values and %d predictions for %d continued positions", len(res.KLs), len(res.Top), r.T)
	}
	var mean, mx float64
	agree := 0
	for i, kl := range res.KLs {
		if kl < 0 || math.IsNaN(kl) {
			t.Fatalf("kl %g at position %d", kl, i)
		}
		mean += kl / float64(r.T)
		mx = max(mx, kl)
		if res.Top[i+1] == r.Top[i+1] {
			agree++
		}
	}
	if math.Abs(mean-res.KL) > 1e-12 || mx != res.KLMax || float64(agree)/float64(r.T) != res.Agree {
		t.Errorf("kl %g kl_max %g agree %g; from the profile %g %g %g", res.KL, res.KLMax, res.Agree, mean, mx, float64(agree)/float64(r.T))
	}
	for k, a := range r.Seq.Answers {
		want := true
		for p := a.Start; p < a.End; p++ {
			want = want && res.Top[p-r.Seq.Prefix] == r.Seq.Tokens[p]
		}
		if res.Found[k] != want {
			t.Errorf("answer %v: found %v, want %v", a, res.Found[k], want)
		}
	}
	if !(res.PPLRatio > 0) {
		t.Errorf("ppl_ratio %g", res.PPLRatio)
	}
}

// TestEvaluateAllWorkers checks that the results do not depend on the
// number of workers and that a method that cannot fit is n/a.
func TestEvaluateAllWorkers(t *testing.T) {
	r := tiny(t)
	var jobs []Job
	for _, ratio := range []float64{0.1, 0.4} {
		for _, m := range []string{"hae-ols", "topk", "quant", "lowrank"} {
			jobs = append(jobs, Job{m, core.DefaultParams(ratio)})
		}
	}
	one, err := r.EvaluateAll(jobs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	four, err := r.EvaluateAll(jobs, 4, func(done, total int) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != len(jobs) {
		t.Errorf("progress called %d times for %d jobs", calls, len(jobs))
	}
	na := 0
	for i := range jobs {
		a, b := one[i], four[i]
		if a.NA != "" {
			na++
		}
		if a.NA != b.NA || math.Float64bits(a.KL) != math.Float64bits(b.KL) || !slices.Equal(a.Free, b.Free) || a.Used != b.Used {
			t.Errorf("%s at %g: 1 worker kl %g na %q, 4 workers kl %g na %q", jobs[i].Method, jobs[i].Params.Ratio, a.KL, a.NA, b.KL, b.NA)
		}
	}
	if na == 0 {
		t.Errorf("no n/a result: quant should not fit ratio 0.1")
	}
}

// TestPrepareErrors checks that bad sequences are refused with a message
// naming the problem.
func TestPrepareErrors(t *testing.T) {
	m, err := llama.Random(tinyCfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	good := tinySeq()
	for _, c := range []struct {
		name string
		mod  func(*Sequence)
		want string
	}{
		{"short", func(s *Sequence) { s.Tokens = s.Tokens[:2] }, "a sequence of 2 tokens: want at least 3"},
		{"long", func(s *Sequence) { s.Tokens = make([]int, 97) }, "exceeds the context of 96"},
		{"vocab", func(s *Sequence) { s.Tokens[5] = 40 }, "token 40 at position 5 outside the vocabulary [0, 40)"},
		{"prefix", func(s *Sequence) { s.Prefix = 80 }, "prefix 80 outside [2, 79]"},
		{"answer", func(s *Sequence) { s.Answers = []Span{{60, 66}} }, "answer span [60, 66) outside the continuation [64, 80)"},
	} {
		s := good
		s.Tokens = slices.Clone(good.Tokens)
		c.mod(&s)
		_, err := Prepare(m.Decoder(), s, core.Options{})
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}

// resultsHash is the FNV-1a hash of every number and token of the
// results.
func resultsHash(rs []*Result) uint64 {
	h := uint64(14695981039346656037)
	mix := func(x uint64) {
		for i := 0; i < 8; i++ {
			h ^= x & 0xff
			h *= 1099511628211
			x >>= 8
		}
	}
	for _, r := range rs {
		for _, f := range append([]float64{r.Used, r.KL, r.KLMax, r.Agree, r.PPLRatio, r.NeedleAcc}, r.KLs...) {
			mix(math.Float64bits(f))
		}
		for _, t := range append(append([]int{r.Diverge}, r.Top...), r.Free...) {
			mix(uint64(t))
		}
	}
	return h
}

// TestDeterminism pins the results of every method at two ratios on the
// tiny model: the same bits natively and under GOOS=js GOARCH=wasm. A change
// of the hash is a change of results, to be explained in its commit.
func TestDeterminism(t *testing.T) {
	r := tiny(t)
	var jobs []Job
	for _, ratio := range []float64{0.25, 0.5} {
		for _, m := range core.MethodNames() {
			jobs = append(jobs, Job{m, core.DefaultParams(ratio)})
		}
	}
	rs, err := r.EvaluateAll(jobs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = 0xb965f73a1387b8ed
	if got := resultsHash(rs); got != want {
		t.Errorf("results hash %#x, want %#x", got, uint64(want))
	}
}

// TestEvaluateInStages checks that EvaluateForced and FreeRun give what
// Evaluate gives, bit for bit, and the same n/a.
func TestEvaluateInStages(t *testing.T) {
	r := tiny(t)
	for _, ratio := range []float64{0.1, 0.4} {
		for _, m := range []string{"hae-ols", "topk", "quant", "full"} {
			p := core.DefaultParams(ratio)
			all, err := r.Evaluate(m, p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := r.EvaluateForced(m, p)
			if err != nil {
				t.Fatal(err)
			}
			free, div, ferr := r.FreeRun(m, p, nil)
			if all.NA != "" {
				if f.NA != all.NA || !errors.Is(ferr, core.ErrDoesNotFit) {
					t.Errorf("%s at %g: n/a %q, forced %q, free run error %v", m, ratio, all.NA, f.NA, ferr)
				}
				continue
			}
			if ferr != nil {
				t.Fatal(ferr)
			}
			if math.Float64bits(f.KL) != math.Float64bits(all.KL) || f.KLMax != all.KLMax || f.Agree != all.Agree || math.Float64bits(f.PPLRatio) != math.Float64bits(all.PPLRatio) ||
				f.Used != all.Used || !slices.Equal(f.KLs, all.KLs) || !slices.Equal(f.Top, all.Top) || !slices.Equal(f.Found, all.Found) || f.Free != nil || f.Diverge != -1 {
				t.Errorf("%s at %g: forced %+v, want Evaluate's %+v without the free run", m, ratio, f, all)
			}
			if !slices.Equal(free, all.Free) || div != all.Diverge {
				t.Errorf("%s at %g: free run %v (diverge %d), Evaluate's %v (%d)", m, ratio, free, div, all.Free, all.Diverge)
			}
		}
	}
}

// TestFreeRunStop checks that FreeRun asks stop before each of the free
// run's forward passes (Gen-1 of them) and returns ErrStopped, and nothing
// else, when it says to stop.
func TestFreeRunStop(t *testing.T) {
	r := tiny(t)
	p := core.DefaultParams(0.4)
	want, _, err := r.FreeRun("topk", p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, 2, r.Seq.Gen - 1, r.Seq.Gen} {
		calls := 0
		free, _, err := r.FreeRun("topk", p, func() bool { calls++; return calls == at })
		switch {
		case at < r.Seq.Gen && (!errors.Is(err, ErrStopped) || free != nil || calls != at):
			t.Errorf("stop at call %d: %v, %d calls, free run %v", at, err, calls, free)
		case at == r.Seq.Gen && (err != nil || !slices.Equal(free, want) || calls != r.Seq.Gen-1):
			t.Errorf("never stopped: %v, %d calls, free run %v, want %v", err, calls, free, want)
		}
	}
}
