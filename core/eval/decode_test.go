package eval

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core"
)

// TestRecompressBeyondRunIsOnce checks that re-compressing every K tokens,
// K longer than the continuation and the free run, is compressing once.
func TestRecompressBeyondRunIsOnce(t *testing.T) {
	r := tiny(t)
	for _, m := range []string{"hae-ols", "streaming", "quant"} {
		p := core.DefaultParams(0.5)
		once, err := r.Evaluate(m, p)
		if err != nil {
			t.Fatal(err)
		}
		p.Recompress = 1000
		long, err := r.Evaluate(m, p)
		if err != nil {
			t.Fatal(err)
		}
		if long.Rounds != 0 || long.KL != once.KL || long.Peak != once.Peak || !slices.Equal(long.Free, once.Free) || !slices.Equal(long.KLs, once.KLs) {
			t.Errorf("%s: re-compressing every 1000 tokens: rounds %d kl %v peak %v free %v; once: kl %v peak %v free %v",
				m, long.Rounds, long.KL, long.Peak, long.Free, once.KL, once.Peak, once.Free)
		}
		// Without re-compression the cache grows by the whole continuation.
		if want := once.Used + float64(r.T)/float64(r.Seq.Prefix); math.Abs(once.Peak-want) > 1e-12 {
			t.Errorf("%s once: peak %v, want used + T/n = %v", m, once.Peak, want)
		}
	}
}

// TestRecompressKeepsMemory runs every method re-compressing every 4
// tokens: each either fits (rounds as counted, the cache never above the
// first budget plus 4 positions) or has no room, said as such.
func TestRecompressKeepsMemory(t *testing.T) {
	r := tiny(t)
	const k = 4
	for _, m := range core.MethodNames() {
		for _, ratio := range []float64{0.3, 0.6} {
			p := core.DefaultParams(ratio)
			p.Recompress = k
			res, err := r.Evaluate(m, p)
			if err != nil {
				t.Fatalf("%s at %g: %v", m, ratio, err)
			}
			if res.NA != "" {
				if m == "full" || (!strings.Contains(res.NA, "no room") && !strings.Contains(res.NA, "ratio")) {
					t.Errorf("%s at %g: n/a %q", m, ratio, res.NA)
				}
				continue
			}
			rounds := (r.T - 1) / k
			if m == "full" {
				rounds = 0
				if res.KL != 0 {
					t.Errorf("full re-compressing: kl %v, want 0", res.KL)
				}
			}
			if res.Rounds != rounds {
				t.Errorf("%s at %g: %d rounds, want %d", m, ratio, res.Rounds, rounds)
			}
			slots := math.Floor(ratio*float64(r.Seq.Prefix) + 1e-9)
			most := (slots + k) / float64(r.Seq.Prefix)
			if m == "full" {
				most = 1 + float64(r.T)/float64(r.Seq.Prefix)
			}
			if res.Peak > most+1e-12 {
				t.Errorf("%s at %g: peak %v over the budget plus %d positions, %v", m, ratio, res.Peak, k, most)
			}
			if len(res.Free) != r.Seq.Gen || len(res.KLs) != r.T {
				t.Errorf("%s at %g: %d free tokens, %d kl positions", m, ratio, len(res.Free), len(res.KLs))
			}
		}
	}
}

// TestRecompressStreamingWindow checks the rows of a re-compressed cache:
// streaming re-compressed every 4 tokens is StreamingLLM's rolling cache,
// the sinks and the positions just before the last re-compression.
func TestRecompressStreamingWindow(t *testing.T) {
	r := tiny(t)
	p := core.DefaultParams(0.3)
	p.Recompress = 4
	d, _, err := r.newDecoder("streaming", p)
	if err != nil {
		t.Fatal(err)
	}
	err = d.feed(r.Seq.Tokens[r.Seq.Prefix:], r.Seq.Prefix, func(int, []float32) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	sh := r.shape
	hs, n := sh.HeadSize, r.Seq.Prefix
	b, err := core.NewBudget(n, hs, p.Ratio, p.Sinks, p.Recent)
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for j := 0; j < b.Sinks; j++ {
		want = append(want, j)
	}
	for j := d.start - (b.Slots - b.Sinks); j < d.start; j++ {
		want = append(want, j)
	}
	if d.rounds != (r.T-1)/4 || d.start != n+4*d.rounds {
		t.Fatalf("%d rounds, cache of %d positions", d.rounds, d.start)
	}
	for l := 0; l < sh.Layers; l++ {
		for kv := 0; kv < sh.KVHeads; kv++ {
			pre := d.pre[l*sh.KVHeads+kv]
			if pre.Rows(hs) != len(want) || pre.Bias != nil {
				t.Fatalf("layer %d KV head %d: %d rows (bias %v), want %d exact", l, kv, pre.Rows(hs), pre.Bias, len(want))
			}
			for i, j := range want {
				var key []float32
				if j < n {
					key = r.Sample.KHead(l, kv)[j*hs : (j+1)*hs]
				} else {
					o := (j-n)*sh.KVDim() + kv*hs
					key = d.k[l][o : o+hs]
				}
				if !slices.Equal(pre.Keys[i*hs:(i+1)*hs], key) {
					t.Errorf("layer %d KV head %d: row %d is not the key of position %d", l, kv, i, j)
				}
			}
		}
	}
}

// TestRecompressNoRoom checks that a method whose carried summaries fill
// the budget says so, in Evaluate and in FreeRun.
func TestRecompressNoRoom(t *testing.T) {
	r := tiny(t)
	p := core.DefaultParams(0.1) // 6 slots of 64
	p.Recompress = 1
	p.Sinks, p.Recent, p.Phi = 0, 0, 1
	res, err := r.Evaluate("hae-merge", p)
	if err != nil {
		t.Fatal(err)
	}
	if res.NA == "" {
		t.Skipf("hae-merge kept room at every position (rounds %d)", res.Rounds)
	}
	if !strings.Contains(res.NA, "no room") {
		t.Errorf("n/a %q, want no room", res.NA)
	}
	if _, _, err := r.FreeRun("hae-merge", p, nil); !errors.Is(err, core.ErrDoesNotFit) {
		t.Errorf("FreeRun: %v, want ErrDoesNotFit", err)
	}
}
