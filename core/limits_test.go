package core

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/half"
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
	want := "sample too large to analyse: analysing its 1 KV head(s) (N=1048576, d=1, 1 query head(s) per KV head) and compressing one takes about 2128 MiB, more than 384 MiB, the default limit, the larger of 256 MiB and 32 x the sample's 12 MiB (Options.MaxAnalysisBytes)"
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("NewModel = %v,\nwant %q", err, want)
	}
	if _, err := NewModel(s, Options{MaxAnalysisBytes: 3 << 30}); err != nil {
		t.Errorf("with MaxAnalysisBytes 3 GiB: %v", err)
	}
	if got, prefix := WorkBytes(s), int64(n-64); got != 4*(16+2*64)*prefix {
		t.Errorf("WorkBytes = %d, want 16 n d + 2 t n floats", got)
	}
	if got := GroupBytes(s, Options{}); got < 1500<<20 || got > 1600<<20 {
		t.Errorf("GroupBytes = %d, want about 1.5 GiB", got)
	}
	// Many KV heads add up: 64 KV heads of N = 2^14, d = 2 (a 24 MiB
	// sample) take about 1.5 GiB in all, though each takes only 24 MiB
	// (and a job 10 MiB).
	many := &sample.Sample{L: 4, H: 16, HKV: 16, N: 1 << 14, D: 2}
	many.Q, many.K, many.V = make([]float32, 4*16<<14*2), make([]float32, 4*16<<14*2), make([]float32, 4*16<<14*2)
	_, err = NewModel(many, Options{})
	want = "sample too large to analyse: analysing its 64 KV head(s) (N=16384, d=2, 1 query head(s) per KV head) and compressing one takes about 1557 MiB, more than 768 MiB"
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("NewModel = %v,\nwant %q...", err, want)
	}
	// A sweep runs as many jobs at once as fit beside the analyses.
	a, w := AnalysisBytes(many, Options{}), WorkBytes(many)
	for _, c := range []struct {
		limit int64
		want  int
	}{{a + w, 1}, {a + 3*w + w/2, 3}, {a + 100*w, 16}, {-1, 16}} {
		m, err := NewModel(many, Options{MaxAnalysisBytes: c.limit})
		if err != nil {
			t.Fatalf("limit %d: %v", c.limit, err)
		}
		if got := m.jobs(16); got != c.want {
			t.Errorf("limit %d (analyses %d, a job %d): %d jobs of 16, want %d", c.limit, a, w, got, c.want)
		}
	}
	if _, err := NewModel(many, Options{MaxAnalysisBytes: a + w - 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("no room for one job: %v", err)
	}
	// The shipped-size samples stay well within: the default preset's
	// shape (4 layers, 4 heads on 1 KV head, N = 1024, d = 64).
	def := testSample(1, 4, 4, 1, 1024, 64)
	if _, err := NewModel(def, Options{}); err != nil {
		t.Errorf("a default-sized sample: %v", err)
	}
	if _, err := NewModel(s, Options{MaxAnalysisBytes: -1}); err != nil {
		t.Errorf("no limit: %v", err)
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

// TestMagnitudePaths checks magnitude(sample.MaxMag(x)), the largest |x[i]|
// checkMagnitudes works with, against a plain loop, bit for bit (a NaN's
// bits too; sample.TestMaxMagPaths runs each path of MaxMag), on every window of 0 to 40 elements (the loops' tails)
// along float32s of every exponent, sign and class: every bfloat16's and
// float16's value, then random bit patterns.
func TestMagnitudePaths(t *testing.T) {
	var x []float32
	for h := range 1 << 16 {
		x = append(x, half.BF16ToF32(uint16(h)), half.F16ToF32(uint16(h)))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 16 {
		x = append(x, math.Float32frombits(r.Uint32()))
	}
	ref := func(x []float32) uint64 {
		var m uint32
		for _, v := range x {
			m = max(m, math.Float32bits(v)&0x7fffffff)
		}
		return math.Float64bits(float64(math.Float32frombits(m)))
	}
	if got, want := math.Float64bits(magnitude(sample.MaxMag(x))), ref(x); got != want {
		t.Fatalf("magnitude of all = %#016x, want %#016x", got, want)
	}
	for i := 0; i+40 <= len(x); i += 1 + i%97 {
		for n := range 41 {
			if got, want := math.Float64bits(magnitude(sample.MaxMag(x[i:i+n]))), ref(x[i:i+n]); got != want {
				t.Fatalf("magnitude of x[%d:%d] = %#016x, want %#016x", i, i+n, got, want)
			}
		}
	}
}
