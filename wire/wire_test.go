package wire

import (
	"fmt"
	"strconv"
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

// TestViewKey: every field of a view changes its key, the ratio only
// after the prefix, and the same view gives the same key.
func TestViewKey(t *testing.T) {
	p := Params{Ratio: 0.31, Lambda: 0.5, Phi: 0.25, Tau: 0.95}
	base := ViewKey(1, 2, 3, "hae-ols", p, "all")
	if again := ViewKey(1, 2, 3, "hae-ols", p, ""); again != base {
		t.Errorf("panel \"\" gives %q, want the key of \"all\" %q", again, base)
	}
	if r := float64(31) / 100; ViewKey(1, 2, 3, "hae-ols", Params{Ratio: r, Lambda: 0.5, Phi: 0.25, Tau: 0.95}, "all") != base {
		t.Errorf("ratio 31/100 and 0.31 give different keys")
	}
	with := func(f func(*Params)) Params { q := p; f(&q); return q }
	others := []struct {
		name string
		key  string
		same bool // same prefix
	}{
		{"ratio", ViewKey(1, 2, 3, "hae-ols", with(func(q *Params) { q.Ratio = 0.32 }), "all"), true},
		{"model", ViewKey(2, 2, 3, "hae-ols", p, "all"), false},
		{"layer", ViewKey(1, 0, 3, "hae-ols", p, "all"), false},
		{"head", ViewKey(1, 2, 0, "hae-ols", p, "all"), false},
		{"method", ViewKey(1, 2, 3, "topk", p, "all"), false},
		{"lambda", ViewKey(1, 2, 3, "hae-ols", with(func(q *Params) { q.Lambda = 0.55 }), "all"), false},
		{"phi", ViewKey(1, 2, 3, "hae-ols", with(func(q *Params) { q.Phi = 0.3 }), "all"), false},
		{"tau", ViewKey(1, 2, 3, "hae-ols", with(func(q *Params) { q.Tau = 0.9 }), "all"), false},
		{"panel", ViewKey(1, 2, 3, "hae-ols", p, "comp"), false},
	}
	for _, o := range others {
		if o.key == base {
			t.Errorf("%s: same key %q", o.name, base)
		}
		if got := ViewPrefix(o.key) == ViewPrefix(base); got != o.same {
			t.Errorf("%s: same prefix %v, want %v (%q, %q)", o.name, got, o.same, o.key, base)
		}
	}
}

// TestLadder: views of one prefix are kept by slider step up to
// LadderMaxBytes; a view of another prefix replaces them all.
func TestLadder(t *testing.T) {
	p := Params{Lambda: 0.5, Phi: 0.25, Tau: 0.95}
	view := func(head, k int) string {
		q := p
		q.Ratio = StepRatio(k)
		return ViewKey(1, 0, head, "hae-ols", q, "all")
	}
	var l Ladder[int]
	if _, ok := l.Get(view(0, 1)); ok {
		t.Fatal("the zero Ladder holds a view")
	}
	const size = LadderMaxBytes / 10
	for k := 2; k < 15; k++ {
		if ok := l.Put(view(0, k), k, size); ok != (k < 12) {
			t.Fatalf("put %d: %v, want %v", k, ok, k < 12)
		}
	}
	if l.Len() != 10 || !l.Full() {
		t.Fatalf("holds %d (full %v), want 10 and full", l.Len(), l.Full())
	}
	if !l.Put(view(0, 3), 33, size) {
		t.Error("a held view is refused when full")
	}
	if v, ok := l.Get(view(0, 3)); !ok || v != 33 {
		t.Errorf("view 3 holds %d %v, want 33", v, ok)
	}
	if v, ok := l.Step(4); !ok || v != 4 {
		t.Errorf("step 4 holds %d %v, want 4", v, ok)
	}
	if _, ok := l.Get(view(1, 3)); ok {
		t.Error("another prefix's view is held")
	}
	if !l.Put(view(1, 7), 7, size) || l.Len() != 1 || l.Full() || l.Prefix() != ViewPrefix(view(1, 7)) {
		t.Fatalf("a new prefix: holds %d (full %v), want 1", l.Len(), l.Full())
	}
	if _, ok := l.Get(view(0, 3)); ok {
		t.Error("the old prefix's views survive a new prefix")
	}
	if l.Put("no ratio", 1, 0) {
		t.Error("a view without a ratio is held")
	}
	l.Reset()
	if _, ok := l.Get(view(1, 7)); ok || l.Len() != 0 {
		t.Error("Reset keeps a view")
	}
}

// TestViewStep: the prefix and ratio slider step of a view key; every
// step's ratio is the slider's value parsed, and back.
func TestViewStep(t *testing.T) {
	tests := []struct {
		key    string
		prefix string
		step   int
		ok     bool
	}{
		{ViewKey(0, 1, 2, "topk", Params{Ratio: 0.37}, ""), "0/1/2/topk/0/0/0/all", 37, true},
		{"a/b@1", "a/b", 100, true},
		{"a/b", "", 0, false},
		{"a/b@", "", 0, false},
		{"a/b@x", "", 0, false},
		{"a/b@0.305", "", 0, false},
	}
	for _, tc := range tests {
		if p, k, ok := ViewStep(tc.key); p != tc.prefix || k != tc.step || ok != tc.ok {
			t.Errorf("ViewStep(%q) = %q, %v, %v; want %q, %v, %v", tc.key, p, k, ok, tc.prefix, tc.step, tc.ok)
		}
	}
	for k := 2; k <= 100; k++ {
		r, err := strconv.ParseFloat(strconv.FormatFloat(StepRatio(k), 'f', 2, 64), 64)
		if err != nil || r != StepRatio(k) || RatioStep(r) != k {
			t.Errorf("step %d: ratio %v, parsed %v, step back %d", k, StepRatio(k), r, RatioStep(r))
		}
	}
}

// TestScreenWants: a heatmap page draws newer maps of another view, and
// maps whose age or view it cannot tell.
func TestScreenWants(t *testing.T) {
	tests := []struct {
		name   string
		screen Screen
		view   string
		seq    int
		want   bool
	}{
		{"nothing on screen", Screen{}, "a", 3, true},
		{"newer, another view", Screen{"a", 3}, "b", 4, true},
		{"older, another view", Screen{"a", 3}, "b", 2, false},
		{"newer, same view", Screen{"a", 3}, "a", 4, false},
		{"same seq, same view (the worker's maps after a show)", Screen{"a", 3}, "a", 3, false},
		{"same seq, another view", Screen{"a", 3}, "b", 3, true},
		{"no seq, another view", Screen{"a", 3}, "b", 0, true},
		{"no view", Screen{"a", 3}, "", 5, true},
		{"no view, older", Screen{"a", 3}, "", 2, false},
		{"unknown screen seq", Screen{"a", 0}, "b", 1, true},
	}
	for _, tc := range tests {
		if got := tc.screen.Wants(tc.view, tc.seq); got != tc.want {
			t.Errorf("%s: %+v.Wants(%q, %d) = %v, want %v", tc.name, tc.screen, tc.view, tc.seq, got, tc.want)
		}
	}
}

func TestNeedsModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want bool
	}{
		{"prompt", Request{Op: OpPrompt}, true},
		{"eval", Request{Op: OpEval}, true},
		{"load llama", Request{Op: OpLoad, Source: &Source{Kind: "llama"}}, true},
		{"load checkpoint", Request{Op: OpLoad, Source: &Source{Kind: "checkpoint"}}, true},
		{"load preset", Request{Op: OpLoad, Source: &Source{Kind: "preset"}}, false},
		{"load file", Request{Op: OpLoad, Source: &Source{Kind: "file"}}, false},
		{"load without source", Request{Op: OpLoad}, false},
		{"grid", Request{Op: OpGrid}, false},
		{"head", Request{Op: OpHead}, false},
		{"compute", Request{Op: OpCompute}, false},
		{"heatmap reset", Request{Op: OpHeatmapReset}, false},
	} {
		if got := tc.req.NeedsModel(); got != tc.want {
			t.Errorf("%s: NeedsModel() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
