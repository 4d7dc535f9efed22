package sample

import (
	"encoding/json"
	"fmt"
	"maps"
)

// Metadata keys Select records in Meta.Extra: the original indices of the
// layers and of the KV heads a sample keeps, as JSON arrays.
const (
	KeyLayers  = "layers"
	KeyKVHeads = "kv_heads"
)

// Select returns a new sample holding the layers and the KV heads of s
// named by layers and kvHeads (original indices, in the order given; nil
// keeps all), each KV head with the query heads that use it (H/HKV of
// them, so the grouping is kept). For an attention-only sample, which says
// nothing about KV sharing (KVHeads), kvHeads names query heads. The
// tensors are copied, so the result shares no memory with s, and the
// values are the same bits. The metadata is kept, and the selection is
// recorded in Meta.Extra under KeyLayers and KeyKVHeads (when given; an
// earlier selection's indices are composed, so they stay indices into the
// model). An index out of range or given twice is an *Error naming it.
func (s *Sample) Select(layers, kvHeads []int) (*Sample, error) {
	hkv := s.KVHeads()
	if err := checkIndices("layer", layers, s.L); err != nil {
		return nil, err
	}
	if err := checkIndices("KV head", kvHeads, hkv); err != nil {
		return nil, err
	}
	ls, ks := layers, kvHeads
	if ls == nil {
		ls = seq(s.L)
	}
	if ks == nil {
		ks = seq(hkv)
	}
	g := s.Group()
	out := &Sample{L: len(ls), H: len(ks) * g, N: s.N, D: s.D, Meta: s.Meta, SourceDType: s.SourceDType}
	out.Meta.Extra = maps.Clone(s.Meta.Extra)
	if s.HasQKV() {
		out.HKV = len(ks)
		nd := s.N * s.D
		out.Q = make([]float32, 0, out.L*out.H*nd)
		out.K = make([]float32, 0, out.L*out.HKV*nd)
		out.V = make([]float32, 0, out.L*out.HKV*nd)
		for _, l := range ls {
			for _, kv := range ks {
				for h := kv * g; h < (kv+1)*g; h++ {
					out.Q = append(out.Q, s.QHead(l, h)...)
				}
				out.K = append(out.K, s.KHead(l, kv)...)
				out.V = append(out.V, s.VHead(l, kv)...)
			}
		}
	}
	if s.HasAttn() {
		out.Attn = make([]float32, 0, out.L*out.H*s.N*s.N)
		for _, l := range ls {
			for _, kv := range ks {
				for h := kv * g; h < (kv+1)*g; h++ {
					out.Attn = append(out.Attn, s.AttnHead(l, h)...)
				}
			}
		}
	}
	if err := out.recordSelection(KeyLayers, layers); err != nil {
		return nil, err
	}
	if err := out.recordSelection(KeyKVHeads, kvHeads); err != nil {
		return nil, err
	}
	return out, nil
}

// recordSelection records the indices idx (nil: nothing) under key in
// Meta.Extra, composed with the indices an earlier selection recorded
// there.
func (s *Sample) recordSelection(key string, idx []int) error {
	if idx == nil {
		return nil
	}
	orig := idx
	if prev, ok := s.Meta.Extra[key]; ok {
		var was []int
		if err := json.Unmarshal([]byte(prev), &was); err != nil {
			return &Error{Key: key, Err: fmt.Errorf("an earlier selection %q is not a JSON array of indices: %w", prev, err)}
		}
		orig = make([]int, len(idx))
		for i, j := range idx {
			if j >= len(was) {
				return &Error{Key: key, Err: fmt.Errorf("an earlier selection %q names %d indices, fewer than the sample has", prev, len(was))}
			}
			orig[i] = was[j]
		}
	}
	b, _ := json.Marshal(orig) // ints cannot fail
	if s.Meta.Extra == nil {
		s.Meta.Extra = map[string]string{}
	}
	s.Meta.Extra[key] = string(b)
	return nil
}

// checkIndices checks that idx names distinct indices in [0, n) and is not
// empty (nil is allowed: all).
func checkIndices(what string, idx []int, n int) error {
	if idx == nil {
		return nil
	}
	if len(idx) == 0 {
		return &Error{Err: fmt.Errorf("no %s selected", what)}
	}
	seen := make(map[int]bool, len(idx))
	for _, i := range idx {
		if i < 0 || i >= n {
			return &Error{Err: fmt.Errorf("%s %d out of range: the sample has %d (0..%d)", what, i, n, n-1)}
		}
		if seen[i] {
			return &Error{Err: fmt.Errorf("%s %d selected twice", what, i)}
		}
		seen[i] = true
	}
	return nil
}

// seq is 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
