package llama

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/sample"
)

// Sampler chooses the next token from the logits.
type Sampler struct {
	// Temperature 0 is greedy decoding (argmax, first on ties). Above 0 the
	// logits are divided by it and a token is drawn from their softmax with
	// llama2.c's sample_mult (top-p off).
	Temperature float64
	// Seed is the nonzero initial state of llama2.c's xorshift generator,
	// used when Temperature > 0: the same seed gives the same tokens.
	Seed uint64
}

// Greedy is the temperature-0 sampler.
var Greedy = Sampler{}

// String describes the sampler as it appears in a capture's source:
// "greedy" or "temperature=0.8 seed=42".
func (s Sampler) String() string {
	if s.Temperature == 0 {
		return "greedy"
	}
	return "temperature=" + strconv.FormatFloat(s.Temperature, 'g', -1, 64) + " seed=" + strconv.FormatUint(s.Seed, 10)
}

func (s Sampler) validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature) || math.IsInf(s.Temperature, 0):
		return fmt.Errorf("temperature %v, want a finite value >= 0", s.Temperature)
	case s.Temperature > 0 && s.Seed == 0:
		return fmt.Errorf("seed 0 with temperature %v: the xorshift generator needs a nonzero seed", s.Temperature)
	}
	return nil
}

// rng is llama2.c's xorshift* generator (random_u32, random_f32).
type rng struct{ state uint64 }

func newRNG(seed uint64) *rng {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15 // only for Random; Sampler rejects seed 0
	}
	return &rng{seed}
}

func (r *rng) u32() uint32 {
	r.state ^= r.state >> 12
	r.state ^= r.state << 25
	r.state ^= r.state >> 27
	return uint32((r.state * 0x2545F4914F6CDD1D) >> 32)
}

// float32 is uniform in [0, 1).
func (r *rng) float32() float32 { return float32(r.u32()>>8) / 16777216 }

// pick returns the next token from logits (which it may overwrite).
func (s Sampler) pick(logits []float32, r *rng) int {
	if s.Temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best
	}
	t := float32(s.Temperature)
	for i := range logits {
		logits[i] /= t
	}
	kvcache.Softmax(logits)
	coin := r.float32()
	var cdf float32
	for i, p := range logits {
		cdf += p
		if coin < cdf {
			return i
		}
	}
	return len(logits) - 1
}

// Capture is the record of one run of a model over N positions: the
// tokens fed and, for every layer and head, the post-RoPE queries, keys and
// values and the attention output the forward pass computed.
type Capture struct {
	Model   string // checkpoint base name
	Config  Config
	Prompt  []int // the prompt tokens, Tokens[:len(Prompt)]
	Sampler Sampler
	// Tokens are the N tokens fed at positions 0..N-1: the prompt, then the
	// generated tokens.
	Tokens []int
	N      int
	// Q and Out are [L, H, N, D]; K and V are [L, HKV, N, D] (flattened,
	// row-major, D the head size). Out is the per-head attention output of
	// the forward pass (State.Observe), kept to check the capture.
	Q, K, V, Out []float32
}

// Capture feeds the prompt tokens, then generate tokens chosen by sampler
// (each fed back in), recording every layer's post-RoPE q, k, v and per-head
// attention output at every one of the len(prompt)+generate positions, which
// must fit in the context. Same model, prompt and sampler, same bits.
func (m *Model) Capture(prompt []int, generate int, sampler Sampler) (*Capture, error) {
	return m.CaptureProgress(prompt, generate, sampler, nil)
}

// CaptureProgress is Capture calling progress(done, n) after each of the n
// positions (progress may be nil); the browser app uses it for its progress
// bar.
func (m *Model) CaptureProgress(prompt []int, generate int, sampler Sampler, progress func(done, n int)) (*Capture, error) {
	c := m.cfg
	fail := func(format string, a ...any) (*Capture, error) {
		return nil, fmt.Errorf("llama: capture %s: %s", m.Name, fmt.Sprintf(format, a...))
	}
	if len(prompt) == 0 {
		return fail("the prompt is empty (start it with BOS, token %d)", BOS)
	}
	for i, t := range prompt {
		if t < 0 || t >= c.Vocab {
			return fail("prompt token %d at position %d outside the vocabulary [0, %d)", t, i, c.Vocab)
		}
	}
	if generate < 0 {
		return fail("generate = %d, want >= 0", generate)
	}
	if n := len(prompt) + generate; n > c.SeqLen {
		return fail("%d prompt + %d generated tokens exceed the context of %d", len(prompt), generate, c.SeqLen)
	}
	if err := sampler.validate(); err != nil {
		return fail("%v", err)
	}

	n := len(prompt) + generate
	hs := c.HeadSize()
	cp := &Capture{
		Model:   m.Name,
		Config:  c,
		Prompt:  slices.Clone(prompt),
		Sampler: sampler,
		Tokens:  append(make([]int, 0, n), prompt...),
		N:       n,
		Q:       make([]float32, c.Layers*c.Heads*n*hs),
		K:       make([]float32, c.Layers*c.KVHeads*n*hs),
		V:       make([]float32, c.Layers*c.KVHeads*n*hs),
		Out:     make([]float32, c.Layers*c.Heads*n*hs),
	}
	st := m.NewState()
	st.Observe = func(l, pos int, q, k, v, out []float32) {
		for h := 0; h < c.Heads; h++ {
			o := ((l*c.Heads+h)*n + pos) * hs
			copy(cp.Q[o:o+hs], q[h*hs:])
			copy(cp.Out[o:o+hs], out[h*hs:])
		}
		for h := 0; h < c.KVHeads; h++ {
			o := ((l*c.KVHeads+h)*n + pos) * hs
			copy(cp.K[o:o+hs], k[h*hs:])
			copy(cp.V[o:o+hs], v[h*hs:])
		}
	}
	r := newRNG(sampler.Seed)
	for pos := 0; pos < n; pos++ {
		logits := m.Forward(cp.Tokens[pos], pos, st)
		if len(cp.Tokens) < n && pos == len(cp.Tokens)-1 {
			cp.Tokens = append(cp.Tokens, sampler.pick(logits, r))
		}
		if progress != nil {
			progress(pos+1, n)
		}
	}
	return cp, nil
}

// Generated returns the tokens generated after the prompt.
func (c *Capture) Generated() []int { return c.Tokens[len(c.Prompt):] }

// promptString describes the prompt for the source line: "BOS" for the
// single BOS token, else the comma-separated ids.
func (c *Capture) promptString() string {
	if len(c.Prompt) == 1 && c.Prompt[0] == BOS {
		return "BOS"
	}
	ids := make([]string, len(c.Prompt))
	for i, t := range c.Prompt {
		ids[i] = strconv.Itoa(t)
	}
	return strings.Join(ids, ",")
}

// Sample converts the capture into a haeols sample (HAE-OLS.md §6): q
// [L, H, N, D], k and v [L, HKV, N, D], the first prefix positions the cache
// and the rest probe queries (prefix 0 chooses sample.DefaultPrefix(N)),
// scale 1/sqrt(D), one token string per position (the tokenizer's pieces, or
// the ids when tok is nil) and the ids themselves under the extra key
// "token_ids". The source records exactly how the run was made, e.g.
// "llama2.c capture stories260K.bin prompt=BOS generate=511 greedy
// prefix=448". The tensors are copied.
func (c *Capture) Sample(prefix int, tok *Tokenizer) (*sample.Sample, error) {
	if prefix == 0 {
		prefix = sample.DefaultPrefix(c.N)
	}
	if prefix < 2 || prefix > c.N {
		return nil, fmt.Errorf("llama: sample of %s: prefix %d outside [2, %d]", c.Model, prefix, c.N)
	}
	if tok != nil && tok.Vocab() != c.Config.Vocab {
		return nil, fmt.Errorf("llama: sample of %s: tokenizer %s has %d tokens, the model %d", c.Model, tok.Name, tok.Vocab(), c.Config.Vocab)
	}
	tokens := make([]string, c.N)
	for i, t := range c.Tokens {
		if tok != nil {
			tokens[i] = tok.Piece(t)
		} else {
			tokens[i] = strconv.Itoa(t)
		}
	}
	ids, err := json.Marshal(c.Tokens)
	if err != nil {
		return nil, fmt.Errorf("llama: sample of %s: %w", c.Model, err)
	}
	cfg := c.Config
	gen := len(c.Tokens) - len(c.Prompt)
	s := &sample.Sample{
		L: cfg.Layers, H: cfg.Heads, HKV: cfg.KVHeads, N: c.N, D: cfg.HeadSize(),
		Q: slices.Clone(c.Q), K: slices.Clone(c.K), V: slices.Clone(c.V),
		Meta: sample.Meta{
			Model:  c.Model,
			Source: fmt.Sprintf("llama2.c capture %s prompt=%s generate=%d %v prefix=%d", c.Model, c.promptString(), gen, c.Sampler, prefix),
			Description: fmt.Sprintf("post-RoPE q/k/v of every layer and head of the llama2.c model %s (dim %d, %d layers, %d heads, %d KV heads, head size %d) over %d positions: %d prompt tokens then %d generated (%v); the first %d positions are the cache, the last %d are probe queries",
				c.Model, cfg.Dim, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.HeadSize(), c.N, len(c.Prompt), gen, c.Sampler, prefix, c.N-prefix),
			Prefix: prefix,
			Scale:  1 / math.Sqrt(float64(cfg.HeadSize())),
			Tokens: tokens,
			Extra:  map[string]string{"token_ids": string(ids)},
		},
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("llama: sample of %s: %w", c.Model, err)
	}
	return s, nil
}
