// Package sample defines the haeols sample (the q/k/v or attention tensors of
// a model run plus metadata) and reads and writes it in the formats of
// HAE-OLS.md §6.
//
// Read and Decode take safetensors (F32, F16, BF16 or F64), .npz and .npy;
// they check every size a header claims before allocating, never panic on
// hostile input, and return only samples that pass Validate. DecodeLazy
// checks a file as Decode does but widens a 16-bit safetensors file's q, k
// and v one KV head at a time, when first read. WriteSafetensors
// and WriteFile write safetensors (F32, F16 or BF16), deterministically.
// Summary describes a sample for people. Every error is an *Error naming the
// file, the tensor or metadata key, and the problem.
package sample

import (
	"fmt"
	"math"
	"sort"
	"unicode/utf8"
)

// Format is the value of the haeols.format metadata key this package writes.
const Format = "1"

// Limits on what a reader accepts, checked before any large allocation.
const (
	// MaxElements is the most elements a sample may hold, its tensors
	// together (4 GiB of float32); readers check it before allocating, and
	// Validate checks it too.
	MaxElements = 1 << 30
	// MaxDim is the largest single dimension a reader accepts.
	MaxDim = 1 << 22
)

// Sample is one model run: per layer and head, the post-RoPE queries, keys and
// values of N positions (the first Prefix of them are the cache to compress,
// the rest are held-out probe queries), and/or attention probabilities.
//
// Tensors are flattened row-major float32: Q is [L, H, N, D], K and V are
// [L, HKV, N, D], Attn (optional) is [L, H, N, N]. H is a multiple of HKV and
// query head h uses KV head h / (H/HKV).
type Sample struct {
	L, H, HKV, N, D int
	Q, K, V         []float32
	Attn            []float32
	Meta            Meta

	// SourceDType is the dtype the tensors had in the file they were read
	// from: "F32", "F16", "BF16" or "F64", or one entry per tensor such as
	// "attn=F32 k=F16 q=F16 v=F16" when they differ. It is empty for a sample
	// made in memory, is only informational, and is not written back.
	SourceDType string

	lazy *lazyQKV // what DecodeLazy left to widen; nil: nothing
}

// Meta is the sample's __metadata__ (HAE-OLS.md §6), decoded.
type Meta struct {
	Model       string
	Source      string // how it was made, e.g. "generator needle seed=7"
	Description string
	// Prefix is n, the number of cached positions; 0 means the default
	// N - min(64, N/8). Negative is invalid.
	Prefix int
	// Scale is the logit scale; 0 means 1/sqrt(D).
	Scale float64
	// Tokens holds one display string per position (optional).
	Tokens []string
	// Needles are needle token positions in the prefix (optional).
	Needles []int
	// NeedleProbes are probe indices (0-based, counted from Prefix) that ask
	// for a needle (optional).
	NeedleProbes []int
	// Extra keeps any other metadata keys, written back unchanged. It must not
	// hold the keys above or "haeols.format" (see ReservedKeys).
	Extra map[string]string
}

// HasQKV reports whether the sample carries q, k and v (needed by every
// method that reconstructs attention outputs).
func (s *Sample) HasQKV() bool { return len(s.Q) > 0 && len(s.K) > 0 && len(s.V) > 0 }

// HasAttn reports whether the sample carries attention probabilities.
func (s *Sample) HasAttn() bool { return len(s.Attn) > 0 }

// Prefix returns n, the number of cached (compressible) positions.
func (s *Sample) Prefix() int {
	if s.Meta.Prefix > 0 {
		return s.Meta.Prefix
	}
	return DefaultPrefix(s.N)
}

// DefaultPrefix is the prefix length used when the metadata gives none:
// N - min(64, N/8).
func DefaultPrefix(n int) int { return n - min(64, n/8) }

// Scale returns the logit scale: the metadata's, or 1/sqrt(D).
func (s *Sample) Scale() float64 {
	if s.Meta.Scale > 0 {
		return s.Meta.Scale
	}
	return 1 / math.Sqrt(float64(s.D))
}

// KVHeads is the number of KV heads the cache is compressed by: HKV, or H
// for an attention-only sample, which says nothing about KV sharing, so each
// query head counts as its own group.
func (s *Sample) KVHeads() int {
	if !s.HasQKV() {
		return s.H
	}
	return s.HKV
}

// Group is the number of query heads that share one KV head (1 for an
// attention-only sample).
func (s *Sample) Group() int { return s.H / s.KVHeads() }

// KVHeadOf returns the KV head that query head h uses.
func (s *Sample) KVHeadOf(h int) int { return h / s.Group() }

// QHead returns the [N, D] queries of query head h in layer l (a view;
// widened first in a lazy sample, see DecodeLazy).
func (s *Sample) QHead(l, h int) []float32 {
	if s.lazy != nil {
		s.widen(l, h/(s.H/s.HKV))
	}
	o := ((l*s.H + h) * s.N) * s.D
	return s.Q[o : o+s.N*s.D]
}

// KHead returns the [N, D] keys of KV head kv in layer l (a view; widened
// first in a lazy sample).
func (s *Sample) KHead(l, kv int) []float32 {
	s.widen(l, kv)
	o := ((l*s.HKV + kv) * s.N) * s.D
	return s.K[o : o+s.N*s.D]
}

// VHead returns the [N, D] values of KV head kv in layer l (a view;
// widened first in a lazy sample).
func (s *Sample) VHead(l, kv int) []float32 {
	s.widen(l, kv)
	o := ((l*s.HKV + kv) * s.N) * s.D
	return s.V[o : o+s.N*s.D]
}

// AttnHead returns the [N, N] attention of query head h in layer l (a view).
func (s *Sample) AttnHead(l, h int) []float32 {
	o := (l*s.H + h) * s.N * s.N
	return s.Attn[o : o+s.N*s.N]
}

// Validate checks that the sample is whole and consistent: positive
// dimensions within MaxDim, tensors within MaxElements, q, k and v all present
// or all absent (and at least they or attn), tensor lengths matching the shape,
// H a multiple of HKV, every number finite, and the metadata in range (prefix
// in [2, N], scale finite and not negative, one token per position, needles in
// the prefix, needle probes among the probes, metadata strings valid UTF-8, no
// reserved key in Extra), and attn made of probability rows (values in [0, 1]
// summing to 1 within RowSumTolerance).
//
// Its error is an *Error naming the tensor or metadata key at fault.
func (s *Sample) Validate() error {
	_, err := s.ValidateMaxima()
	return err
}

// Maxima are the largest magnitudes of the heads of a q/k/v sample, as
// MaxMag gives them (the float32 bits without the sign): Q[l*H+h] of
// query head h in layer l, K[l*HKV+kv] and V[l*HKV+kv] of KV head kv.
type Maxima struct {
	Q, K, V []uint32
}

// ValidateMaxima is Validate, and for a valid q/k/v sample it also
// returns the largest magnitude of each head, taken in the same pass over
// the numbers as the check that they are finite (nil for an
// attention-only sample).
func (s *Sample) ValidateMaxima() (*Maxima, error) {
	if s.L <= 0 || s.H <= 0 || s.N <= 0 {
		return nil, &Error{Err: fmt.Errorf("bad shape L=%d H=%d N=%d: every dimension must be positive", s.L, s.H, s.N)}
	}
	if s.L > MaxDim || s.H > MaxDim || s.N > MaxDim || s.D > MaxDim || s.HKV > MaxDim || s.D < 0 || s.HKV < 0 {
		return nil, &Error{Err: fmt.Errorf("absurd shape L=%d H=%d HKV=%d N=%d D=%d (each dimension at most %d)", s.L, s.H, s.HKV, s.N, s.D, MaxDim)}
	}
	hasQ, hasK, hasV := len(s.Q) > 0, len(s.K) > 0, len(s.V) > 0
	if hasQ != hasK || hasQ != hasV {
		missing := "q"
		if !hasK {
			missing = "k"
		} else if !hasV {
			missing = "v"
		}
		return nil, &Error{Tensor: missing, Err: fmt.Errorf("missing: q, k and v go together (have q=%t k=%t v=%t)", hasQ, hasK, hasV)}
	}
	if !hasQ && !s.HasAttn() {
		return nil, &Error{Err: fmt.Errorf("neither q/k/v nor attn present")}
	}
	type tensor struct {
		name  string
		x     []float32
		shape []int
		heads []uint32 // its heads' maxima
	}
	var (
		ts []tensor
		mx *Maxima
	)
	if hasQ {
		if s.D <= 0 || s.HKV <= 0 || s.H%s.HKV != 0 {
			return nil, &Error{Err: fmt.Errorf("query heads %d not a multiple of KV heads %d (d=%d)", s.H, s.HKV, s.D)}
		}
		ts = append(ts,
			tensor{"q", s.Q, []int{s.L, s.H, s.N, s.D}, nil},
			tensor{"k", s.K, []int{s.L, s.HKV, s.N, s.D}, nil},
			tensor{"v", s.V, []int{s.L, s.HKV, s.N, s.D}, nil})
	}
	if s.HasAttn() {
		ts = append(ts, tensor{"attn", s.Attn, []int{s.L, s.H, s.N, s.N}, nil})
	}
	total := 0
	for _, t := range ts {
		want := elements(t.shape)
		if want < 0 {
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("shape %v has more than MaxElements = %d elements", t.shape, MaxElements)}
		}
		if len(t.x) != want {
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("has %d elements, shape %v needs %d", len(t.x), t.shape, want)}
		}
		total += want
	}
	if total > MaxElements {
		return nil, &Error{Err: fmt.Errorf("the tensors hold %d elements in all, more than MaxElements = %d", total, MaxElements)}
	}
	if err := s.validateMeta(); err != nil {
		return nil, err
	}
	if s.lazy != nil {
		if mx := s.lazy.maxima(s); mx != nil {
			return mx, nil
		}
		s.Widen() // a value is not finite: the check below names it
	}
	if hasQ {
		// Sized now that the tensors are known to hold N x D per head.
		mx = &Maxima{Q: make([]uint32, s.L*s.H), K: make([]uint32, s.L*s.HKV), V: make([]uint32, s.L*s.HKV)}
		ts[0].heads, ts[1].heads, ts[2].heads = mx.Q, mx.K, mx.V
	}
	for _, t := range ts {
		if i := headMaxima(t.x, t.heads); i >= 0 {
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("non-finite value %v at %v (flat index %d)", t.x[i], unflatten(i, t.shape), i)}
		}
	}
	if s.HasAttn() {
		if err := checkProbabilities(s.Attn, []int{s.L, s.H, s.N, s.N}); err != nil {
			return nil, err
		}
	}
	return mx, nil
}

// headMaxima sets heads[i] to the largest magnitude (MaxMag) of the i-th
// of len(heads) equal parts of x and returns -1, or returns the index of
// the first NaN or infinity in x (then heads is unspecified). With no
// heads it only looks for the first NaN or infinity.
func headMaxima(x []float32, heads []uint32) int {
	if len(heads) == 0 {
		return FirstNonFinite(x)
	}
	size := len(x) / len(heads)
	for h := range heads {
		part := x[h*size : (h+1)*size]
		var m uint32
		for off := 0; off < len(part); off += scanBlock {
			// A block at a time, as FirstNonFinite.
			m = max(m, MaxMag(part[off:min(off+scanBlock, len(part))]))
		}
		if m >= 0x7f800000 {
			return h*size + FirstNonFinite(part)
		}
		heads[h] = m
	}
	return -1
}

// RowSumTolerance is how far a row of attention probabilities may sum from 1
// (BF16 storage alone moves a sum by at most about 0.004).
const RowSumTolerance = 0.01

// checkProbabilities checks that attn, of shape [L, H, N, N], holds rows of
// attention probabilities: values in [0, 1] summing to 1 within
// RowSumTolerance.
func checkProbabilities(attn []float32, shape []int) error {
	for i, p := range attn {
		if p < 0 || p > 1 {
			return &Error{Tensor: "attn", Err: fmt.Errorf("value %v at %v (flat index %d) is not a probability (attn must hold softmax rows)", p, unflatten(i, shape), i)}
		}
	}
	n := shape[3]
	for r := 0; r*n < len(attn); r++ {
		sum := 0.0
		for _, p := range attn[r*n : r*n+n] {
			sum += float64(p)
		}
		if math.Abs(sum-1) > RowSumTolerance {
			return &Error{Tensor: "attn", Err: fmt.Errorf("row %v sums to %.6g, want 1 ± %g (attn must hold softmax rows)", unflatten(r*n, shape)[:3], sum, RowSumTolerance)}
		}
	}
	return nil
}

// ReservedKeys are the metadata keys that Meta's named fields (and the format
// marker) stand for; Meta.Extra must not hold them.
var ReservedKeys = []string{
	KeyFormat, KeyModel, KeySource, KeyDescription, KeyPrefix, KeyScale,
	KeyTokens, KeyNeedles, KeyNeedleProbes,
}

// The __metadata__ keys of HAE-OLS.md §6.
const (
	KeyFormat       = "haeols.format"
	KeyModel        = "model"
	KeySource       = "source"
	KeyDescription  = "description"
	KeyPrefix       = "prefix"
	KeyScale        = "scale"
	KeyTokens       = "tokens"
	KeyNeedles      = "needles"
	KeyNeedleProbes = "needle_probes"
)

func (s *Sample) validateMeta() error {
	m := &s.Meta
	if m.Prefix < 0 {
		return &Error{Key: KeyPrefix, Err: fmt.Errorf("negative prefix %d", m.Prefix)}
	}
	n := s.Prefix()
	if n < 2 || n > s.N {
		return &Error{Key: KeyPrefix, Err: fmt.Errorf("prefix %d out of range [2, N=%d]", n, s.N)}
	}
	if m.Scale < 0 || math.IsNaN(m.Scale) || math.IsInf(m.Scale, 0) {
		return &Error{Key: KeyScale, Err: fmt.Errorf("bad scale %v: want a positive finite number (or 0 for 1/sqrt(d))", m.Scale)}
	}
	if m.Tokens != nil && len(m.Tokens) != s.N {
		return &Error{Key: KeyTokens, Err: fmt.Errorf("%d tokens for N=%d positions", len(m.Tokens), s.N)}
	}
	for _, p := range m.Needles {
		if p < 0 || p >= n {
			return &Error{Key: KeyNeedles, Err: fmt.Errorf("needle position %d outside the prefix [0, %d)", p, n)}
		}
	}
	for _, p := range m.NeedleProbes {
		if p < 0 || p >= s.N-n {
			return &Error{Key: KeyNeedleProbes, Err: fmt.Errorf("needle probe %d outside the probes [0, %d)", p, s.N-n)}
		}
	}
	if err := checkUTF8(m); err != nil {
		return err
	}
	for _, k := range ReservedKeys {
		if _, ok := m.Extra[k]; ok {
			return &Error{Key: k, Err: fmt.Errorf("reserved key in Meta.Extra; use the Meta field")}
		}
	}
	return nil
}

// checkUTF8 checks that every metadata string is valid UTF-8, as the JSON of
// a safetensors header must be.
func checkUTF8(m *Meta) error {
	for _, f := range []struct{ key, v string }{
		{KeyModel, m.Model}, {KeySource, m.Source}, {KeyDescription, m.Description},
	} {
		if !utf8.ValidString(f.v) {
			return &Error{Key: f.key, Err: fmt.Errorf("%q is not valid UTF-8", f.v)}
		}
	}
	for i, t := range m.Tokens {
		if !utf8.ValidString(t) {
			return &Error{Key: KeyTokens, Err: fmt.Errorf("token %d %q is not valid UTF-8", i, t)}
		}
	}
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := m.Extra[k]; !utf8.ValidString(k) || !utf8.ValidString(v) {
			return &Error{Key: k, Err: fmt.Errorf("key or value %q is not valid UTF-8", v)}
		}
	}
	return nil
}

// elements returns the product of dims, or -1 if a dimension is negative or
// the product exceeds MaxElements. It never overflows.
func elements(dims []int) int {
	p := 1
	for _, d := range dims {
		if d < 0 || d > 0 && p > MaxElements/d {
			return -1
		}
		p *= d
	}
	return p
}

// unflatten returns the multi-index of flat index i in a row-major shape.
func unflatten(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}

// FirstNonFinite returns the index of the first NaN or infinity in x, or
// -1. It looks at x a block at a time: a block whose largest magnitude
// (MaxMag) is finite holds none, and only a block that holds one is
// searched element by element. (Many calls on short blocks rather than one
// long loop also let WebAssembly engines optimise the loop early: V8 runs
// a function's first calls in its baseline compiler and cannot swap the
// optimised code into a loop that is running.)
func FirstNonFinite(x []float32) int {
	for off := 0; off < len(x); off += scanBlock {
		b := x[off:min(off+scanBlock, len(x))]
		if MaxMag(b) < 0x7f800000 {
			continue
		}
		for i, v := range b {
			if math.Float32bits(v)&0x7f800000 == 0x7f800000 { // exponent all ones
				return off + i
			}
		}
	}
	return -1
}

// scanBlock is the number of float32s FirstNonFinite looks at a time.
const scanBlock = 16 << 10

// MaxMag returns the largest of the bits of x without the sign (0 for an
// empty x), which order as the magnitudes do: at least 0x7f800000 (an
// infinity's) exactly when x holds a NaN or an infinity. Vector registers
// take what they can (maxMagVec), the loop the rest.
func MaxMag(x []float32) uint32 {
	m, i := maxMagVec(x)
	for _, v := range x[i:] {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return m
}
