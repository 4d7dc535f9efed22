// Package eval measures KV-cache compression end to end (HAE-OLS.md §8):
// what a model predicts and generates when every layer's and KV head's
// prefix cache is compressed by a method, against the same model with the
// full cache.
//
// Prepare runs a sequence through the model once with the full cache. That
// run is the reference: its next-token distributions, its free run, and the
// post-RoPE queries, keys and values of every layer and head, which become a
// haeols sample whose per-KV-head analyses (core.Model) every method and
// ratio then reuses. Evaluate compresses every prefix cache with a method at
// a ratio (a re-plan of the kept analyses, not a new analysis), continues
// the sequence teacher-forced from the compressed caches (the
// continuation's own queries, keys and values computed by the compressed
// run, so errors compound through the layers), generates greedily from
// them, and measures kl, kl_max, agree, ppl_ratio, diverge and needle_acc.
//
// The method "full" gives the reference bit for bit: its kl is exactly 0.
// Results are deterministic and do not depend on the number of workers.
package eval

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/core/xmath"
)

// LM is what end-to-end evaluation needs of a language model: its shape and
// a forward pass, one token at a time, that attends to a given KV cache.
type LM interface {
	// Name identifies the model in reports (e.g. the checkpoint's base name).
	Name() string
	// Shape is the attention geometry of the model's KV cache.
	Shape() kvcache.Shape
	// Vocab is the number of tokens; Context the longest sequence.
	Vocab() int
	Context() int
	// NewRun returns a forward pass attending to kv, calling observe (when
	// not nil) in every layer of every position.
	NewRun(kv kvcache.Cache, observe kvcache.Observer) kvcache.Runner
}

// Span is a range [Start, End) of token positions.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Sequence is what a model is evaluated on.
type Sequence struct {
	// Tokens are x[0..N-1].
	Tokens []int
	// Prefix is n, the positions whose cache is compressed; 0 chooses
	// sample.DefaultPrefix(N). At least one position must follow it.
	Prefix int
	// Answers are spans of positions in the continuation whose tokens the
	// model should predict (the digits of a pass key, a copied passage):
	// n <= Start < End <= N.
	Answers []Span
	// Gen is the number of tokens of the free run (0: none), cut to what
	// the context leaves after the prefix.
	Gen int
}

// DefaultGen is the free run's length of HAE-OLS.md §8.
const DefaultGen = 64

// Reference is a sequence run through a model with the full cache, and the
// per-KV-head analyses of its prefix, from which Evaluate measures methods.
// It is safe for concurrent use.
type Reference struct {
	LM     LM
	Seq    Sequence // Prefix and Gen resolved
	N, T   int      // positions; continuation positions (N - Prefix)
	Sample *sample.Sample
	// Model holds the per-KV-head analyses of the prefix (HAE-OLS.md §1).
	Model *core.Model
	// Logp are the reference's next-token log-probabilities after the
	// positions Prefix-1 .. N-1 (T+1 rows of Vocab; row 0 is the
	// prefill's last prediction, shared by every method).
	Logp [][]float64
	// Top is the reference's most likely token after each position
	// Prefix-1 .. N-1; Free its free run: Gen tokens generated greedily
	// after the prefix.
	Top, Free []int

	shape kvcache.Shape
}

// Prepare runs seq through lm with the full cache (a dense KV cache)
// recording everything Evaluate compares against. opt are the analysis
// options of the prefix's per-KV-head analyses.
func Prepare(lm LM, seq Sequence, opt core.Options) (*Reference, error) {
	return PrepareProgress(lm, seq, opt, nil)
}

// PrepareProgress is Prepare calling progress(done, N) after each position
// of the reference run (progress may be nil).
func PrepareProgress(lm LM, seq Sequence, opt core.Options, progress func(done, total int)) (*Reference, error) {
	shape := lm.Shape()
	if err := shape.Validate(); err != nil {
		return nil, fmt.Errorf("eval: model %s: %w", lm.Name(), err)
	}
	n := len(seq.Tokens)
	fail := func(format string, a ...any) (*Reference, error) {
		return nil, fmt.Errorf("eval: model %s: %s", lm.Name(), fmt.Sprintf(format, a...))
	}
	if n < 3 {
		return fail("a sequence of %d tokens: want at least 3 (a prefix of 2 and one continued)", n)
	}
	if n > lm.Context() {
		return fail("a sequence of %d tokens exceeds the context of %d", n, lm.Context())
	}
	for i, t := range seq.Tokens {
		if t < 0 || t >= lm.Vocab() {
			return fail("token %d at position %d outside the vocabulary [0, %d)", t, i, lm.Vocab())
		}
	}
	prefix := seq.Prefix
	if prefix == 0 {
		prefix = sample.DefaultPrefix(n)
	}
	if prefix < 2 || prefix >= n {
		return fail("prefix %d outside [2, %d] (at least one position must be continued)", prefix, n-1)
	}
	for _, a := range seq.Answers {
		if a.Start < prefix || a.End <= a.Start || a.End > n {
			return fail("answer span [%d, %d) outside the continuation [%d, %d)", a.Start, a.End, prefix, n)
		}
	}
	gen := seq.Gen
	if gen < 0 {
		return fail("free run of %d tokens", gen)
	}
	gen = min(gen, lm.Context()-prefix)
	seq.Tokens = slices.Clone(seq.Tokens)
	seq.Answers = slices.Clone(seq.Answers)
	seq.Prefix, seq.Gen = prefix, gen

	r := &Reference{LM: lm, Seq: seq, N: n, T: n - prefix, shape: shape}
	s, err := r.reference(progress)
	if err != nil {
		return nil, err
	}
	r.Sample = s
	if r.Model, err = core.NewModel(s, opt); err != nil {
		return nil, fmt.Errorf("eval: model %s: %w", lm.Name(), err)
	}
	// The reference free run: a compressed cache that keeps every token.
	pre := make([]kvcache.Prefix, shape.Layers*shape.KVHeads)
	for l := 0; l < shape.Layers; l++ {
		for kv := 0; kv < shape.KVHeads; kv++ {
			k, v := s.KHead(l, kv), s.VHead(l, kv)
			m := prefix * shape.HeadSize
			pre[l*shape.KVHeads+kv] = kvcache.Prefix{Keys: k[:m:m], Values: v[:m:m], Biased: prefix}
		}
	}
	kvc, err := kvcache.NewCompressed(shape, prefix, r.capacity(), pre)
	if err != nil {
		return nil, fmt.Errorf("eval: model %s: %w", lm.Name(), err)
	}
	run := lm.NewRun(kvc, nil)
	r.Free, _ = r.freeRun(func(token, pos int) ([]float32, error) { return run.Forward(token, pos), nil }, nil)
	return r, nil
}

// capacity is the number of positions a compressed run needs.
func (r *Reference) capacity() int { return max(r.N, r.Seq.Prefix+r.Seq.Gen) }

// reference runs the sequence with a dense cache, keeping the
// log-probabilities from the prefix's last position on and every layer's
// post-RoPE q, k and v as a sample.
func (r *Reference) reference(progress func(done, total int)) (*sample.Sample, error) {
	sh, n, prefix := r.shape, r.N, r.Seq.Prefix
	hs := sh.HeadSize
	s := &sample.Sample{L: sh.Layers, H: sh.Heads, HKV: sh.KVHeads, N: n, D: hs,
		Q: make([]float32, sh.Layers*sh.Heads*n*hs),
		K: make([]float32, sh.Layers*sh.KVHeads*n*hs),
		V: make([]float32, sh.Layers*sh.KVHeads*n*hs),
	}
	observe := func(l, pos int, q, k, v, _ []float32) {
		for h := 0; h < sh.Heads; h++ {
			o := ((l*sh.Heads+h)*n + pos) * hs
			copy(s.Q[o:o+hs], q[h*hs:])
		}
		for h := 0; h < sh.KVHeads; h++ {
			o := ((l*sh.KVHeads+h)*n + pos) * hs
			copy(s.K[o:o+hs], k[h*hs:])
			copy(s.V[o:o+hs], v[h*hs:])
		}
	}
	run := r.LM.NewRun(kvcache.NewDense(sh, n), observe)
	err := forwardAll(run, r.Seq.Tokens, 0, func(pos int, logits []float32) error {
		if pos >= prefix-1 {
			lp, err := logSoftmax(logits)
			if err != nil {
				return fmt.Errorf("eval: model %s, reference run at position %d: %w", r.LM.Name(), pos, err)
			}
			r.Logp = append(r.Logp, lp)
			r.Top = append(r.Top, argmax(logits))
		}
		if progress != nil {
			progress(pos+1, n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Meta = sample.Meta{
		Model:  r.LM.Name(),
		Source: fmt.Sprintf("eval reference %s tokens=%d prefix=%d", r.LM.Name(), n, prefix),
		Description: fmt.Sprintf("post-RoPE q/k/v of every layer and head of %s over %d positions with the full cache; the first %d are the cache to compress, the last %d are continued",
			r.LM.Name(), n, prefix, n-prefix),
		Prefix: prefix,
		Scale:  1 / math.Sqrt(float64(hs)),
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("eval: model %s, reference run: %w", r.LM.Name(), err)
	}
	return s, nil
}

// ErrStopped is returned by FreeRun when its stop function asked it to
// stop.
var ErrStopped = errors.New("eval: stopped")

// freeRun generates Gen tokens greedily after the prefix: the first from
// the prefill's last prediction, each next one fed back at the following
// position. It calls stop (when not nil) before each forward pass and
// returns ErrStopped when it says so.
func (r *Reference) freeRun(step func(token, pos int) ([]float32, error), stop func() bool) ([]int, error) {
	g, prefix := r.Seq.Gen, r.Seq.Prefix
	if g == 0 {
		return []int{}, nil
	}
	out := make([]int, g)
	out[0] = r.Top[0]
	for i := 1; i < g; i++ {
		if stop != nil && stop() {
			return nil, ErrStopped
		}
		lg, err := step(out[i-1], prefix+i-1)
		if err != nil {
			return nil, err
		}
		out[i] = argmax(lg)
	}
	return out, nil
}

// Result is one method at one ratio, end to end (HAE-OLS.md §8).
type Result struct {
	Method string
	Ratio  float64 // asked
	// NA, when not empty, says why the method has no result at this ratio
	// (it cannot fit the budget); the numbers are then unset.
	NA string
	// Used is the memory of every layer's and KV head's compressed cache
	// over the full prefix cache's.
	Used float64
	// KL is the mean, KLMax the largest, and KLs the per-position
	// KL(p_full || p_method) in nats over the T predictions after the
	// continuation's tokens.
	KL, KLMax float64
	KLs       []float64
	// Agree is the share of those positions whose most likely token is the
	// full cache's.
	Agree float64
	// PPLRatio is exp(mean nll_method - mean nll_full) over the T-1
	// positions whose next token is in the sequence (NaN when T = 1).
	PPLRatio float64
	// Top is the most likely token after each position Prefix-1 .. N-1
	// (teacher-forced); Free the free run; Diverge the first index where
	// Free differs from the reference's (Gen if never).
	Top, Free []int
	Diverge   int
	// Found says, per answer span, whether every answer token was the most
	// likely prediction at its position; NeedleAcc is the share found (NaN
	// when the sequence marks no answers).
	Found     []bool
	NeedleAcc float64
	// Rounds is the number of re-compressions of the teacher-forced
	// continuation (Params.Recompress; 0 without), Peak the most memory
	// its cache held (compressed rows and exact continuation) over the
	// full prefix cache's.
	Rounds int
	Peak   float64
}

// Plain is r as plain data for JSON: its numbers as result.Num, NaN for
// every one of them when the method has none (NA).
func (r *Result) Plain() result.Eval {
	e := result.Eval{Method: r.Method, NA: r.NA}
	if r.NA != "" {
		nan := result.Num(math.NaN())
		e.Used, e.Peak, e.KL, e.KLMax, e.Agree, e.PPLRatio, e.Diverge, e.NeedleAcc = nan, nan, nan, nan, nan, nan, nan, nan
		return e
	}
	e.Used, e.KL, e.KLMax, e.Agree = result.Num(r.Used), result.Num(r.KL), result.Num(r.KLMax), result.Num(r.Agree)
	e.Peak, e.Rounds = result.Num(r.Peak), r.Rounds
	e.PPLRatio, e.Diverge, e.NeedleAcc = result.Num(r.PPLRatio), result.Num(r.Diverge), result.Num(r.NeedleAcc)
	e.Found, e.Top, e.Free = r.Found, r.Top, r.Free
	e.KLs = make([]result.Num, len(r.KLs))
	for i, k := range r.KLs {
		e.KLs[i] = result.Num(k)
	}
	return e
}

// Evaluate compresses every layer's and KV head's prefix cache with the
// method at p and measures the continuation and the free run against the
// reference. A method that cannot fit p.Ratio gives a Result with NA set
// and no error. With p.Recompress = K > 0 the cache is re-compressed every
// K positions of the continuation and of the free run (decoder).
func (r *Reference) Evaluate(method string, p core.Params) (*Result, error) {
	res, d, err := r.forced(method, p)
	if err != nil || res.NA != "" {
		return res, err
	}
	if err := d.reset(); err != nil {
		return nil, err
	}
	if err := r.free(d, res, nil); err != nil {
		return r.noRoom(res, err)
	}
	return res, nil
}

// EvaluateForced is Evaluate without the free run (Free nil, Diverge -1):
// the metrics of the teacher-forced continuation (kl, kl_max, agree,
// ppl_ratio, needle_acc), equal to Evaluate's, at the cost of the
// continuation alone. FreeRun gives the rest.
func (r *Reference) EvaluateForced(method string, p core.Params) (*Result, error) {
	res, _, err := r.forced(method, p)
	if err == nil && res.NA == "" {
		res.Diverge = -1
	}
	return res, err
}

// FreeRun is the free run of the method at p, as Evaluate makes it, and
// the first index where it differs from the reference's (Gen if never).
// A method that cannot fit p.Ratio gives an error wrapping
// core.ErrDoesNotFit. stop, when not nil, is called before each token's
// forward pass (and may do other work meanwhile); when it returns true,
// FreeRun returns ErrStopped.
func (r *Reference) FreeRun(method string, p core.Params, stop func() bool) ([]int, int, error) {
	d, _, err := r.newDecoder(method, p)
	if err != nil {
		return nil, 0, err
	}
	res := &Result{}
	if err := r.free(d, res, stop); err != nil {
		if errors.Is(err, errNoRoom) {
			return nil, 0, fmt.Errorf("eval: %s at ratio %g: %w: %w", method, p.Ratio, core.ErrDoesNotFit, err)
		}
		if errors.Is(err, core.ErrDoesNotFit) {
			return nil, 0, fmt.Errorf("eval: %s at ratio %g: %w", method, p.Ratio, err)
		}
		return nil, 0, err
	}
	return res.Free, res.Diverge, nil
}

// noRoom turns a re-compression that found no room, or a method that
// cannot fit what a re-compression leaves it, into res's NA.
func (r *Reference) noRoom(res *Result, err error) (*Result, error) {
	na := &Result{Method: res.Method, Ratio: res.Ratio}
	var room *noRoomError
	switch {
	case errors.As(err, &room):
		na.NA = room.Error()
	case errors.Is(err, core.ErrDoesNotFit):
		na.NA = "re-compressed: " + core.NAReason(err)
	default:
		return nil, err
	}
	return na, nil
}

// forced compresses the caches with the method at p and runs the
// continuation teacher-forced from them, returning the result so far
// (NA set when the method does not fit) with its decoder.
func (r *Reference) forced(method string, p core.Params) (*Result, *decoder, error) {
	res := &Result{Method: method, Ratio: p.Ratio}
	d, used, err := r.newDecoder(method, p)
	if errors.Is(err, core.ErrDoesNotFit) {
		res.NA = core.NAReason(err)
		return res, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	res.Used = used
	if err := r.continueForced(d, res); err != nil {
		if na, err2 := r.noRoom(res, err); err2 == nil {
			return na, nil, nil
		}
		return nil, nil, fmt.Errorf("eval: %s at ratio %g: %w", method, p.Ratio, err)
	}
	res.Rounds, res.Peak = d.rounds, float64(d.peak)/float64(d.fullBits)
	return res, d, nil
}

// free generates the free run from d's cache (holding the prefix only)
// into res, and where it parts from the reference's; stop as freeRun's.
func (r *Reference) free(d *decoder, res *Result, stop func() bool) error {
	var err error
	if res.Free, err = r.freeRun(d.step, stop); err != nil {
		return err
	}
	res.Diverge = len(res.Free)
	for i, t := range res.Free {
		if t != r.Free[i] {
			res.Diverge = i
			break
		}
	}
	return nil
}

// Compress compresses the prefix cache of every layer and KV head with the
// method at p (re-planning the kept analyses) and returns the caches' rows
// as kvcache prefixes, layer-major, with the memory they use over the full
// prefix cache's. Errors wrap core.ErrDoesNotFit when the method cannot
// fit p.Ratio.
func (r *Reference) Compress(method string, p core.Params) ([]kvcache.Prefix, float64, error) {
	caches, groups, err := r.compress(method, p)
	if err != nil {
		return nil, 0, err
	}
	pre := make([]kvcache.Prefix, len(caches))
	var bits, full int64
	for i, c := range caches {
		pre[i] = PrefixOf(groups[i], c)
		bits += c.Bits
		full += c.Budget.FullBits
	}
	return pre, float64(bits) / float64(full), nil
}

// compress is Compress's caches, layer-major, with their groups.
func (r *Reference) compress(method string, p core.Params) ([]*core.Cache, []*core.Group, error) {
	sh := r.shape
	caches := make([]*core.Cache, sh.Layers*sh.KVHeads)
	groups := make([]*core.Group, len(caches))
	var alloc *core.Allocation
	if !core.IsUniform(p.Budget) {
		var err error
		ap := p
		ap.Recompress = 0 // one allocation, however the cache is decoded
		if alloc, err = r.Model.Allocate(method, ap); err != nil {
			return nil, nil, fmt.Errorf("eval: %s at ratio %g, budget %s: %w", method, p.Ratio, p.Budget, err)
		}
	}
	for l := 0; l < sh.Layers; l++ {
		for kv := 0; kv < sh.KVHeads; kv++ {
			g, err := r.Model.Group(l, kv)
			if err != nil {
				return nil, nil, fmt.Errorf("eval: layer %d KV head %d: %w", l, kv, err)
			}
			q := p
			if alloc != nil {
				q = alloc.ParamsOf(p, l, kv)
			}
			c, err := g.Compress(method, q)
			if err != nil {
				return nil, nil, fmt.Errorf("eval: %s at ratio %g, layer %d KV head %d: %w", method, p.Ratio, l, kv, err)
			}
			caches[l*sh.KVHeads+kv], groups[l*sh.KVHeads+kv] = c, g
		}
	}
	return caches, groups, nil
}

// PrefixOf returns the rows a query attends to in the compressed cache c of
// group g: its exact tokens in position order, then its synthetic tokens
// (summaries, quantized or reconstructed copies) with their logit biases.
// A cache that keeps every token exactly shares g's keys and values.
func PrefixOf(g *core.Group, c *core.Cache) kvcache.Prefix {
	d := g.D
	if c.All && c.C == 0 {
		m := g.N * d
		return kvcache.Prefix{Keys: g.K[:m:m], Values: g.V[:m:m], Biased: g.N}
	}
	exact := c.Exact
	if c.All {
		exact = nil
		for j := 0; j < g.N; j++ {
			exact = append(exact, int32(j))
		}
	}
	e := len(exact)
	keys := make([]float32, (e+c.C)*d)
	vals := make([]float32, (e+c.C)*d)
	for i, j := range exact {
		copy(keys[i*d:(i+1)*d], g.K[int(j)*d:])
		copy(vals[i*d:(i+1)*d], g.V[int(j)*d:])
	}
	copy(keys[e*d:], c.Keys[:c.C*d])
	copy(vals[e*d:], c.Values[:c.C*d])
	p := kvcache.Prefix{Keys: keys, Values: vals, Biased: e + c.C}
	if c.Bias != nil && c.C > 0 {
		p.Biased, p.Bias = e, slices.Clone(c.Bias[:c.C])
	}
	return p
}

// continueForced feeds the continuation's tokens at their positions and
// measures each prediction against the reference.
func (r *Reference) continueForced(d *decoder, res *Result) error {
	prefix, t := r.Seq.Prefix, r.T
	res.KLs = make([]float64, t)
	res.Top = make([]int, t+1)
	res.Top[0] = r.Top[0]
	var agree int
	var nllM, nllF float64
	err := d.feed(r.Seq.Tokens[prefix:], prefix, func(pos int, logits []float32) error {
		i := pos - prefix
		lp, err := logSoftmax(logits)
		if err != nil {
			return fmt.Errorf("position %d: %w", pos, err)
		}
		ref := r.Logp[i+1]
		var kl float64
		for v, lf := range ref {
			if pf := xmath.Exp(lf); pf > 0 {
				kl += pf * (lf - lp[v])
			}
		}
		kl = max(kl, 0) // rounding can leave -1e-17 for equal distributions
		res.KLs[i] = kl
		res.KL += kl
		res.KLMax = max(res.KLMax, kl)
		top := argmax(logits)
		res.Top[i+1] = top
		if top == r.Top[i+1] {
			agree++
		}
		if pos+1 < r.N {
			next := r.Seq.Tokens[pos+1]
			nllM -= lp[next]
			nllF -= ref[next]
		}
		return nil
	})
	if err != nil {
		return err
	}
	res.KL /= float64(t)
	res.Agree = float64(agree) / float64(t)
	if t > 1 {
		res.PPLRatio = xmath.Exp((nllM - nllF) / float64(t-1))
	} else {
		res.PPLRatio = math.NaN()
	}
	res.NeedleAcc = math.NaN()
	if len(r.Seq.Answers) > 0 {
		found := 0
		res.Found = make([]bool, len(r.Seq.Answers))
		for k, a := range r.Seq.Answers {
			ok := true
			for p := a.Start; p < a.End; p++ {
				// The token at p is predicted after position p-1: row p-prefix.
				if res.Top[p-prefix] != r.Seq.Tokens[p] {
					ok = false
					break
				}
			}
			res.Found[k] = ok
			if ok {
				found++
			}
		}
		res.NeedleAcc = float64(found) / float64(len(r.Seq.Answers))
	}
	return nil
}

// Job is one method at one ratio.
type Job struct {
	Method string
	Params core.Params
}

// EvaluateAll runs the jobs on up to workers goroutines (0: all CPUs),
// calling progress (when not nil, from any goroutine, serialised) after each
// job with the number done. The results are in the order of jobs and do not
// depend on workers.
func (r *Reference) EvaluateAll(jobs []Job, workers int, progress func(done, total int)) ([]*Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]*Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = r.Evaluate(jobs[i].Method, jobs[i].Params)
				if progress != nil {
					mu.Lock()
					done++
					progress(done, len(jobs))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

// blockLen is how many positions a teacher-forced run feeds at once to a
// model that can (kvcache.BlockRunner): each weight is then read once per
// block of positions instead of once per position, with the same bits.
const blockLen = 32

// forwardAll feeds tokens at positions pos, pos+1, ... to run, in blocks
// when it can, calling each with every position's logits in order.
func forwardAll(run kvcache.Runner, tokens []int, pos int, each func(pos int, logits []float32) error) error {
	br, ok := run.(kvcache.BlockRunner)
	for i := 0; i < len(tokens); {
		if !ok {
			if err := each(pos+i, run.Forward(tokens[i], pos+i)); err != nil {
				return err
			}
			i++
			continue
		}
		n := min(blockLen, len(tokens)-i)
		for r, lg := range br.ForwardBlock(tokens[i:i+n], pos+i) {
			if err := each(pos+i+r, lg); err != nil {
				return err
			}
		}
		i += n
	}
	return nil
}

// logSoftmax returns the log-probabilities of the logits in float64, or an
// error when a logit is not finite.
func logSoftmax(logits []float32) ([]float64, error) {
	mx := math.Inf(-1)
	for i, v := range logits {
		x := float64(v)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("logit %d is %v", i, v)
		}
		mx = max(mx, x)
	}
	var sum float64
	for _, v := range logits {
		sum += xmath.Exp(float64(v) - mx)
	}
	lse := mx + xmath.Log(sum)
	out := make([]float64, len(logits))
	for i, v := range logits {
		out[i] = float64(v) - lse
	}
	return out, nil
}

// argmax is the index of the largest logit, the first on ties.
func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
