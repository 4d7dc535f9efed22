package sample

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSelect checks that Select keeps the named layers and KV heads (with
// their query heads) bit for bit, in the order given, records the selection
// in the metadata, and refuses bad indices naming them.
func TestSelect(t *testing.T) {
	full := testSample(3, 6, 2, 5, 4, true, true) // group 3
	full.Meta.Prefix = 4
	tests := []struct {
		name            string
		layers, kvHeads []int
		wantErr         string
		wantL, wantHKV  []int // expected original indices
		wantMeta        map[string]string
	}{
		{name: "all", wantL: []int{0, 1, 2}, wantHKV: []int{0, 1}, wantMeta: map[string]string{}},
		{name: "layers", layers: []int{2, 0}, wantL: []int{2, 0}, wantHKV: []int{0, 1}, wantMeta: map[string]string{KeyLayers: "[2,0]"}},
		{name: "heads", kvHeads: []int{1}, wantL: []int{0, 1, 2}, wantHKV: []int{1}, wantMeta: map[string]string{KeyKVHeads: "[1]"}},
		{name: "both", layers: []int{1}, kvHeads: []int{1, 0}, wantL: []int{1}, wantHKV: []int{1, 0}, wantMeta: map[string]string{KeyLayers: "[1]", KeyKVHeads: "[1,0]"}},
		{name: "layer out of range", layers: []int{3}, wantErr: "sample: layer 3 out of range: the sample has 3 (0..2)"},
		{name: "negative head", kvHeads: []int{-1}, wantErr: "sample: KV head -1 out of range: the sample has 2 (0..1)"},
		{name: "twice", layers: []int{1, 1}, wantErr: "sample: layer 1 selected twice"},
		{name: "empty", kvHeads: []int{}, wantErr: "sample: no KV head selected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := full.Select(tc.layers, tc.kvHeads)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			if got.L != len(tc.wantL) || got.HKV != len(tc.wantHKV) || got.H != 3*len(tc.wantHKV) || got.N != full.N || got.D != full.D {
				t.Fatalf("shape L=%d H=%d HKV=%d N=%d D=%d", got.L, got.H, got.HKV, got.N, got.D)
			}
			same := func(a, b []float32) bool {
				return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
			}
			for i, l := range tc.wantL {
				for j, kv := range tc.wantHKV {
					if !same(got.KHead(i, j), full.KHead(l, kv)) || !same(got.VHead(i, j), full.VHead(l, kv)) {
						t.Errorf("k/v of layer %d KV head %d differ", l, kv)
					}
					for g := 0; g < 3; g++ {
						if !same(got.QHead(i, j*3+g), full.QHead(l, kv*3+g)) || !same(got.AttnHead(i, j*3+g), full.AttnHead(l, kv*3+g)) {
							t.Errorf("q/attn of layer %d head %d differ", l, kv*3+g)
						}
					}
				}
			}
			if got.Prefix() != 4 || len(got.Meta.Extra) != len(tc.wantMeta) {
				t.Errorf("meta %+v", got.Meta)
			}
			for k, v := range tc.wantMeta {
				if got.Meta.Extra[k] != v {
					t.Errorf("Extra[%q] = %q, want %q", k, got.Meta.Extra[k], v)
				}
			}
			got.Q[0]++
			if full.Q[0] == got.Q[0] {
				t.Error("the selection shares memory with the sample")
			}
		})
	}
}

// TestSelectComposes checks that selecting from a selection records indices
// into the original sample, and that an attention-only sample selects query
// heads.
func TestSelectComposes(t *testing.T) {
	full := testSample(4, 4, 2, 3, 2, true, false)
	a, err := full.Select([]int{3, 1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Select([]int{2, 0}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if b.Meta.Extra[KeyLayers] != "[2,3]" || b.Meta.Extra[KeyKVHeads] != "[1]" {
		t.Errorf("composed selection %v", b.Meta.Extra)
	}
	if !slices.Equal(b.KHead(1, 0), full.KHead(3, 1)) {
		t.Error("composed selection holds the wrong keys")
	}
	att := testSample(1, 3, 0, 4, 0, false, true)
	c, err := att.Select(nil, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	if c.H != 1 || c.HKV != 0 || !slices.Equal(c.AttnHead(0, 0), att.AttnHead(0, 2)) {
		t.Errorf("attention-only selection: H=%d HKV=%d", c.H, c.HKV)
	}
	if _, err := att.Select(nil, []int{3}); err == nil || !strings.Contains(err.Error(), "KV head 3 out of range: the sample has 3") {
		t.Errorf("error %v", err)
	}
}
