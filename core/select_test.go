package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSplitTop: splitTop's two parts are topK of the first k and of the
// rest, each ascending by position, for orders of contiguous and of
// scattered positions.
func TestSplitTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	scattered := func(n int) []int32 {
		out := make([]int32, n)
		for i, p := range rng.Perm(4 * n)[:n] {
			out[i] = int32(p) + 7
		}
		return out
	}
	contiguous := func(n int) []int32 {
		out := make([]int32, n)
		for i, p := range rng.Perm(n) {
			out[i] = int32(p) + 32
		}
		return out
	}
	tests := []struct {
		name    string
		ordered []int32
		k       int
	}{
		{"empty", nil, 3},
		{"one, kept", []int32{5}, 1},
		{"one, not kept", []int32{5}, 0},
		{"k beyond the end", []int32{9, 2, 4}, 10},
		{"negative k", []int32{9, 2, 4}, -1},
		{"small", []int32{9, 2, 4, 7, 1}, 2},
		{"contiguous, few kept", contiguous(1000), 30},
		{"contiguous, many kept", contiguous(1000), 700},
		{"scattered", scattered(500), 120},
	}
	for _, tc := range tests {
		top, rest := splitTop(tc.ordered, tc.k)
		k := max(0, min(tc.k, len(tc.ordered)))
		wantTop, wantRest := topK(tc.ordered, k), topK(tc.ordered[k:], len(tc.ordered)-k)
		if !slices.Equal(top, wantTop) || !slices.Equal(rest, wantRest) {
			t.Errorf("%s: splitTop = %v, %v; want %v, %v", tc.name, short(top), short(rest), short(wantTop), short(wantRest))
		}
		if !slices.IsSorted(top) || !slices.IsSorted(rest) {
			t.Errorf("%s: parts not ascending", tc.name)
		}
	}
}

func short(x []int32) string {
	if len(x) > 8 {
		return fmt.Sprintf("%v... (%d)", x[:8], len(x))
	}
	return fmt.Sprint(x)
}
