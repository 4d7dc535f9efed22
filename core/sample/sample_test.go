package sample

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *Sample)
		tensor string
		key    string
		want   string // "" means valid
	}{
		{"valid", func(*Sample) {}, "", "", ""},
		{"valid attention only", func(s *Sample) { s.Q, s.K, s.V, s.HKV, s.D = nil, nil, nil, 0, 0 }, "", "", ""},
		{"valid q/k/v only", func(s *Sample) { s.Attn = nil }, "", "", ""},
		{"valid metadata", func(s *Sample) {
			s.Meta = Meta{Prefix: 6, Scale: 0.3, Tokens: make([]string, 8), Needles: []int{0, 5}, NeedleProbes: []int{1}, Extra: map[string]string{"x": "y"}}
		}, "", "", ""},
		{"zero layers", func(s *Sample) { s.L = 0 }, "", "", "bad shape L=0"},
		{"absurd N", func(s *Sample) { s.N = MaxDim + 1 }, "", "", "absurd shape"},
		{"negative D", func(s *Sample) { s.D = -1 }, "", "", "absurd shape"},
		{"nothing", func(s *Sample) { s.Q, s.K, s.V, s.Attn = nil, nil, nil, nil }, "", "", "neither q/k/v nor attn"},
		{"q without k", func(s *Sample) { s.K = nil }, "k", "", "missing: q, k and v go together"},
		{"q without v, attn present", func(s *Sample) { s.V = nil }, "v", "", "missing"},
		{"k without q", func(s *Sample) { s.Q = nil }, "q", "", "missing"},
		{"heads not a multiple", func(s *Sample) { s.HKV = 3 }, "", "", "query heads 2 not a multiple of KV heads 3"},
		{"short q", func(s *Sample) { s.Q = s.Q[1:] }, "q", "", "has 63 elements, shape [1 2 8 4] needs 64"},
		{"long v", func(s *Sample) { s.V = append(s.V, 0) }, "v", "", "has 33 elements"},
		{"short attn", func(s *Sample) { s.Attn = s.Attn[:3] }, "attn", "", "has 3 elements, shape [1 2 8 8] needs 128"},
		{"over MaxElements without overflow", func(s *Sample) { s.L, s.H, s.N = MaxDim, MaxDim, MaxDim }, "q", "", "more than MaxElements"},
		{"NaN in k", func(s *Sample) { s.K[9] = float32(math.NaN()) }, "k", "", "non-finite value NaN at [0 0 2 1] (flat index 9)"},
		{"Inf in attn", func(s *Sample) { s.Attn[127] = float32(math.Inf(-1)) }, "attn", "", "non-finite value -Inf at [0 1 7 7]"},
		{"negative attention", func(s *Sample) { s.Attn[17] = -1e-9 }, "attn", "", "value -1e-09 at [0 0 2 1] (flat index 17) is not a probability"},
		{"attention above 1", func(s *Sample) { s.Attn[8] = 1.0001 }, "attn", "", "is not a probability"},
		{"attention row sum", func(s *Sample) { s.Attn[120] += 0.02 }, "attn", "", "row [0 1 7] sums to 1.02, want 1 ± 0.01"},
		{"attention row sum within tolerance", func(s *Sample) { s.Attn[120] += 0.009 }, "", "", ""},
		{"negative prefix", func(s *Sample) { s.Meta.Prefix = -1 }, "", "prefix", "negative prefix -1"},
		{"prefix 1", func(s *Sample) { s.Meta.Prefix = 1 }, "", "prefix", "prefix 1 out of range [2, N=8]"},
		{"prefix past N", func(s *Sample) { s.Meta.Prefix = 9 }, "", "prefix", "out of range"},
		{"default prefix of N=1", func(s *Sample) { *s = *testSample(1, 1, 1, 1, 2, true, false) }, "", "prefix", "prefix 1 out of range [2, N=1]"},
		{"negative scale", func(s *Sample) { s.Meta.Scale = -1 }, "", "scale", "bad scale -1"},
		{"infinite scale", func(s *Sample) { s.Meta.Scale = math.Inf(1) }, "", "scale", "bad scale"},
		{"too few tokens", func(s *Sample) { s.Meta.Tokens = []string{"a"} }, "", "tokens", "1 tokens for N=8"},
		{"empty non-nil tokens", func(s *Sample) { s.Meta.Tokens = []string{} }, "", "tokens", "0 tokens for N=8"},
		{"invalid UTF-8 token", func(s *Sample) { s.Meta.Tokens = make([]string, 8); s.Meta.Tokens[3] = "\xff" }, "", "tokens", "token 3"},
		{"invalid UTF-8 model", func(s *Sample) { s.Meta.Model = "a\xc3" }, "", "model", "not valid UTF-8"},
		{"invalid UTF-8 in Extra", func(s *Sample) { s.Meta.Extra = map[string]string{"a": "ok", "k": "\xff"} }, "", "k", "not valid UTF-8"},
		{"needle in the probes", func(s *Sample) { s.Meta.Needles = []int{7} }, "", "needles", "needle position 7 outside the prefix [0, 7)"},
		{"negative needle", func(s *Sample) { s.Meta.Needles = []int{-1} }, "", "needles", "outside"},
		{"needle probe past the probes", func(s *Sample) { s.Meta.NeedleProbes = []int{1} }, "", "needle_probes", "needle probe 1 outside the probes [0, 1)"},
		{"reserved key in Extra", func(s *Sample) { s.Meta.Extra = map[string]string{"model": "x"} }, "", "model", "reserved key"},
		{"format key in Extra", func(s *Sample) { s.Meta.Extra = map[string]string{KeyFormat: "1"} }, "", KeyFormat, "reserved key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSample(1, 2, 1, 8, 4, true, true)
			tt.mutate(s)
			err := s.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error containing %q", tt.want)
			}
			if !strings.HasPrefix(err.Error(), "sample: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %q, want it to contain %q", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Tensor != tt.tensor || e.Key != tt.key || e.File != "" {
				t.Errorf("error %#v, want an *Error with Tensor %q Key %q", err, tt.tensor, tt.key)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		n, d, prefix int
		scale        float64
		wantPrefix   int
		wantScale    float64
	}{
		{8, 4, 0, 0, 7, 0.5},         // N - min(64, N/8) = 8 - 1
		{1024, 64, 0, 0, 960, 0.125}, // 1024 - 64
		{100, 16, 90, 0.2, 90, 0.2},  // from metadata
		{16, 9, 0, 0, 14, 1.0 / 3},   // 16 - 2
		{2, 1, 0, 0, 2, 1},           // N/8 = 0: no probes
	}
	for _, tt := range tests {
		s := testSample(1, 1, 1, tt.n, tt.d, true, false)
		s.Meta.Prefix, s.Meta.Scale = tt.prefix, tt.scale
		if got := s.Prefix(); got != tt.wantPrefix {
			t.Errorf("N=%d prefix %d: Prefix() = %d, want %d", tt.n, tt.prefix, got, tt.wantPrefix)
		}
		if got := s.Scale(); math.Abs(got-tt.wantScale) > 1e-15 {
			t.Errorf("D=%d scale %v: Scale() = %v, want %v", tt.d, tt.scale, got, tt.wantScale)
		}
	}
}

func TestViews(t *testing.T) {
	s := testSample(2, 4, 2, 5, 3, true, true)
	tests := []struct {
		name    string
		view    []float32
		full    []float32
		offset  int
		wantLen int
	}{
		{"QHead(1,3)", s.QHead(1, 3), s.Q, ((1*4 + 3) * 5) * 3, 15},
		{"KHead(1,1)", s.KHead(1, 1), s.K, ((1*2 + 1) * 5) * 3, 15},
		{"VHead(0,1)", s.VHead(0, 1), s.V, ((0*2 + 1) * 5) * 3, 15},
		{"AttnHead(1,2)", s.AttnHead(1, 2), s.Attn, (1*4 + 2) * 25, 25},
	}
	for _, tt := range tests {
		if len(tt.view) != tt.wantLen || &tt.view[0] != &tt.full[tt.offset] {
			t.Errorf("%s: wrong view (len %d, want %d at offset %d)", tt.name, len(tt.view), tt.wantLen, tt.offset)
		}
	}
	if s.Group() != 2 || s.KVHeadOf(3) != 1 || s.KVHeadOf(1) != 0 {
		t.Errorf("Group %d KVHeadOf(3) %d KVHeadOf(1) %d, want 2 1 0", s.Group(), s.KVHeadOf(3), s.KVHeadOf(1))
	}
}

func TestElements(t *testing.T) {
	tests := []struct {
		dims []int
		want int
	}{
		{nil, 1},
		{[]int{2, 3, 4}, 24},
		{[]int{0, 5}, 0},
		{[]int{-1, 5}, -1},
		{[]int{1 << 15, 1 << 15}, 1 << 30},
		{[]int{1 << 15, 1<<15 + 1}, -1},
		{[]int{MaxDim, MaxDim, MaxDim, MaxDim}, -1},
		{[]int{math.MaxInt, 2}, -1},
	}
	for _, tt := range tests {
		if got := elements(tt.dims); got != tt.want {
			t.Errorf("elements(%v) = %d, want %d", tt.dims, got, tt.want)
		}
	}
}

// TestValidateMaxima checks that ValidateMaxima gives each head's MaxMag
// of a valid q/k/v sample, nil for an attention-only one, and the error of
// Validate for an invalid one.
func TestValidateMaxima(t *testing.T) {
	s := &Sample{L: 2, H: 4, HKV: 2, N: 3, D: 2}
	s.Q, s.K, s.V = make([]float32, 2*4*3*2), make([]float32, 2*2*3*2), make([]float32, 2*2*3*2)
	for i := range s.Q {
		s.Q[i] = float32(i%7) - 3.5
	}
	for i := range s.K {
		s.K[i], s.V[i] = float32(i)*0.25, -float32(i%5)
	}
	mx, err := s.ValidateMaxima()
	if err != nil {
		t.Fatal(err)
	}
	for l := range s.L {
		for h := range s.H {
			if got, want := mx.Q[l*s.H+h], MaxMag(s.QHead(l, h)); got != want {
				t.Errorf("q layer %d head %d: %#x, want %#x", l, h, got, want)
			}
		}
		for kv := range s.HKV {
			if got, want := mx.K[l*s.HKV+kv], MaxMag(s.KHead(l, kv)); got != want {
				t.Errorf("k layer %d KV head %d: %#x, want %#x", l, kv, got, want)
			}
			if got, want := mx.V[l*s.HKV+kv], MaxMag(s.VHead(l, kv)); got != want {
				t.Errorf("v layer %d KV head %d: %#x, want %#x", l, kv, got, want)
			}
		}
	}
	s.V[len(s.V)-1] = float32(math.Inf(-1))
	if mx, err := s.ValidateMaxima(); mx != nil || err == nil || err.Error() != s.Validate().Error() {
		t.Errorf("with -Inf in v: %v, %v; want nil and Validate's error %v", mx, err, s.Validate())
	}
	a := &Sample{L: 1, H: 1, N: 2, Attn: []float32{1, 0, 0.5, 0.5}}
	if mx, err := a.ValidateMaxima(); mx != nil || err != nil {
		t.Errorf("attention-only: %v, %v; want nil, nil", mx, err)
	}
}
