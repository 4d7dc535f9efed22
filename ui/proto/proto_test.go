package proto

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// TestRecent: the last RecentKeys distinct keys put are held, oldest out
// first; a key put again becomes the newest and takes the new value.
func TestRecent(t *testing.T) {
	tests := []struct {
		name string
		puts []string
		held []string
		gone []string
	}{
		{"empty", nil, nil, []string{"a"}},
		{"under the limit", []string{"a", "b"}, []string{"a", "b"}, []string{"c"}},
		{"oldest goes", []string{"a", "b", "c", "d", "e"}, []string{"b", "c", "d", "e"}, []string{"a"}},
		{"a repeated key becomes the newest", []string{"a", "b", "a", "c", "d", "e"}, []string{"a", "c", "d", "e"}, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Recent[int]
			for i, k := range tc.puts {
				r.Put(k, i)
			}
			for _, k := range tc.held {
				v, ok := r.Get(k)
				if !ok {
					t.Fatalf("%q not held after %v", k, tc.puts)
				}
				last := -1
				for i, p := range tc.puts {
					if p == k {
						last = i
					}
				}
				if v != last {
					t.Errorf("%q holds %d, want the latest put %d", k, v, last)
				}
			}
			for _, k := range tc.gone {
				if _, ok := r.Get(k); ok {
					t.Errorf("%q still held after %v", k, tc.puts)
				}
			}
			r.Reset()
			for _, k := range tc.held {
				if _, ok := r.Get(k); ok {
					t.Errorf("%q held after Reset", k)
				}
			}
		})
	}
}

// TestRecentAgree: two Recents fed the same keys agree on every key, as the
// two ends of the heatmap port must.
func TestRecentAgree(t *testing.T) {
	var a Recent[struct{}]
	var b Recent[string]
	for i := range 200 {
		k := fmt.Sprint((i * 7) % 11)
		if _, ok := a.Get(k); !ok {
			a.Put(k, struct{}{})
			b.Put(k, "maps of "+k)
		}
		for j := range 11 {
			kj := fmt.Sprint(j)
			_, ha := a.Get(kj)
			_, hb := b.Get(kj)
			if ha != hb {
				t.Fatalf("step %d: key %s held by one end only (%v, %v)", i, kj, ha, hb)
			}
		}
	}
}

// TestRecentReset: after one end starts afresh, every key it holds is
// still held by the other, which kept its old keys.
func TestRecentReset(t *testing.T) {
	var worker Recent[struct{}]
	var page Recent[string]
	for _, k := range []string{"a", "b", "c", "d"} {
		worker.Put(k, struct{}{})
		page.Put(k, k)
	}
	worker.Reset()
	for i, k := range []string{"a", "e", "f", "g", "b", "h", "a"} {
		if _, ok := worker.Get(k); !ok {
			worker.Put(k, struct{}{})
			page.Put(k, k)
		}
		for _, h := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			if _, w := worker.Get(h); w {
				if _, p := page.Get(h); !p {
					t.Fatalf("step %d: the worker holds %q, the page does not", i, h)
				}
			}
		}
	}
}

func TestNumJSON(t *testing.T) {
	for _, x := range []float64{0, 1.5, -2, math.NaN(), math.Inf(1)} {
		b, err := json.Marshal(Num(x))
		if err != nil {
			t.Fatal(err)
		}
		var back Num
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if finite := !math.IsNaN(x) && !math.IsInf(x, 0); finite && float64(back) != x || !finite && !math.IsNaN(float64(back)) {
			t.Errorf("%v -> %s -> %v", x, b, back)
		}
	}
}
