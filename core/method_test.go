package core

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestMemo checks that a group's memo builds each key once, also under
// concurrent callers, and keeps keys apart.
func TestMemo(t *testing.T) {
	var g Group
	var builds atomic.Int32
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = g.Memo("a", func() any { builds.Add(1); return new(int) })
		}()
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Errorf("key a built %d times, want once", builds.Load())
	}
	for _, v := range got[1:] {
		if v != got[0] {
			t.Fatal("callers of one key got different values")
		}
	}
	if b := g.Memo("b", func() any { return "b" }); b != "b" || g.Memo("a", nil) != got[0] {
		t.Error("keys a and b not kept apart")
	}
}

func TestAnchorReason(t *testing.T) {
	for _, c := range []struct{ method, want string }{
		{"hae-ols", "ranked highest by attention mass and low entropy together"},
		{"hae-merge", "ranked highest by attention mass and low entropy together"},
		{"entropy", "whose attention entropy is lowest (attended by few queries)"},
		{"snapkv", "with the most attention mass (pooled over neighbours)"},
		{"topk", "with the most attention mass"},
		{"no-such-method", "with the most attention mass"},
	} {
		if got := AnchorReason(c.method); got != c.want {
			t.Errorf("AnchorReason(%q) = %q, want %q", c.method, got, c.want)
		}
	}
}
