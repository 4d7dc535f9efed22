// Package kvcache holds the key/value caches that a transformer's forward
// pass attends to: the dense cache of an ordinary run (Dense) and a cache
// whose prefix is a KV-compression method's compressed cache followed by the
// exact continuation (Compressed, HAE-OLS.md §8).
//
// Both compute attention with the same float32 operations in the same order
// as llama2.c's run.c (logit = dot(q, k) / sqrt(head size), a float32
// softmax, values accumulated key by key), so a Compressed cache whose
// prefix keeps every token exactly gives the Dense cache's outputs bit for
// bit. Keys are stored packed (kernel.PackKey) so that the logits of a KV
// head's query heads run one key per vector lane (kernel.KeyDots), and the
// values' sums one column per lane (kernel.WeightedRows), each sum still in
// run.c's order.
// Products are rounded explicitly (no fused multiply-add), so the results
// are the same natively and in WebAssembly.
package kvcache

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kernel"
	"github.com/haeols/haeols/core/xmath"
)

// Shape is the attention geometry of a model: layers, query heads, KV heads
// (grouped-query attention: query head h reads KV head h/(Heads/KVHeads))
// and the head size.
type Shape struct {
	Layers, Heads, KVHeads, HeadSize int
}

// KVDim is the width of one position's keys (or values) in a layer.
func (s Shape) KVDim() int { return s.KVHeads * s.HeadSize }

// Dim is the width of one position's queries (all heads) in a layer.
func (s Shape) Dim() int { return s.Heads * s.HeadSize }

// Validate checks that the shape is positive and that the query heads are
// a multiple of the KV heads.
func (s Shape) Validate() error {
	if s.Layers <= 0 || s.Heads <= 0 || s.KVHeads <= 0 || s.HeadSize <= 0 {
		return fmt.Errorf("kvcache: shape %+v: every size must be positive", s)
	}
	if s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("kvcache: shape %+v: %d query heads are not a multiple of %d KV heads", s, s.Heads, s.KVHeads)
	}
	return nil
}

// Cache is what a forward pass attends to. For each layer, a position's
// key and value are appended before its attention is computed, positions in
// increasing order.
type Cache interface {
	// Shape is the geometry the cache was made for.
	Shape() Shape
	// Append stores the key and value of position pos in layer l (KVDim
	// floats each, head by head); the slices are copied.
	Append(l, pos int, k, v []float32)
	// Attend sets out[h*HeadSize:(h+1)*HeadSize] to the attention output of
	// query head h (q[h*HeadSize:]) at position pos over the keys of layer l
	// the cache holds for positions up to pos, itself included.
	Attend(l, pos int, q, out []float32)
}

// Observer is called by a forward pass in every layer once the attention of
// position pos is computed: q (Dim) holds the post-RoPE queries of every
// head, k and v (KVDim) the post-RoPE key and the value of the position,
// out (Dim) the attention outputs. The slices are only valid during the
// call.
type Observer func(layer, pos int, q, k, v, out []float32)

// Dense is the uncompressed cache of positions 0 .. capacity-1.
type Dense struct {
	shape    Shape
	capacity int
	keys     []float32 // [Layers, KVHeads] packed arrays (kernel.PackKey) of capacity keys
	val      []float32 // [Layers, capacity, KVDim]
	att      []float32 // scratch, the query heads of a KV head x capacity
}

// NewDense returns an empty dense cache for up to capacity positions.
func NewDense(s Shape, capacity int) *Dense {
	n := s.Layers * capacity * s.KVDim()
	return &Dense{shape: s, capacity: capacity, keys: make([]float32, s.Layers*s.KVHeads*kernel.PackedLen(capacity, s.HeadSize)),
		val: make([]float32, n), att: make([]float32, s.Heads/max(s.KVHeads, 1)*capacity)}
}

// Shape implements Cache.
func (d *Dense) Shape() Shape { return d.shape }

// Capacity is the number of positions the cache can hold.
func (d *Dense) Capacity() int { return d.capacity }

// Append implements Cache; it panics when pos is outside the capacity.
func (d *Dense) Append(l, pos int, k, v []float32) {
	if pos < 0 || pos >= d.capacity {
		panic(fmt.Sprintf("kvcache: Dense.Append: position %d outside [0, %d)", pos, d.capacity))
	}
	kvDim := d.shape.KVDim()
	o := (l*d.capacity + pos) * kvDim
	packKeys(d.keys, l, d.shape, d.capacity, pos, k)
	copy(d.val[o:o+kvDim], v)
}

// Attend implements Cache.
func (d *Dense) Attend(l, pos int, q, out []float32) {
	s := d.shape
	hs, kvDim := s.HeadSize, s.KVDim()
	kvMul := s.Heads / s.KVHeads
	div := headDiv(hs)
	layer := l * d.capacity * kvDim
	n := pos + 1
	plen := kernel.PackedLen(d.capacity, hs)
	for kv := 0; kv < s.KVHeads; kv++ {
		// The query heads of this KV head, side by side in q.
		h0 := kv * kvMul
		att := d.att[:kvMul*n]
		kt := d.keys[(l*s.KVHeads+kv)*plen:]
		kernel.KeyDots(att, n, q[h0*hs:(h0+kvMul)*hs], kvMul, kt, n, hs)
		off := layer + kv*hs
		for j := 0; j < kvMul; j++ {
			row := att[j*n : (j+1)*n]
			for t := range row {
				row[t] /= div
			}
			Softmax(row)
			h := h0 + j
			o := out[h*hs : (h+1)*hs]
			clear(o)
			kernel.WeightedRows(o, row, d.val[off:], kvDim)
		}
	}
}

// packKeys stores the key k (KVDim floats, head by head) of position t as
// key t of each KV head's packed array of layer l in keys, whose arrays
// hold n keys each.
func packKeys(keys []float32, l int, s Shape, n, t int, k []float32) {
	hs := s.HeadSize
	plen := kernel.PackedLen(n, hs)
	for kv := 0; kv < s.KVHeads; kv++ {
		kernel.PackKey(keys[(l*s.KVHeads+kv)*plen:(l*s.KVHeads+kv+1)*plen], t, k[kv*hs:(kv+1)*hs])
	}
}

// Prefix is the compressed cache of one KV head's prefix: M rows of keys
// and values (M x HeadSize) that every later query attends to, the rows
// from Biased on carrying a logit bias (summary tokens: Bias[i-Biased] is
// added to row i's logit). Exact tokens come first, in position order, so a
// prefix of every token exactly (Biased = M, no Bias) is the dense cache.
type Prefix struct {
	Keys, Values []float32
	Biased       int
	Bias         []float32
}

// Rows is the number of rows M.
func (p *Prefix) Rows(headSize int) int { return len(p.Keys) / headSize }

// Compressed is a cache whose first N positions are replaced, per layer and
// KV head, by a Prefix, followed by the exact keys and values of positions
// N .. capacity-1. Reset empties the continuation, so one compressed prefix
// serves several runs.
type Compressed struct {
	shape    Shape
	n        int
	capacity int
	prefix   []Prefix    // [Layers * KVHeads]
	pkeys    [][]float32 // the prefixes' keys packed (kernel.PackKey)
	keys     []float32   // continuation: [Layers, KVHeads] packed arrays of capacity-n keys
	val      []float32   // continuation, [Layers, capacity-n, KVDim]
	att      []float32   // scratch, the query heads of a KV head x (prefix rows + continuation)
}

// NewCompressed returns the cache of a prefix of n positions compressed to
// prefix (one per layer and KV head, layer-major), to be continued up to
// position capacity-1. The Prefix slices are kept, not copied.
func NewCompressed(s Shape, n, capacity int, prefix []Prefix) (*Compressed, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if n < 0 || capacity < n {
		return nil, fmt.Errorf("kvcache: compressed cache of %d positions with capacity %d", n, capacity)
	}
	if len(prefix) != s.Layers*s.KVHeads {
		return nil, fmt.Errorf("kvcache: %d prefixes for %d layers x %d KV heads", len(prefix), s.Layers, s.KVHeads)
	}
	hs := s.HeadSize
	most := 0
	for i, p := range prefix {
		m := len(p.Keys) / hs
		switch {
		case len(p.Keys) != m*hs || len(p.Values) != len(p.Keys):
			return nil, fmt.Errorf("kvcache: prefix of layer %d KV head %d: %d key and %d value floats, want equal multiples of %d", i/s.KVHeads, i%s.KVHeads, len(p.Keys), len(p.Values), hs)
		case p.Biased < 0 || p.Biased > m || (p.Bias != nil && len(p.Bias) != m-p.Biased) || (p.Bias == nil && p.Biased != m):
			return nil, fmt.Errorf("kvcache: prefix of layer %d KV head %d: %d rows, biased from %d, %d biases", i/s.KVHeads, i%s.KVHeads, m, p.Biased, len(p.Bias))
		}
		most = max(most, m)
	}
	pkeys := make([][]float32, len(prefix))
	for i, p := range prefix {
		m := len(p.Keys) / hs
		pkeys[i] = make([]float32, kernel.PackedLen(m, hs))
		for t := 0; t < m; t++ {
			kernel.PackKey(pkeys[i], t, p.Keys[t*hs:(t+1)*hs])
		}
	}
	cont := (capacity - n) * s.Layers * s.KVDim()
	return &Compressed{shape: s, n: n, capacity: capacity, prefix: prefix, pkeys: pkeys,
		keys: make([]float32, s.Layers*s.KVHeads*kernel.PackedLen(capacity-n, hs)),
		val:  make([]float32, cont), att: make([]float32, s.Heads/s.KVHeads*(most+capacity-n))}, nil
}

// Shape implements Cache.
func (c *Compressed) Shape() Shape { return c.shape }

// PrefixLen is the number of positions the compressed prefix stands for.
func (c *Compressed) PrefixLen() int { return c.n }

// Reset forgets the continuation; the compressed prefix stays.
func (c *Compressed) Reset() {
	clear(c.keys)
	clear(c.val)
}

// Append implements Cache for a position of the continuation (N <= pos <
// capacity); it panics otherwise.
func (c *Compressed) Append(l, pos int, k, v []float32) {
	if pos < c.n || pos >= c.capacity {
		panic(fmt.Sprintf("kvcache: Compressed.Append: position %d outside the continuation [%d, %d)", pos, c.n, c.capacity))
	}
	kvDim := c.shape.KVDim()
	o := (l*(c.capacity-c.n) + pos - c.n) * kvDim
	packKeys(c.keys, l, c.shape, c.capacity-c.n, pos-c.n, k)
	copy(c.val[o:o+kvDim], v)
}

// Attend implements Cache: each query head sees its KV head's compressed
// prefix, then the continuation up to pos.
func (c *Compressed) Attend(l, pos int, q, out []float32) {
	s := c.shape
	hs, kvDim := s.HeadSize, s.KVDim()
	kvMul := s.Heads / s.KVHeads
	div := headDiv(hs)
	cont := l * (c.capacity - c.n) * kvDim
	nc := pos - c.n + 1
	plen := kernel.PackedLen(c.capacity-c.n, hs)
	for kv := 0; kv < s.KVHeads; kv++ {
		p := &c.prefix[l*s.KVHeads+kv]
		m := len(p.Keys) / hs
		w := m + nc // a head's row: the prefix's rows, then the continuation's
		h0 := kv * kvMul
		qs := q[h0*hs : (h0+kvMul)*hs]
		att := c.att[:kvMul*w]
		kernel.KeyDots(att, w, qs, kvMul, c.pkeys[l*s.KVHeads+kv], m, hs)
		kernel.KeyDots(att[m:], w, qs, kvMul, c.keys[(l*s.KVHeads+kv)*plen:], nc, hs)
		off := cont + kv*hs
		for j := 0; j < kvMul; j++ {
			row := att[j*w : (j+1)*w]
			for t := range row {
				row[t] /= div
			}
			for t := p.Biased; t < m; t++ {
				row[t] += p.Bias[t-p.Biased]
			}
			Softmax(row)
			h := h0 + j
			o := out[h*hs : (h+1)*hs]
			clear(o)
			if m > 0 {
				kernel.WeightedRows(o, row[:m], p.Values, hs)
			}
			kernel.WeightedRows(o, row[m:], c.val[off:], kvDim)
		}
	}
}

// headDiv is sqrt(head size) in float32, the divisor of the logits.
func headDiv(hs int) float32 { return float32(math.Sqrt(float64(hs))) }

// Softmax replaces x by its softmax in float32, as llama2.c's run.c does:
// subtract the maximum, exponentiate, divide by the sum.
func Softmax(x []float32) {
	maxv := x[0]
	for _, v := range x[1:] {
		if v > maxv {
			maxv = v
		}
	}
	var sum float32
	for i, v := range x {
		e := float32(xmath.Exp(float64(v - maxv)))
		x[i] = e
		sum += e
	}
	for i := range x {
		x[i] /= sum
	}
}

// Runner runs one token at a position through a model whose forward pass
// attends to a Cache, and returns the logits of the next token (owned by the
// runner, valid until its next call).
type Runner interface {
	Forward(token, pos int) []float32
}

// BlockRunner is a Runner that can also run several tokens at consecutive
// positions at once, with the same results as Forward on each in turn.
type BlockRunner interface {
	Runner
	// ForwardBlock runs tokens at positions pos, pos+1, ... and returns the
	// logits after each (owned by the runner, valid until its next call).
	ForwardBlock(tokens []int, pos int) [][]float32
}
