package proto

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// TestRecent: the last RecentKeys keys put are held, first in first out; a
// key put again keeps its place and takes the new value.
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
		{"a repeated key keeps its place", []string{"a", "b", "a", "c", "d", "e"}, []string{"b", "c", "d", "e"}, []string{"a"}},
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
