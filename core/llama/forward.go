package llama

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kernel"
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
	blk                    *blockBufs // ForwardBlock's, made on first use

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

// ForwardBlock runs tokens at positions pos, pos+1, ... through the model
// and returns the logits after each (rows of a slice owned by st,
// overwritten by the next call): the same bits as Forward on each token in
// turn, computed layer by layer for all of them so that every weight is
// read once per block instead of once per token. Observe is called for
// every position of a layer before the next layer. It panics as Forward
// does.
func (m *Model) ForwardBlock(tokens []int, pos int, st *State) [][]float32 {
	c := m.cfg
	nb := len(tokens)
	if nb == 0 {
		return nil
	}
	for i, t := range tokens {
		if t < 0 || t >= c.Vocab {
			panic(fmt.Sprintf("llama: ForwardBlock: token %d outside the vocabulary [0, %d)", t, c.Vocab))
		}
		if p := pos + i; p < 0 || p >= c.SeqLen {
			panic(fmt.Sprintf("llama: ForwardBlock: position %d outside the context [0, %d)", p, c.SeqLen))
		}
	}
	if st.cfg != c {
		panic(fmt.Sprintf("llama: ForwardBlock: state made for %v, model is %v", st.cfg, c))
	}
	dim, hid, kvDim := c.Dim, c.HiddenDim, c.KVDim()
	b := st.block(nb)
	half := len(st.cos)
	for r := 0; r < nb; r++ {
		for j, f := range m.freq {
			s, co := xmath.Sincos(float64(float32(pos+r) * f))
			b.cos[r*half+j], b.sin[r*half+j] = float32(co), float32(s)
		}
		copy(b.x[r*dim:(r+1)*dim], m.emb[tokens[r]*dim:(tokens[r]+1)*dim])
	}
	rows := func(x []float32, w int, r int) []float32 { return x[r*w : (r+1)*w] }
	for l := 0; l < c.Layers; l++ {
		for r := 0; r < nb; r++ {
			rmsnorm(rows(b.xb, dim, r), rows(b.x, dim, r), m.rmsAtt[l*dim:(l+1)*dim])
		}
		matmul(b.q, m.wq[l*dim*dim:(l+1)*dim*dim], b.xb, nb)
		matmul(b.k, m.wk[l*kvDim*dim:(l+1)*kvDim*dim], b.xb, nb)
		matmul(b.v, m.wv[l*kvDim*dim:(l+1)*kvDim*dim], b.xb, nb)
		for r := 0; r < nb; r++ {
			cs, sn := rows(b.cos, half, r), rows(b.sin, half, r)
			rope(rows(b.q, dim, r), cs, sn)
			rope(rows(b.k, kvDim, r), cs, sn)
			st.kv.Append(l, pos+r, rows(b.k, kvDim, r), rows(b.v, kvDim, r))
		}
		for r := 0; r < nb; r++ {
			st.kv.Attend(l, pos+r, rows(b.q, dim, r), rows(b.xb, dim, r))
			if st.Observe != nil {
				st.Observe(l, pos+r, rows(b.q, dim, r), rows(b.k, kvDim, r), rows(b.v, kvDim, r), rows(b.xb, dim, r))
			}
		}
		matmul(b.xb2, m.wo[l*dim*dim:(l+1)*dim*dim], b.xb, nb)
		for i := range b.x {
			b.x[i] += b.xb2[i]
		}
		for r := 0; r < nb; r++ {
			rmsnorm(rows(b.xb, dim, r), rows(b.x, dim, r), m.rmsFFN[l*dim:(l+1)*dim])
		}
		matmul(b.hb, m.w1[l*hid*dim:(l+1)*hid*dim], b.xb, nb)
		matmul(b.hb2, m.w3[l*hid*dim:(l+1)*hid*dim], b.xb, nb)
		for i, a := range b.hb {
			silu := a * (1 / (1 + float32(xmath.Exp(float64(-a)))))
			b.hb[i] = silu * b.hb2[i]
		}
		matmul(b.xb, m.w2[l*dim*hid:(l+1)*dim*hid], b.hb, nb)
		for i := range b.x {
			b.x[i] += b.xb[i]
		}
	}
	for r := 0; r < nb; r++ {
		x := rows(b.x, dim, r)
		rmsnorm(x, x, m.rmsFinal)
	}
	matmul(b.logits, m.wcls, b.x, nb)
	out := make([][]float32, nb)
	for r := range out {
		out[r] = rows(b.logits, c.Vocab, r)
	}
	return out
}

// blockBufs are the activations of a block of positions, row by row.
type blockBufs struct {
	x, xb, xb2, q, k, v, hb, hb2, logits, cos, sin []float32
}

// block returns st's block buffers for nb positions, growing them once.
func (st *State) block(nb int) *blockBufs {
	c := st.cfg
	b := st.blk
	if b == nil || len(b.x) < nb*c.Dim {
		hs2 := c.HeadSize() / 2
		b = &blockBufs{
			x: make([]float32, nb*c.Dim), xb: make([]float32, nb*c.Dim), xb2: make([]float32, nb*c.Dim),
			q: make([]float32, nb*c.Dim), k: make([]float32, nb*c.KVDim()), v: make([]float32, nb*c.KVDim()),
			hb: make([]float32, nb*c.HiddenDim), hb2: make([]float32, nb*c.HiddenDim), logits: make([]float32, nb*c.Vocab),
			cos: make([]float32, nb*hs2), sin: make([]float32, nb*hs2),
		}
		st.blk = b
	}
	hs2 := c.HeadSize() / 2
	return &blockBufs{
		x: b.x[:nb*c.Dim], xb: b.xb[:nb*c.Dim], xb2: b.xb2[:nb*c.Dim], q: b.q[:nb*c.Dim],
		k: b.k[:nb*c.KVDim()], v: b.v[:nb*c.KVDim()], hb: b.hb[:nb*c.HiddenDim], hb2: b.hb2[:nb*c.HiddenDim],
		logits: b.logits[:nb*c.Vocab], cos: b.cos[:nb*hs2], sin: b.sin[:nb*hs2],
	}
}

// rope rotates each pair (i, i+1) of every head of vec by the angles of the
// current position.
func (st *State) rope(vec []float32) { rope(vec, st.cos, st.sin) }

// rope rotates each pair (i, i+1) of every head of vec by the angles whose
// cosines and sines are cos and sin (one per pair of a head).
func rope(vec, cos, sin []float32) {
	half := len(cos)
	for i := 0; i+1 < len(vec); i += 2 {
		j := (i / 2) % half
		fcr, fci := cos[j], sin[j]
		v0, v1 := vec[i], vec[i+1]
		vec[i] = float32(v0*fcr) - float32(v1*fci)
		vec[i+1] = float32(v0*fci) + float32(v1*fcr)
	}
}

// matvec sets out[i] = kernel.Dot4(w[i*n:(i+1)*n], x) for the len(out)
// rows of the row-major w, n = len(x): llama2.c's order of the sum (four
// accumulators), in a vector register where the build has one (the same
// bits everywhere).
func matvec(out, w, x []float32) { kernel.MatVec4(out, w, x) }

// matmul is matvec of the nb rows of x at once (kernel.MatMul4): each
// weight row is read once for all of them, with the same bits.
func matmul(out, w, x []float32, nb int) { kernel.MatMul4(out, w, x, nb) }

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

// ForwardBlock implements kvcache.BlockRunner.
func (r *run) ForwardBlock(tokens []int, pos int) [][]float32 {
	return r.m.ForwardBlock(tokens, pos, r.st)
}
