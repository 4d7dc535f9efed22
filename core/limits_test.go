package core

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/sample"
)

// TestNewModelLimits checks that NewModel refuses absurd shapes with a
// message naming the limit and the option that overrides it, and that the
// override works.
func TestNewModelLimits(t *testing.T) {
	// N = 2^20 positions, d = 1: a 12 MiB sample whose analysis takes
	// about 1.5 GiB per KV head.
	n := 1 << 20
	s := &sample.Sample{L: 1, H: 1, HKV: 1, N: n, D: 1, Q: make([]float32, n), K: make([]float32, n), V: make([]float32, n)}
	_, err := NewModel(s, Options{})
	want := "sample too large to analyse: analysing one KV head (N=1048576, d=1, 1 query head(s) per KV head) takes about 1552 MiB, more than the limit of 1024 MiB (Options.MaxGroupBytes)"
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("NewModel = %v,\nwant %q", err, want)
	}
	if _, err := NewModel(s, Options{MaxGroupBytes: 2 << 30}); err != nil {
		t.Errorf("with MaxGroupBytes 2 GiB: %v", err)
	}
	if got := GroupBytes(s, Options{}); got < 1500<<20 || got > 1600<<20 {
		t.Errorf("GroupBytes = %d, want about 1.5 GiB", got)
	}

	heads := &sample.Sample{L: 300, H: 300, HKV: 300, N: 3, D: 1}
	heads.Q, heads.K, heads.V = make([]float32, 300*300*3), make([]float32, 300*300*3), make([]float32, 300*300*3)
	heads.Meta.Prefix = 2
	want = "sample too large to analyse: 300 layers x 300 heads = 90000 query heads, more than core.MaxHeads = 65536"
	if _, err := NewModel(heads, Options{}); !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("NewModel = %v, want %q", err, want)
	}

	noProbes := testSample(8, 1, 2, 1, 16, 4)
	noProbes.Meta.Prefix, noProbes.Meta.NeedleProbes = 16, nil
	want = `no probe queries: the prefix (metadata "prefix") is 16 = N 16; the positions after it are the held-out probes`
	if _, err := NewModel(noProbes, Options{}); err == nil || err.Error() != want {
		t.Errorf("NewModel = %v, want %q", err, want)
	}
}

// TestNonFiniteIsAnError checks that values whose logits overflow float32
// make the analysis fail naming the layer, the KV head and the cause, and
// that values whose outputs overflow make the metrics fail CheckFinite,
// naming the head, the method and the metric.
func TestNonFiniteIsAnError(t *testing.T) {
	s := testSample(3, 1, 2, 1, 32, 4)
	for i := range s.Q {
		s.Q[i] *= 1e30
	}
	for i := range s.K {
		s.K[i] *= 1e30
	}
	_, err := NewModel(s, Options{})
	want := "non-finite result: layer 0 head 0: |q| up to 4.88e+30 and |k| up to 4.76e+30 overflow the float32 attention logits (d=4, scale 0.5); the sample's values are too large"
	if !errors.Is(err, ErrNonFinite) || err.Error() != want {
		t.Errorf("NewModel = %v,\nwant %q", err, want)
	}
	// The analysis checks what it computes too.
	_, err = Analyze(s, 0, 0, Options{})
	want = "analyze layer 0 KV head 0: non-finite result: the calibration logits overflow float32"
	if !errors.Is(err, ErrNonFinite) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Analyze = %v, want %q...", err, want)
	}

	s = testSample(3, 1, 2, 1, 32, 4)
	for i := range s.V {
		s.V[i] = math.MaxFloat32
	}
	_, err = NewModel(s, Options{})
	want = "non-finite result: layer 0 KV head 0: |v| up to 3.4e+38 over N=32 positions overflows the float32 attention outputs"
	if !errors.Is(err, ErrNonFinite) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("NewModel = %v, want %q...", err, want)
	}
	_, err = Analyze(s, 0, 0, Options{})
	want = "analyze layer 0 KV head 0: non-finite result: the calibration outputs overflow float32"
	if !errors.Is(err, ErrNonFinite) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Analyze = %v, want %q...", err, want)
	}

	for _, c := range []struct {
		m    Metrics
		want string
	}{
		{Metrics{Method: "topk", Layer: 2, Head: 5, Err: math.NaN()}, "layer 2 head 5, topk: non-finite result: err = NaN"},
		{Metrics{Method: "snapkv", Err: 0.1, ErrMax: math.Inf(1)}, "layer 0 head 0, snapkv: non-finite result: err_max = +Inf"},
		{Metrics{Method: "topk", Err: 0.1, Cos: math.NaN()}, "layer 0 head 0, topk: non-finite result: cos = NaN"},
		{Metrics{Method: "topk", Metric: MetricLostMass, Err: 0.1, Cos: math.NaN(), NeedleErr: math.NaN()}, ""},
	} {
		err := c.m.CheckFinite()
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v, want nil", c.m, err)
			}
			continue
		}
		if !errors.Is(err, ErrNonFinite) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("CheckFinite = %v, want %q...", err, c.want)
		}
	}
}
