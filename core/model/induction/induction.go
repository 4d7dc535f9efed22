// Package induction constructs, without training, a two-layer Llama-style
// model over byte tokens that copies from its context: the smallest model
// for which a pass-key test measures something. With the full cache it
// continues any 8-token context it has seen before with what followed it;
// it fails exactly when the cache has lost the entries it would copy from.
//
// The construction (docs/INDUCTION.md derives it in the notation of
// shared/HAE-OLS.md):
//
//   - Every token v has a code e_v, a unit vector of CodeDim; the embedding
//     writes e_v into slot 0 of the residual stream and 1 into a constant
//     coordinate.
//   - Layer 0 has Match previous-token heads. Head j attends to position
//     i-j through RoPE alone: its query and key are constant vectors on the
//     rotating pairs, the query turned back by j steps, so the score is
//     sum_m cos((i-t-j) theta_m), largest at t = i-j by at least 2 for every
//     other t within Context. Its value is e_{x_t}; its output goes to slot
//     j. After layer 0, slots 0..Match hold the codes of x_i, x_{i-1}, ...,
//     x_{i-Match}.
//   - Layer 1 has one induction head on the pairs that do not rotate (their
//     RoPE divisor is huge, so their angle stays 0): the query at i is slots
//     0..Match-1 (x_i ... x_{i-Match+1}), the key at t is slots 1..Match
//     (x_{t-1} ... x_{t-Match}), so the score counts the positions where the
//     Match tokens before t equal the Match tokens ending at i. Its value is
//     e_{x_t}, written to the output slot.
//   - The classifier scores token v by e_v against the output slot.
//
// The feed-forward blocks are zero, the RMSNorm weights undo the norms the
// layout implies, and every number comes from Seed, so Checkpoint always
// returns the same bits.
package induction

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/internal/bytemodel"
)

// The model's geometry.
const (
	// CodeDim is the width of a token's code.
	CodeDim = 24
	// Match is how many tokens the induction head compares, and how many
	// previous-token heads layer 0 has.
	Match = 8
	// Rotating is the number of RoPE pairs that turn; the others are still.
	Rotating = 14
	// HeadDim holds the induction head's Match codes on still pairs and the
	// rotating pairs: 2*Rotating + Match*CodeDim rounded up to 16.
	HeadDim = 224
	// Heads is the number of query heads (Match previous-token heads in
	// layer 0; one induction head in layer 1, the rest idle).
	Heads = Match
	// Slots are the residual's code slots: x_i, x_{i-1} .. x_{i-Match},
	// the copied token.
	Slots = Match + 2
	// Dim is the residual width: the slots, the constant, padding to 32.
	Dim = 256
	// Context is the longest sequence the positional heads resolve:
	// the slowest rotating pair turns by pi/2^(Rotating-1) per step.
	Context = 1 << (Rotating - 1)
	// Seed chooses the codes.
	Seed = 20261206
)

// constant is the residual coordinate that is always 1.
const constant = Slots * CodeDim

// Scales of the scores, in nats per unit of the score's sum.
const (
	posScale   = 10  // layer 0: the wrong positions are 2 units lower
	matchScale = 12  // layer 1: a wrong token costs one unit
	logitScale = 24  // the classifier
	ropeTheta  = 1e4 // the base the divisors are relative to
	stillRope  = 1e30
)

// Codes returns the token codes, Vocab rows of CodeDim: Gaussian
// directions from Seed, normalised.
func Codes() [][]float64 {
	r := rand.New(rand.NewPCG(Seed, 1))
	out := make([][]float64, bytemodel.Vocab)
	for v := range out {
		e := make([]float64, CodeDim)
		var n float64
		for i := range e {
			e[i] = r.NormFloat64()
			n += e[i] * e[i]
		}
		for i := range e {
			e[i] /= math.Sqrt(n)
		}
		out[v] = e
	}
	return out
}

// Freq is the RoPE angle per position of pair m: pi/2^m for the rotating
// pairs, 0 (to float32 precision) for the others.
func Freq(m int) float64 {
	if m < Rotating {
		return math.Pi / math.Exp2(float64(m))
	}
	return 0
}

// stillPairs are the head dimensions whose pairs do not rotate, in the
// half-split order (pair m is dimensions m and m + HeadDim/2).
func stillDims() []int {
	var d []int
	for m := Rotating; m < HeadDim/2; m++ {
		d = append(d, m)
	}
	for m := Rotating; m < HeadDim/2; m++ {
		d = append(d, m+HeadDim/2)
	}
	return d
}

// Config is the model's configuration.
func Config() model.Config {
	factors := make([]float32, HeadDim/2)
	for m := range factors {
		base := math.Pow(ropeTheta, -float64(2*m)/HeadDim)
		if m < Rotating {
			factors[m] = float32(base / Freq(m))
		} else {
			factors[m] = stillRope
		}
	}
	return model.Config{
		Arch: model.Llama, Dim: Dim, FFN: 32, Layers: 2, Heads: Heads, KVHeads: 1, HeadDim: HeadDim,
		Vocab: bytemodel.Vocab, Context: Context, RMSEps: 1e-6, RopeTheta: ropeTheta, RopeFactors: factors,
	}
}

// Checkpoint returns the model with the byte tokenizer (bytemodel).
func Checkpoint() (*model.Checkpoint, error) {
	c := Config()
	codes := Codes()
	still := stillDims()
	if len(still) < Match*CodeDim {
		panic("induction: the still pairs cannot hold the induction head's codes")
	}
	slot := func(s, u int) int { return s*CodeDim + u }
	type matrix struct {
		rows, cols int
		x          []float32
	}
	mats := map[string]matrix{}
	mat := func(name string, rows, cols int) []float32 {
		x := make([]float32, rows*cols)
		mats[name] = matrix{rows, cols, x}
		return x
	}
	vec := func(name string, n int, v float64) {
		x := mat(name, 1, n)
		for i := range x {
			x[i] = float32(v)
		}
	}
	emb := mat("token_embd.weight", c.Vocab, Dim)
	out := mat("output.weight", c.Vocab, Dim)
	for v, e := range codes {
		for u, x := range e {
			emb[v*Dim+slot(0, u)] = float32(x)
			out[v*Dim+slot(Slots-1, u)] = float32(logitScale * x)
		}
		emb[v*Dim+constant] = 1
	}
	// The residual's squared norm: the constant and one unit code per
	// filled slot. Each RMSNorm weight divides its input's RMS back out.
	rms := func(slots int) float64 { return math.Sqrt(float64(1+slots) / Dim) }
	vec("output_norm.weight", Dim, rms(Slots))
	q := Heads * HeadDim
	for l := 0; l < 2; l++ {
		p := func(s string) string { return fmt.Sprintf("blk.%d.%s", l, s) }
		vec(p("attn_norm.weight"), Dim, rms([]int{1, Match + 1}[l]))
		vec(p("ffn_norm.weight"), Dim, 1)
		wq := mat(p("attn_q.weight"), q, Dim)
		wk := mat(p("attn_k.weight"), HeadDim, Dim)
		wv := mat(p("attn_v.weight"), HeadDim, Dim)
		wo := mat(p("attn_output.weight"), Dim, q)
		mat(p("ffn_gate.weight"), c.FFN, Dim)
		mat(p("ffn_up.weight"), c.FFN, Dim)
		mat(p("ffn_down.weight"), Dim, c.FFN)
		// Both layers' values are the token's code.
		for u := 0; u < CodeDim; u++ {
			wv[u*Dim+slot(0, u)] = 1
		}
		if l == 0 {
			// score/sqrt(HeadDim) = posScale * sum_m cos(...): r^2 per pair.
			r := math.Sqrt(posScale * math.Sqrt(HeadDim))
			for m := 0; m < Rotating; m++ {
				wk[m*Dim+constant] = float32(r)
				for h := 0; h < Heads; h++ {
					j := float64(h + 1)
					a := -j * Freq(m)
					wq[(h*HeadDim+m)*Dim+constant] = float32(r * math.Cos(a))
					wq[(h*HeadDim+m+HeadDim/2)*Dim+constant] = float32(r * math.Sin(a))
				}
			}
			for h := 0; h < Heads; h++ {
				for u := 0; u < CodeDim; u++ {
					wo[slot(h+1, u)*q+h*HeadDim+u] = 1
				}
			}
			continue
		}
		b := matchScale * math.Sqrt(HeadDim)
		for s := 0; s < Match; s++ {
			for u := 0; u < CodeDim; u++ {
				d := still[s*CodeDim+u]
				wq[d*Dim+slot(s, u)] = float32(b)
				wk[d*Dim+slot(s+1, u)] = 1
			}
		}
		for u := 0; u < CodeDim; u++ {
			wo[slot(Slots-1, u)*q+u] = 1
		}
	}
	ck := &model.Checkpoint{Config: c, Weights: map[string]*model.Weight{}}
	for name, m := range mats {
		w, err := model.NewWeight(quant.F32, m.rows, m.cols, m.x)
		if err != nil {
			return nil, fmt.Errorf("induction: %s: %w", name, err)
		}
		ck.Weights[name] = w
	}
	var err error
	if ck.Tokenizer, err = bytemodel.Tokenizer(); err != nil {
		return nil, fmt.Errorf("induction: %w", err)
	}
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("induction: %w", err)
	}
	return ck, nil
}
