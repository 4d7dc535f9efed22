package llama

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/xmath"
)

// State is the activations and the KV cache of one sequence being run
// through a model. It belongs to the Config it was made for.
type State struct {
	cfg Config

	x, xb, xb2, hb, hb2, q []float32
	k, v                   []float32 // the current position's key and value, [kv_dim]
	logits                 []float32
	cos, sin               []float32 // RoPE of the current position, [head_size/2]
	kv                     kvcache.Cache

	// Observe, when set, is called by Forward in every layer once the
	// attention of position pos is computed, before the output projection:
	// q [dim] holds the post-RoPE queries of all heads (head h at
	// q[h*head_size:]), k and v [kv_dim] the post-RoPE key and the value
	// of this position for every KV head, and out [dim] the attention output
	// of every query head (sum over the cached positions t <= pos of
	// softmax(q.k_t/sqrt(d)) v_t). The slices are only valid during the
	// call.
	Observe kvcache.Observer
}

// Shape is the attention geometry of the model's KV cache.
func (c Config) Shape() kvcache.Shape {
	return kvcache.Shape{Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, HeadSize: c.HeadSize()}
}

// NewState allocates the activations and a dense KV cache for the full
// context of a sequence run through m.
func (m *Model) NewState() *State {
	return m.NewStateCache(kvcache.NewDense(m.cfg.Shape(), m.cfg.SeqLen))
}

// NewStateCache allocates the activations of a sequence run through m that
// attends to kv, e.g. a compressed prefix cache (kvcache.Compressed). It
// panics if kv was made for another shape.
func (m *Model) NewStateCache(kv kvcache.Cache) *State {
	c := m.cfg
	if kv.Shape() != c.Shape() {
		panic(fmt.Sprintf("llama: NewStateCache: cache of shape %+v, model %+v", kv.Shape(), c.Shape()))
	}
	return &State{
		cfg:    c,
		x:      make([]float32, c.Dim),
		xb:     make([]float32, c.Dim),
		xb2:    make([]float32, c.Dim),
		hb:     make([]float32, c.HiddenDim),
		hb2:    make([]float32, c.HiddenDim),
		q:      make([]float32, c.Dim),
		k:      make([]float32, c.KVDim()),
		v:      make([]float32, c.KVDim()),
		logits: make([]float32, c.Vocab),
		cos:    make([]float32, c.HeadSize()/2),
		sin:    make([]float32, c.HeadSize()/2),
		kv:     kv,
	}
}

// Cache is the KV cache the state attends to.
func (st *State) Cache() kvcache.Cache { return st.kv }

// Forward runs token at position pos through the model, appending its key
// and value to st's cache (st.Cache()), and returns the logits of the next token (a
// slice owned by st, overwritten by the next call). Positions must be fed in
// order (0, 1, 2, ... for a dense cache; from the compressed prefix's
// length on for a compressed one). It follows llama2.c's run.c operation
// for operation in float32: RMSNorm (eps 1e-5), RoPE on pairs (i, i+1) of
// each head, causal softmax attention scaled by 1/sqrt(head_size) with
// grouped KV heads (package kvcache), SwiGLU feed-forward, residuals,
// final RMSNorm and the classifier. It panics if token or pos is out of
// range or st was made for another configuration.
func (m *Model) Forward(token, pos int, st *State) []float32 {
	c := m.cfg
	if token < 0 || token >= c.Vocab {
		panic(fmt.Sprintf("llama: Forward: token %d outside the vocabulary [0, %d)", token, c.Vocab))
	}
	if pos < 0 || pos >= c.SeqLen {
		panic(fmt.Sprintf("llama: Forward: position %d outside the context [0, %d)", pos, c.SeqLen))
	}
	if st.cfg != c {
		panic(fmt.Sprintf("llama: Forward: state made for %v, model is %v", st.cfg, c))
	}
	dim, hid, kvDim := c.Dim, c.HiddenDim, c.KVDim()

	for j, f := range m.freq {
		s, co := xmath.Sincos(float64(float32(pos) * f))
		st.cos[j], st.sin[j] = float32(co), float32(s)
	}

	x := st.x
	copy(x, m.emb[token*dim:(token+1)*dim])
	for l := 0; l < c.Layers; l++ {
		rmsnorm(st.xb, x, m.rmsAtt[l*dim:(l+1)*dim])

		k, v := st.k, st.v
		matvec(st.q, m.wq[l*dim*dim:(l+1)*dim*dim], st.xb)
		matvec(k, m.wk[l*kvDim*dim:(l+1)*kvDim*dim], st.xb)
		matvec(v, m.wv[l*kvDim*dim:(l+1)*kvDim*dim], st.xb)
		st.rope(st.q)
		st.rope(k)
		st.kv.Append(l, pos, k, v)
		st.kv.Attend(l, pos, st.q, st.xb)
		if st.Observe != nil {
			st.Observe(l, pos, st.q, k, v, st.xb)
		}
		matvec(st.xb2, m.wo[l*dim*dim:(l+1)*dim*dim], st.xb)
		for i := range x {
			x[i] += st.xb2[i]
		}

		rmsnorm(st.xb, x, m.rmsFFN[l*dim:(l+1)*dim])
		matvec(st.hb, m.w1[l*hid*dim:(l+1)*hid*dim], st.xb)
		matvec(st.hb2, m.w3[l*hid*dim:(l+1)*hid*dim], st.xb)
		for i, a := range st.hb {
			silu := a * (1 / (1 + float32(xmath.Exp(float64(-a)))))
			st.hb[i] = silu * st.hb2[i]
		}
		matvec(st.xb, m.w2[l*dim*hid:(l+1)*dim*hid], st.hb)
		for i := range x {
			x[i] += st.xb[i]
		}
	}
	rmsnorm(x, x, m.rmsFinal)
	matvec(st.logits, m.wcls, x)
	return st.logits
}

// rope rotates each pair (i, i+1) of every head of vec by the angles of the
// current position.
func (st *State) rope(vec []float32) {
	half := len(st.cos)
	for i := 0; i+1 < len(vec); i += 2 {
		j := (i / 2) % half
		fcr, fci := st.cos[j], st.sin[j]
		v0, v1 := vec[i], vec[i+1]
		vec[i] = float32(v0*fcr) - float32(v1*fci)
		vec[i+1] = float32(v0*fci) + float32(v1*fcr)
	}
}

// matvec sets out[i] = dot(w[i*n:(i+1)*n], x) for the len(out) rows of the
// row-major w, n = len(x), with four accumulators. Products are explicitly
// rounded so that no platform fuses them into FMAs (identical bits
// everywhere).
func matvec(out, w, x []float32) {
	n := len(x)
	for i := range out {
		row := w[i*n : (i+1)*n : (i+1)*n]
		var a0, a1, a2, a3 float32
		j := 0
		for ; j+4 <= n; j += 4 {
			r := row[j : j+4 : j+4]
			xx := x[j : j+4 : j+4]
			a0 += float32(r[0] * xx[0])
			a1 += float32(r[1] * xx[1])
			a2 += float32(r[2] * xx[2])
			a3 += float32(r[3] * xx[3])
		}
		for ; j < n; j++ {
			a0 += float32(row[j] * x[j])
		}
		out[i] = (a0 + a1) + (a2 + a3)
	}
}

// rmsnorm sets o = w * x / sqrt(mean(x^2) + 1e-5); o may be x.
func rmsnorm(o, x, w []float32) {
	var ss float32
	for _, v := range x {
		ss += float32(v * v)
	}
	ss /= float32(len(x))
	ss += 1e-5
	ss = 1 / float32(math.Sqrt(float64(ss)))
	for j := range o {
		o[j] = w[j] * (ss * x[j])
	}
}

// Decoder is a model as package eval (end-to-end evaluation) and the
// browser's worker use it: its shape and a forward pass over any KV cache.
type Decoder struct{ m *Model }

// Decoder returns m as a Decoder.
func (m *Model) Decoder() Decoder { return Decoder{m} }

// Name is the checkpoint's base name.
func (d Decoder) Name() string { return d.m.Name }

// Shape is the attention geometry of the model's KV cache.
func (d Decoder) Shape() kvcache.Shape { return d.m.cfg.Shape() }

// Vocab is the number of tokens.
func (d Decoder) Vocab() int { return d.m.cfg.Vocab }

// Context is the longest sequence the model runs (seq_len).
func (d Decoder) Context() int { return d.m.cfg.SeqLen }

// NewRun returns a forward pass attending to kv that calls observe (when not
// nil) in every layer, as State.Observe.
func (d Decoder) NewRun(kv kvcache.Cache, observe kvcache.Observer) kvcache.Runner {
	st := d.m.NewStateCache(kv)
	st.Observe = observe
	return &run{d.m, st}
}

// run is a State bound to its model.
type run struct {
	m  *Model
	st *State
}

func (r *run) Forward(token, pos int) []float32 { return r.m.Forward(token, pos, r.st) }
