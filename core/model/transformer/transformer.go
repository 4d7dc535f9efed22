// Package transformer runs the forward pass of a Llama-family checkpoint
// (package model: Llama 2/3/3.1/3.2, Mistral, TinyLlama, SmolLM, Qwen2/2.5,
// Qwen3) in float32, one token at a time, multiplying straight from the
// weights' blocks (quant.MatVec), so a quantized model is never expanded.
//
// Per layer: RMSNorm; q, k, v projections (plus biases: Qwen2, Llama with
// attention_bias); per-head RMSNorm of q and k (Qwen3); RoPE on the
// half-split pairs (i, i + head_dim/2) with base theta and, for Llama 3.1,
// the frequency divisors; the key and value go into a kvcache.Cache, which
// computes the attention; the output projection (plus bias) and the residual;
// RMSNorm, SwiGLU feed-forward, residual. Then the final RMSNorm and the
// classifier (the token embedding when tied).
//
// Products are explicitly rounded (no fused multiply-add) and the order of
// every sum is fixed, so the same checkpoint and tokens give the same bits
// natively and in WebAssembly.
package transformer

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/xmath"
)

type layer struct {
	attnNorm, ffnNorm          []float32
	q, k, v, o, gate, up, down *model.Weight
	qBias, kBias, vBias, oBias []float32
	qNorm, kNorm               []float32
}

// Model is a checkpoint ready to run: its matrices as stored, its vectors
// (norms, biases) decoded, its RoPE frequencies.
type Model struct {
	cfg        model.Config
	emb, out   *model.Weight
	outputNorm []float32
	layers     []layer
	freq       []float32 // [HeadDim/2] radians per position
}

// New prepares ck (which must pass Check) for running.
func New(ck *model.Checkpoint) (*Model, error) {
	if err := ck.Check(); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	c := ck.Config
	m := &Model{cfg: c, emb: ck.Weights["token_embd.weight"]}
	vec := func(name string) []float32 {
		w, ok := ck.Weights[name]
		if !ok {
			return nil
		}
		x, err := w.Floats()
		if err != nil {
			panic(err) // Check verified type and size
		}
		return x
	}
	m.outputNorm = vec("output_norm.weight")
	m.out = m.emb
	if !c.Tied {
		m.out = ck.Weights["output.weight"]
	}
	for i := 0; i < c.Layers; i++ {
		w := func(s string) *model.Weight { return ck.Weights[fmt.Sprintf("blk.%d.%s", i, s)] }
		v := func(s string) []float32 { return vec(fmt.Sprintf("blk.%d.%s", i, s)) }
		m.layers = append(m.layers, layer{
			attnNorm: v("attn_norm.weight"), ffnNorm: v("ffn_norm.weight"),
			q: w("attn_q.weight"), k: w("attn_k.weight"), v: w("attn_v.weight"), o: w("attn_output.weight"),
			gate: w("ffn_gate.weight"), up: w("ffn_up.weight"), down: w("ffn_down.weight"),
			qBias: v("attn_q.bias"), kBias: v("attn_k.bias"), vBias: v("attn_v.bias"), oBias: v("attn_output.bias"),
			qNorm: v("attn_q_norm.weight"), kNorm: v("attn_k_norm.weight"),
		})
	}
	// theta^(-2i/d) = 1/exp(ln(theta) * 2i/d), as llama2.c computes it, in
	// the platform-independent xmath.
	hd := c.HeadDim
	m.freq = make([]float32, hd/2)
	lnTheta := xmath.Log(c.RopeTheta)
	for i := range m.freq {
		f := float32(1 / xmath.Exp(lnTheta*float64(2*i)/float64(hd)))
		if c.RopeFactors != nil {
			f /= c.RopeFactors[i]
		}
		m.freq[i] = f
	}
	return m, nil
}

// Config is the model's configuration.
func (m *Model) Config() model.Config { return m.cfg }

// State is the activations of one sequence and the cache it attends to.
type State struct {
	m                    *Model
	cache                kvcache.Cache
	x, xb, xb2, hb, hb2  []float32
	q, k, v, att, logits []float32
	cos, sin             []float32
	block                []float32 // ForwardBlock's logits
	// Observe, when set, sees every layer's q, k, v and attention output.
	Observe kvcache.Observer
}

// Shape is the attention geometry of the model's KV cache.
func (m *Model) Shape() kvcache.Shape {
	c := m.cfg
	return kvcache.Shape{Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, HeadSize: c.HeadDim}
}

// NewState returns the activations of a sequence attending to cache (a
// kvcache.Dense, or a method's compressed prefix, kvcache.Compressed). It
// panics if the cache was made for another shape.
func (m *Model) NewState(cache kvcache.Cache) *State {
	c := m.cfg
	if cache.Shape() != m.Shape() {
		panic(fmt.Sprintf("transformer: NewState: cache of shape %+v, model %+v", cache.Shape(), m.Shape()))
	}
	qd, kvd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	return &State{
		m: m, cache: cache,
		x: make([]float32, c.Dim), xb: make([]float32, c.Dim), xb2: make([]float32, c.Dim),
		hb: make([]float32, c.FFN), hb2: make([]float32, c.FFN),
		q: make([]float32, qd), k: make([]float32, kvd), v: make([]float32, kvd), att: make([]float32, qd),
		logits: make([]float32, c.Vocab),
		cos:    make([]float32, c.HeadDim/2), sin: make([]float32, c.HeadDim/2),
	}
}

// Forward runs token at position pos (positions in order 0, 1, 2, ...)
// and returns the logits of the next token, a slice owned by st that the
// next call overwrites. It panics if token or pos is out of range.
func (m *Model) Forward(token, pos int, st *State) []float32 {
	c := m.cfg
	if token < 0 || token >= c.Vocab {
		panic(fmt.Sprintf("transformer: Forward: token %d outside the vocabulary [0, %d)", token, c.Vocab))
	}
	if pos < 0 || st.m != m {
		panic(fmt.Sprintf("transformer: Forward: position %d, or a state of another model", pos))
	}
	for i, f := range m.freq {
		s, co := xmath.Sincos(float64(float32(pos) * f))
		st.cos[i], st.sin[i] = float32(co), float32(s)
	}
	eps := float32(c.RMSEps)
	x := st.x
	if err := quant.Dequantize(m.emb.Type, x, m.emb.Row(token)); err != nil {
		panic(err)
	}
	for l := range m.layers {
		ly := &m.layers[l]
		rmsnorm(st.xb, x, ly.attnNorm, eps)
		matvec(st.q, ly.q, st.xb, ly.qBias)
		matvec(st.k, ly.k, st.xb, ly.kBias)
		matvec(st.v, ly.v, st.xb, ly.vBias)
		if ly.qNorm != nil {
			for h := 0; h < c.Heads; h++ {
				qh := st.q[h*c.HeadDim : (h+1)*c.HeadDim]
				rmsnorm(qh, qh, ly.qNorm, eps)
			}
			for h := 0; h < c.KVHeads; h++ {
				kh := st.k[h*c.HeadDim : (h+1)*c.HeadDim]
				rmsnorm(kh, kh, ly.kNorm, eps)
			}
		}
		rope(st.q, st.cos, st.sin)
		rope(st.k, st.cos, st.sin)
		st.cache.Append(l, pos, st.k, st.v)
		st.cache.Attend(l, pos, st.q, st.att)
		if st.Observe != nil {
			st.Observe(l, pos, st.q, st.k, st.v, st.att)
		}
		matvec(st.xb2, ly.o, st.att, ly.oBias)
		for i := range x {
			x[i] += st.xb2[i]
		}
		rmsnorm(st.xb, x, ly.ffnNorm, eps)
		matvec(st.hb, ly.gate, st.xb, nil)
		matvec(st.hb2, ly.up, st.xb, nil)
		for i, a := range st.hb {
			silu := a * (1 / (1 + float32(xmath.Exp(float64(-a)))))
			st.hb[i] = float32(silu * st.hb2[i])
		}
		matvec(st.xb, ly.down, st.hb, nil)
		for i := range x {
			x[i] += st.xb[i]
		}
	}
	rmsnorm(x, x, m.outputNorm, eps)
	matvec(st.logits, m.out, x, nil)
	return st.logits
}

// rope rotates the pairs (i, i + d/2) of every head of vec by the angles
// whose cosines and sines are cos and sin (d/2 each).
func rope(vec, cos, sin []float32) {
	half := len(cos)
	for h := 0; h+2*half <= len(vec); h += 2 * half {
		head := vec[h : h+2*half]
		for i := 0; i < half; i++ {
			c, s := cos[i], sin[i]
			v0, v1 := head[i], head[i+half]
			head[i] = float32(v0*c) - float32(v1*s)
			head[i+half] = float32(v0*s) + float32(v1*c)
		}
	}
}

// matvec sets out = w x (+ bias) from w's blocks.
func matvec(out []float32, w *model.Weight, x, bias []float32) {
	quant.MatVec(w.Type, out, w.Data, w.Rows, w.Cols, x)
	for i, b := range bias {
		out[i] += b
	}
}

// rmsnorm sets o = w * x / sqrt(mean(x^2) + eps); o may be x.
func rmsnorm(o, x, w []float32, eps float32) {
	var ss float32
	for _, v := range x {
		ss += float32(v * v)
	}
	ss /= float32(len(x))
	ss += eps
	ss = 1 / float32(math.Sqrt(float64(ss)))
	for j := range o {
		o[j] = float32(w[j] * float32(ss*x[j]))
	}
}

// Prefill runs tokens at positions pos, pos+1, ... layer by layer, each
// matrix multiplying all of them at once (quant.MatMul decodes every block
// once for the whole block of tokens), and returns the logits after the
// last token (owned by st). The results, the cache's contents and the
// observations (in layer-major order) have the bits of calling Forward
// for each token in turn.
func (m *Model) Prefill(tokens []int, pos int, st *State) []float32 {
	if len(tokens) == 0 {
		return nil
	}
	x := m.layersBlock(tokens, pos, st)
	rmsnorm(st.x, x[len(x)-m.cfg.Dim:], m.outputNorm, float32(m.cfg.RMSEps))
	matvec(st.logits, m.out, st.x, nil)
	return st.logits
}

// ForwardBlock is Prefill returning the logits after every token (owned by
// st, valid until its next ForwardBlock), the output matrix multiplying
// all of them at once: the bits of calling Forward for each token in turn.
func (m *Model) ForwardBlock(tokens []int, pos int, st *State) [][]float32 {
	n := len(tokens)
	if n == 0 {
		return nil
	}
	c := m.cfg
	x := m.layersBlock(tokens, pos, st)
	for t := 0; t < n; t++ {
		rmsnorm(x[t*c.Dim:(t+1)*c.Dim], x[t*c.Dim:(t+1)*c.Dim], m.outputNorm, float32(c.RMSEps))
	}
	if cap(st.block) < n*c.Vocab {
		st.block = make([]float32, n*c.Vocab)
	}
	out := st.block[:n*c.Vocab]
	matmul(out, m.out, x, n, nil)
	logits := make([][]float32, n)
	for t := range logits {
		logits[t] = out[t*c.Vocab : (t+1)*c.Vocab : (t+1)*c.Vocab]
	}
	return logits
}

// layersBlock runs tokens at positions pos, pos+1, ... through every
// layer, each matrix multiplying all of them at once, and returns the
// residual stream after the last layer (n x Dim).
func (m *Model) layersBlock(tokens []int, pos int, st *State) []float32 {
	c := m.cfg
	n := len(tokens)
	for _, tok := range tokens {
		if tok < 0 || tok >= c.Vocab {
			panic(fmt.Sprintf("transformer: Prefill: token %d outside the vocabulary [0, %d)", tok, c.Vocab))
		}
	}
	if pos < 0 || st.m != m {
		panic(fmt.Sprintf("transformer: Prefill: position %d, or a state of another model", pos))
	}
	qd, kvd, hd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.HeadDim
	eps := float32(c.RMSEps)
	x := make([]float32, n*c.Dim)
	xb := make([]float32, n*c.Dim)
	q, k, v := make([]float32, n*qd), make([]float32, n*kvd), make([]float32, n*kvd)
	att := make([]float32, n*qd)
	hb, hb2 := make([]float32, n*c.FFN), make([]float32, n*c.FFN)
	cos, sin := make([]float32, n*hd/2), make([]float32, n*hd/2)
	for t, tok := range tokens {
		if err := quant.Dequantize(m.emb.Type, x[t*c.Dim:(t+1)*c.Dim], m.emb.Row(tok)); err != nil {
			panic(err)
		}
		for i, f := range m.freq {
			s, co := xmath.Sincos(float64(float32(pos+t) * f))
			cos[t*hd/2+i], sin[t*hd/2+i] = float32(co), float32(s)
		}
	}
	rows := func(b []float32, t, w int) []float32 { return b[t*w : (t+1)*w] }
	for l := range m.layers {
		ly := &m.layers[l]
		for t := 0; t < n; t++ {
			rmsnorm(rows(xb, t, c.Dim), rows(x, t, c.Dim), ly.attnNorm, eps)
		}
		matmul(q, ly.q, xb, n, ly.qBias)
		matmul(k, ly.k, xb, n, ly.kBias)
		matmul(v, ly.v, xb, n, ly.vBias)
		for t := 0; t < n; t++ {
			qt, kt := rows(q, t, qd), rows(k, t, kvd)
			if ly.qNorm != nil {
				for h := 0; h < c.Heads; h++ {
					rmsnorm(qt[h*hd:(h+1)*hd], qt[h*hd:(h+1)*hd], ly.qNorm, eps)
				}
				for h := 0; h < c.KVHeads; h++ {
					rmsnorm(kt[h*hd:(h+1)*hd], kt[h*hd:(h+1)*hd], ly.kNorm, eps)
				}
			}
			rope(qt, rows(cos, t, hd/2), rows(sin, t, hd/2))
			rope(kt, rows(cos, t, hd/2), rows(sin, t, hd/2))
			st.cache.Append(l, pos+t, kt, rows(v, t, kvd))
			st.cache.Attend(l, pos+t, qt, rows(att, t, qd))
			if st.Observe != nil {
				st.Observe(l, pos+t, qt, kt, rows(v, t, kvd), rows(att, t, qd))
			}
		}
		matmul(xb, ly.o, att, n, ly.oBias)
		for i := range x {
			x[i] += xb[i]
		}
		for t := 0; t < n; t++ {
			rmsnorm(rows(xb, t, c.Dim), rows(x, t, c.Dim), ly.ffnNorm, eps)
		}
		matmul(hb, ly.gate, xb, n, nil)
		matmul(hb2, ly.up, xb, n, nil)
		for i, a := range hb {
			silu := a * (1 / (1 + float32(xmath.Exp(float64(-a)))))
			hb[i] = float32(silu * hb2[i])
		}
		matmul(xb, ly.down, hb, n, nil)
		for i := range x {
			x[i] += xb[i]
		}
	}
	return x
}

// matmul sets out[t] = w x[t] (+ bias) for the n vectors of x.
func matmul(out []float32, w *model.Weight, x []float32, n int, bias []float32) {
	quant.MatMul(w.Type, out, w.Data, w.Rows, w.Cols, x, n)
	if bias != nil {
		for t := 0; t < n; t++ {
			o := out[t*w.Rows : (t+1)*w.Rows]
			for i, b := range bias {
				o[i] += b
			}
		}
	}
}

// Decoder is a model as package eval (end-to-end evaluation) uses it: its
// shape and a forward pass over any KV cache.
type Decoder struct {
	m    *Model
	name string
}

// Decoder returns m as a Decoder named name (e.g. the checkpoint's file).
func (m *Model) Decoder(name string) Decoder { return Decoder{m, name} }

// Name is the name given to Decoder.
func (d Decoder) Name() string { return d.name }

// Shape is the attention geometry of the model's KV cache.
func (d Decoder) Shape() kvcache.Shape { return d.m.Shape() }

// Vocab is the number of tokens.
func (d Decoder) Vocab() int { return d.m.cfg.Vocab }

// Context is the context length the model was trained for.
func (d Decoder) Context() int { return d.m.cfg.Context }

// NewRun returns a forward pass attending to kv that calls observe (when not
// nil) in every layer.
func (d Decoder) NewRun(kv kvcache.Cache, observe kvcache.Observer) kvcache.Runner {
	st := d.m.NewState(kv)
	st.Observe = observe
	return &run{d.m, st}
}

// run is a State bound to its model.
type run struct {
	m  *Model
	st *State
}

func (r *run) Forward(token, pos int) []float32 { return r.m.Forward(token, pos, r.st) }

// ForwardBlock implements kvcache.BlockRunner (Model.ForwardBlock).
func (r *run) ForwardBlock(tokens []int, pos int) [][]float32 {
	return r.m.ForwardBlock(tokens, pos, r.st)
}
