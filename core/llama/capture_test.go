package llama

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// attnTol is the tolerance of TestCaptureSatisfiesAttention: the float32
// forward pass and a float64 recomputation from the captured q, k, v must
// agree to within attnTol * (1 + max |v|) on every attention output.
const attnTol = 1e-5

func TestGreedyFromBOS(t *testing.T) {
	m := loadReal(t)
	if got := m.Config(); got != stories260K {
		t.Fatalf("config %v, want %v", got, stories260K)
	}
	cp, err := m.Capture([]int{BOS}, 10, Greedy)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{461, 461, 401, 401, 401, 461, 378, 455, 473, 456}
	if got := cp.Generated(); !slices.Equal(got, want) {
		t.Errorf("greedy from BOS: %v, want %v", got, want)
	}
}

// attentionError recomputes, in float64, the causal softmax attention of
// every layer, head and position from the captured q, k, v and returns the
// largest difference from the recorded output, relative to 1 + max |v|.
func attentionError(c *Capture) float64 {
	cfg := c.Config
	d, n := cfg.HeadSize(), c.N
	group := cfg.Heads / cfg.KVHeads
	scale := 1 / math.Sqrt(float64(d))
	var worst float64
	p := make([]float64, n)
	out := make([]float64, d)
	for l := 0; l < cfg.Layers; l++ {
		for h := 0; h < cfg.Heads; h++ {
			kv := h / group
			q := c.Q[(l*cfg.Heads+h)*n*d:][:n*d]
			rec := c.Out[(l*cfg.Heads+h)*n*d:][:n*d]
			k := c.K[(l*cfg.KVHeads+kv)*n*d:][:n*d]
			v := c.V[(l*cfg.KVHeads+kv)*n*d:][:n*d]
			var vmax float64
			for _, x := range v {
				vmax = max(vmax, math.Abs(float64(x)))
			}
			for i := 0; i < n; i++ {
				m := math.Inf(-1)
				for j := 0; j <= i; j++ {
					var s float64
					for e := 0; e < d; e++ {
						s += float64(q[i*d+e]) * float64(k[j*d+e])
					}
					p[j] = s * scale
					m = max(m, p[j])
				}
				var z float64
				for j := 0; j <= i; j++ {
					p[j] = math.Exp(p[j] - m)
					z += p[j]
				}
				clear(out)
				for j := 0; j <= i; j++ {
					for e := 0; e < d; e++ {
						out[e] += p[j] / z * float64(v[j*d+e])
					}
				}
				for e := 0; e < d; e++ {
					worst = max(worst, math.Abs(out[e]-float64(rec[i*d+e]))/(1+vmax))
				}
			}
		}
	}
	return worst
}

// shiftRoPE returns a copy of c whose queries are rotated by one more
// position: what a capture with an off-by-one RoPE would hold.
func shiftRoPE(c *Capture, freq []float32) *Capture {
	bad := *c
	bad.Q = slices.Clone(c.Q)
	d := c.Config.HeadSize()
	for i := 0; i+1 < len(bad.Q); i += 2 {
		s, co := math.Sincos(float64(freq[(i%d)/2]))
		v0, v1 := float64(bad.Q[i]), float64(bad.Q[i+1])
		bad.Q[i] = float32(v0*co - v1*s)
		bad.Q[i+1] = float32(v0*s + v1*co)
	}
	return &bad
}

func TestCaptureSatisfiesAttention(t *testing.T) {
	real := func(t *testing.T) *Model { return loadReal(t) }
	random := func(t *testing.T) *Model {
		m, err := Random(tiny, 3)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		model    func(*testing.T) *Model
		prompt   []int
		generate int
		sampler  Sampler
	}{
		{"stories260K greedy full context", real, []int{BOS}, 511, Greedy},
		{"stories260K sampled", real, []int{BOS, 400, 401}, 100, Sampler{Temperature: 1, Seed: 7}},
		{"random tiny", random, []int{BOS}, tiny.SeqLen - 1, Sampler{Temperature: 0.9, Seed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model(t)
			cp, err := m.Capture(tc.prompt, tc.generate, tc.sampler)
			if err != nil {
				t.Fatal(err)
			}
			if e := attentionError(cp); e > attnTol {
				t.Errorf("captured q/k/v reproduce the recorded attention to %.3g, want <= %g", e, attnTol)
			} else {
				t.Logf("max attention error %.3g (tolerance %g)", e, attnTol)
			}
			// The check is sensitive: an off-by-one RoPE on q fails it.
			if e := attentionError(shiftRoPE(cp, m.freq)); e <= attnTol {
				t.Errorf("a capture with q rotated one position too far passes the check (error %.3g)", e)
			}
		})
	}
}

// goldenHash holds FNV-1a hashes of the bits of q, k, v and the attention
// output of two captures, computed on linux/amd64. The same value under
// GOOS=js GOARCH=wasm (and any GOAMD64 level) shows the forward pass is
// bit-for-bit portable.
var goldenHash = map[string]uint64{
	"stories260K": 0xa06c8210b1b7551c,
	"random-tiny": 0xe269459bbc2a2576,
}

func TestCaptureDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name    string
		model   func(*testing.T) *Model
		gen     int
		sampler Sampler
	}{
		{"stories260K", func(t *testing.T) *Model { return loadReal(t) }, 511, Greedy},
		{"random-tiny", func(t *testing.T) *Model {
			m, err := Random(tiny, 11)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}, tiny.SeqLen - 1, Sampler{Temperature: 1, Seed: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model(t)
			a, err := m.Capture([]int{BOS}, tc.gen, tc.sampler)
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.Capture([]int{BOS}, tc.gen, tc.sampler)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Tokens, b.Tokens) {
				t.Errorf("tokens differ between two runs")
			}
			for _, p := range []struct {
				name string
				x, y []float32
			}{{"q", a.Q, b.Q}, {"k", a.K, b.K}, {"v", a.V, b.V}, {"out", a.Out, b.Out}} {
				if !sameBits(p.x, p.y) {
					t.Errorf("%s differs between two runs", p.name)
				}
			}
			if h := hashFloats(a.Q, a.K, a.V, a.Out); h != goldenHash[tc.name] {
				t.Errorf("hash of the capture %#x, want %#x (the forward pass is not bit-identical to linux/amd64)", h, goldenHash[tc.name])
			}
		})
	}
}

func TestSeededSampler(t *testing.T) {
	m := loadReal(t)
	run := func(s Sampler) []int {
		cp, err := m.Capture([]int{BOS}, 60, s)
		if err != nil {
			t.Fatal(err)
		}
		return cp.Generated()
	}
	a := run(Sampler{Temperature: 1, Seed: 42})
	b := run(Sampler{Temperature: 1, Seed: 42})
	c := run(Sampler{Temperature: 1, Seed: 43})
	g := run(Greedy)
	if !slices.Equal(a, b) {
		t.Errorf("seed 42 twice: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 42 and 43 give the same tokens %v", a)
	}
	if slices.Equal(a, g) {
		t.Errorf("temperature 1 gives the greedy tokens %v", a)
	}
	// Temperature 1e-6 sharpens the softmax to the argmax.
	if cold := run(Sampler{Temperature: 1e-6, Seed: 9}); !slices.Equal(cold, g) {
		t.Errorf("temperature 1e-6: %v, want the greedy %v", cold, g)
	}
}

func TestCaptureErrors(t *testing.T) {
	m, err := Random(tiny, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		prompt   []int
		generate int
		sampler  Sampler
		want     string
	}{
		{"empty prompt", nil, 3, Greedy, "prompt is empty"},
		{"token too large", []int{BOS, tiny.Vocab}, 3, Greedy, "outside the vocabulary"},
		{"negative token", []int{-1}, 3, Greedy, "outside the vocabulary"},
		{"negative generate", []int{BOS}, -1, Greedy, "generate = -1"},
		{"past context", []int{BOS}, tiny.SeqLen, Greedy, "exceed the context"},
		{"negative temperature", []int{BOS}, 3, Sampler{Temperature: -1, Seed: 1}, "temperature -1"},
		{"NaN temperature", []int{BOS}, 3, Sampler{Temperature: math.NaN(), Seed: 1}, "temperature NaN"},
		{"seed 0", []int{BOS}, 3, Sampler{Temperature: 1}, "nonzero seed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Capture(tc.prompt, tc.generate, tc.sampler)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), m.Name) {
				t.Errorf("error %v, want one naming %s and saying %q", err, m.Name, tc.want)
			}
		})
	}
}

func TestSample(t *testing.T) {
	m := loadReal(t)
	cp, err := m.Capture([]int{BOS}, 511, Greedy)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		prefix int
		want   int
	}{
		{"chosen prefix", 448, 448},
		{"default prefix", 0, 448},
		{"all cache", 512, 512},
		{"tiny cache", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := cp.Sample(tc.prefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.L != 5 || s.H != 8 || s.HKV != 4 || s.N != 512 || s.D != 8 {
				t.Errorf("shape L=%d H=%d HKV=%d N=%d D=%d", s.L, s.H, s.HKV, s.N, s.D)
			}
			wantSrc := fmt.Sprintf("llama2.c capture stories260K.bin prompt=BOS generate=511 greedy prefix=%d", tc.want)
			if s.Meta.Source != wantSrc || s.Meta.Prefix != tc.want || s.Meta.Model != "stories260K.bin" {
				t.Errorf("meta source %q prefix %d model %q, want %q %d stories260K.bin", s.Meta.Source, s.Meta.Prefix, s.Meta.Model, wantSrc, tc.want)
			}
			if s.Meta.Scale != 1/math.Sqrt(8) {
				t.Errorf("scale %v", s.Meta.Scale)
			}
			if s.Meta.Tokens[0] != "1" || s.Meta.Tokens[1] != "461" || s.Meta.Tokens[10] != "456" {
				t.Errorf("tokens begin %v", s.Meta.Tokens[:11])
			}
			if !strings.HasPrefix(s.Meta.Extra["token_ids"], "[1,461,461,401,") {
				t.Errorf("token_ids %.40s", s.Meta.Extra["token_ids"])
			}
			// Layout: head 5 (KV head 2) of layer 3 at position 100.
			const l, h, pos = 3, 5, 100
			if got, want := s.QHead(l, h)[pos*8:pos*8+8], cp.Q[((l*8+h)*512+pos)*8:][:8]; !sameBits(got, want) {
				t.Errorf("q view %v, capture %v", got, want)
			}
			if got, want := s.KHead(l, 2)[pos*8:pos*8+8], cp.K[((l*4+2)*512+pos)*8:][:8]; !sameBits(got, want) {
				t.Errorf("k view %v, capture %v", got, want)
			}
		})
	}
	for _, bad := range []int{1, -3, 513} {
		if _, err := cp.Sample(bad, nil); err == nil || !strings.Contains(err.Error(), "prefix") {
			t.Errorf("Sample(%d): error %v, want one about the prefix", bad, err)
		}
	}
}

func TestSampleTokens(t *testing.T) {
	m, err := Random(Config{Dim: 8, HiddenDim: 8, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 4, SeqLen: 8, SharedClassifier: true}, 2)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := m.Capture([]int{BOS, 3, 0}, 2, Sampler{Temperature: 0.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := DecodeTokenizer("t.bin", tokenizerBytes(8, []entry{{0, "<unk>"}, {0, "<s>"}, {0, "\xff"}, {0, " hi"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cp.Sample(4, tok)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(cp.Tokens))
	for i, id := range cp.Tokens {
		want[i] = []string{"<unk>", "<s>", "\uFFFD", " hi"}[id]
	}
	if !slices.Equal(s.Meta.Tokens, want) {
		t.Errorf("tokens %q, want %q", s.Meta.Tokens, want)
	}
	wantSrc := "llama2.c capture random-2 prompt=1,3,0 generate=2 temperature=0.5 seed=3 prefix=4"
	if s.Meta.Source != wantSrc {
		t.Errorf("source %q, want %q", s.Meta.Source, wantSrc)
	}
	small, err := DecodeTokenizer("small.bin", tokenizerBytes(4, []entry{{0, "a"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Sample(4, small); err == nil || !strings.Contains(err.Error(), "small.bin has 1 tokens") {
		t.Errorf("mismatched tokenizer: error %v", err)
	}
}

func TestForwardPanics(t *testing.T) {
	m, err := Random(tiny, 1)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Random(Config{Dim: 8, HiddenDim: 8, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 4, SeqLen: 8, SharedClassifier: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		token, pos int
		st         *State
		want       string
	}{
		{"token", tiny.Vocab, 0, m.NewState(), "token"},
		{"position", 1, tiny.SeqLen, m.NewState(), "position"},
		{"state", 1, 0, other.NewState(), "state made for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic %v, want one about %s", r, tc.want)
				}
			}()
			m.Forward(tc.token, tc.pos, tc.st)
		})
	}
}

// CaptureProgress reports every position once, in order, and captures the
// same bits as Capture.
func TestCaptureProgress(t *testing.T) {
	m, err := Random(Config{Dim: 16, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 32, SeqLen: 24, SharedClassifier: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	a, err := m.CaptureProgress([]int{BOS}, 19, Greedy, func(done, n int) {
		if n != 20 {
			t.Errorf("progress total %d, want 20", n)
		}
		seen = append(seen, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range seen {
		if d != i+1 {
			t.Fatalf("progress calls %v, want 1..20", seen)
		}
	}
	if len(seen) != 20 {
		t.Fatalf("%d progress calls, want 20", len(seen))
	}
	b, err := m.Capture([]int{BOS}, 19, Greedy)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Q, b.Q) || !slices.Equal(a.Tokens, b.Tokens) {
		t.Error("CaptureProgress and Capture differ")
	}
}
