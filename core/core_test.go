package core

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/haeols/haeols/core/sample"
)

// testSample is a small random sample with some structure: a sink at
// position 0, a few strong keys, and a query bias so attention is peaked.
func testSample(seed uint64, l, h, hkv, n, d int) *sample.Sample {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &sample.Sample{L: l, H: h, HKV: hkv, N: n, D: d}
	s.Q = make([]float32, l*h*n*d)
	s.K = make([]float32, l*hkv*n*d)
	s.V = make([]float32, l*hkv*n*d)
	for i := range s.Q {
		s.Q[i] = float32(r.NormFloat64())
	}
	for i := range s.K {
		s.K[i] = float32(r.NormFloat64())
		s.V[i] = float32(r.NormFloat64())
	}
	// A sink and a few strong keys aligned with channel 0 of all queries.
	for li := 0; li < l; li++ {
		for kv := 0; kv < hkv; kv++ {
			k := s.KHead(li, kv)
			for _, j := range []int{0, n / 3, n / 2} {
				k[j*d] += 4
			}
		}
		for hh := 0; hh < h; hh++ {
			q := s.QHead(li, hh)
			for i := 0; i < n; i++ {
				q[i*d] += 2
			}
		}
	}
	s.Meta.Needles = []int{n / 3}
	s.Meta.NeedleProbes = []int{0, 1}
	return s
}

func analyzeT(t testing.TB, s *sample.Sample, l, kv int) *Group {
	t.Helper()
	g, err := Analyze(s, l, kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRatioOneIsExact(t *testing.T) {
	g := analyzeT(t, testSample(1, 1, 4, 2, 200, 16), 0, 1)
	for _, name := range MethodNames() {
		c, err := g.Compress(name, DefaultParams(1))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for hi := range g.Heads {
			m := g.Evaluate(c, hi)
			if m.Err != 0 || m.ErrMax != 0 || m.ErrCal != 0 || m.Ratio != 1 {
				t.Errorf("%s head %d at ratio 1: err=%g err_max=%g err_cal=%g ratio=%g, want 0,0,0,1", name, hi, m.Err, m.ErrMax, m.ErrCal, m.Ratio)
			}
		}
	}
}

func TestUsedRatioNeverAboveAsked(t *testing.T) {
	g := analyzeT(t, testSample(2, 1, 2, 1, 300, 16), 0, 0)
	eviction := map[string]bool{"topk": true, "snapkv": true, "streaming": true, "entropy": true}
	for _, name := range MethodNames() {
		for _, rho := range []float64{0.01, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.5, 0.7, 0.9, 1} {
			c, err := g.Compress(name, DefaultParams(rho))
			if err == nil && name == "hae-ols" {
				// The SVD stage (off by default) must keep the budget too.
				p := DefaultParams(rho)
				p.Tau = 0.9
				var c2 *Cache
				if c2, err = g.Compress(name, p); err == nil && c2.Ratio() > rho+1e-12 {
					t.Errorf("hae-ols tau 0.9 at %g used ratio %g", rho, c2.Ratio())
				}
			}
			if errors.Is(err, ErrDoesNotFit) {
				continue
			}
			if err != nil {
				t.Fatalf("%s at %g: %v", name, rho, err)
			}
			if name == "full" {
				continue
			}
			if got := c.Ratio(); got > rho+1e-12 {
				t.Errorf("%s at %g used ratio %g", name, rho, got)
			}
			if eviction[name] && c.Ratio() < rho-1/float64(g.N)-1e-12 {
				t.Errorf("%s at %g used only %g (more than one slot left)", name, rho, c.Ratio())
			}
			m := g.Evaluate(c, 0)
			if !isFinite(m.Err) || m.Err < 0 || m.Cos > 1+1e-9 {
				t.Errorf("%s at %g: err %g cos %g", name, rho, m.Err, m.Cos)
			}
		}
	}
}

func TestQuantDoesNotFitIsReported(t *testing.T) {
	g := analyzeT(t, testSample(3, 1, 1, 1, 300, 64), 0, 0)
	_, err := g.Compress("quant", DefaultParams(0.1))
	if !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("quant at 0.1: err %v, want ErrDoesNotFit", err)
	}
	// n = 263, d = 64, 32 recent tokens at 16 bits; a quantized number costs
	// w bits plus 1 bit of fp16 scale+zero per group of 32: 4 bits need
	// (231*5 + 32*16) / (263*16) = 0.396, 3 bits 0.341, 2 bits 0.286.
	for _, tt := range []struct {
		rho  float64
		bits int
	}{{0.3, 2}, {0.35, 3}, {0.4, 4}, {0.9, 8}, {1, 16}} {
		c, err := g.Compress("quant", DefaultParams(tt.rho))
		if err != nil {
			t.Fatal(err)
		}
		if c.Stages.QuantBits != tt.bits {
			t.Errorf("quant at %g chose %d bits, want %d", tt.rho, c.Stages.QuantBits, tt.bits)
		}
	}
}

// With one summary per bin token, the centroid keys are the bin's keys, the
// NNLS weights are 1 and the pseudoinverse returns the bin's values, so the
// compressed cache reproduces the calibration outputs.
func TestOneSummaryPerBinTokenReproducesCalibration(t *testing.T) {
	s := testSample(4, 1, 2, 1, 120, 8)
	g := analyzeT(t, s, 0, 0)
	b, err := NewBudget(g.N, g.D, 0.5, 4, 8)
	if err != nil {
		t.Fatal(err)
	}
	var bin []int32
	for j := 20; j < 60; j += 2 { // 20 bin tokens, 2*W = 120 calibration rows
		bin = append(bin, int32(j))
	}
	f, err := g.fitSummaries(new(scratch), &binOrder{idx: bin}, 0, bin, len(bin), 1, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.kept != len(bin) {
		t.Fatalf("kept %d summaries of %d", f.kept, len(bin))
	}
	c := newCache("test", b)
	inBin := map[int32]bool{}
	for _, j := range bin {
		inBin[j] = true
	}
	for j := 0; j < g.N; j++ {
		if !inBin[int32(j)] {
			c.keepExact([]int32{int32(j)}, Anchor)
		}
	}
	c.finishExact()
	c.C, c.Keys, c.Values, c.Bias = f.kept, f.keys, f.values, f.bias
	for hi := range g.Heads {
		m := g.Evaluate(c, hi)
		// float32 outputs of length-d sums: a few ulp relative.
		if m.ErrCal > 1e-5 {
			t.Errorf("head %d: calibration error %g with one summary per bin token", hi, m.ErrCal)
		}
	}
	// beta = 1 up to the float32 rounding of the attention the targets come
	// from, amplified by the conditioning of the features: 1e-4.
	for t2, b := range f.bias {
		if math.Abs(float64(b)) > 1e-4 {
			t.Errorf("summary %d: bias %g, want ln 1 = 0", t2, b)
		}
	}
}

func TestZeroPhiLambdaIsTopK(t *testing.T) {
	g := analyzeT(t, testSample(5, 1, 2, 1, 256, 16), 0, 0)
	p := DefaultParams(0.3)
	p.Phi, p.Lambda, p.Tau = 0, 0, 1
	a, err := g.Compress("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Compress("topk", p)
	if err != nil {
		t.Fatal(err)
	}
	for j := range a.Class {
		if a.Class[j] != b.Class[j] {
			t.Fatalf("token %d: hae-ols(phi=0,lambda=0) %v, topk %v", j, a.Class[j], b.Class[j])
		}
	}
}

func TestDeterministic(t *testing.T) {
	s := testSample(6, 1, 4, 2, 256, 16)
	for _, name := range MethodNames() {
		var first Metrics
		for rep := 0; rep < 2; rep++ {
			g := analyzeT(t, s, 0, 1)
			c, err := g.Compress(name, DefaultParams(0.3))
			if err != nil {
				t.Fatal(err)
			}
			m := g.Evaluate(c, 1)
			if rep == 0 {
				first = m
				continue
			}
			if math.Float64bits(m.Err) != math.Float64bits(first.Err) || math.Float64bits(m.ErrCal) != math.Float64bits(first.ErrCal) {
				t.Errorf("%s: run 2 err %v/%v, run 1 %v/%v", name, m.Err, m.ErrCal, first.Err, first.ErrCal)
			}
		}
	}
}

func TestHAEBeatsNothingAtAll(t *testing.T) {
	// Sanity: summaries must help relative to dropping the bin on this
	// structured sample's calibration queries (in-sample, where OLS is fit).
	g := analyzeT(t, testSample(7, 1, 2, 1, 400, 16), 0, 0)
	p := DefaultParams(0.2)
	p.Tau = 1
	h, err := g.Compress("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	p.Phi = 0
	e, err := g.Compress("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	mh, me := g.Evaluate(h, 0), g.Evaluate(e, 0)
	if h.Stages.Summaries == 0 {
		t.Fatalf("no summaries fitted: %+v", h.Stages)
	}
	if mh.ErrCal >= me.ErrCal {
		t.Errorf("calibration error with summaries %g, without %g", mh.ErrCal, me.ErrCal)
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		n, d          int
		rho           float64
		slots, sk, rc int
	}{
		{1024, 64, 0.3, 307, 4, 32},
		{1000, 64, 0.7, 700, 4, 32},
		{100, 8, 0.2, 20, 4, 16},
		{100, 8, 0.03, 3, 3, 0},
		{100, 8, 1, 100, 4, 32},
		{10, 8, 1, 10, 4, 6},
	}
	for _, tt := range tests {
		b, err := NewBudget(tt.n, tt.d, tt.rho, 4, 32)
		if err != nil {
			t.Fatal(err)
		}
		if b.Slots != tt.slots || b.Sinks != tt.sk || b.Recent != tt.rc {
			t.Errorf("NewBudget(%d, %d, %g) = %d slots, %d sinks, %d recent; want %d, %d, %d", tt.n, tt.d, tt.rho, b.Slots, b.Sinks, b.Recent, tt.slots, tt.sk, tt.rc)
		}
	}
	for _, rho := range []float64{0, -0.1, 1.01, math.NaN()} {
		if _, err := NewBudget(10, 8, rho, 4, 32); err == nil {
			t.Errorf("NewBudget accepted ratio %v", rho)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Params)
	}{
		{"ratio", func(p *Params) { p.Ratio = 0 }},
		{"ratio", func(p *Params) { p.Ratio = math.NaN() }},
		{"lambda", func(p *Params) { p.Lambda = 1.5 }},
		{"phi", func(p *Params) { p.Phi = -0.1 }},
		{"tau", func(p *Params) { p.Tau = 0 }},
		{"sinks", func(p *Params) { p.Sinks = -1 }},
		{"recent", func(p *Params) { p.Recent = -1 }},
	}
	for _, tt := range tests {
		p := DefaultParams(0.3)
		tt.edit(&p)
		err := p.Validate()
		if err == nil || !contains(err.Error(), tt.name) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tt.name, err, tt.name)
		}
	}
	if err := DefaultParams(0.3).Validate(); err != nil {
		t.Error(err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestAnalyzeErrors(t *testing.T) {
	s := testSample(8, 1, 2, 1, 64, 8)
	if _, err := Analyze(s, 1, 0, Options{}); err == nil {
		t.Error("layer out of range accepted")
	}
	if _, err := Analyze(s, 0, 0, Options{Calib: 1000}); err == nil {
		t.Error("calibration rows beyond the prefix accepted")
	}
	s.Meta.Prefix = s.N
	if _, err := Analyze(s, 0, 0, Options{}); err == nil {
		t.Error("sample without probes accepted")
	}
	if _, err := Lookup("nope"); err == nil || !contains(err.Error(), "hae-ols") {
		t.Errorf("Lookup(nope) = %v, want an error listing the methods", err)
	}
}

// The SVD stage stores the summaries at a lower rank and spends the saving on
// extra exact anchors.
func TestSVDStageBuysBackAnchors(t *testing.T) {
	g := analyzeT(t, testSample(9, 1, 2, 1, 600, 32), 0, 0)
	p := DefaultParams(0.3)
	p.Tau = 0.8
	c, err := g.Compress("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	p.Tau = 1
	dense, err := g.Compress("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stages
	if st.Summaries == 0 || st.RankV >= min(st.Summaries, g.D) && st.RankK >= min(st.Summaries, g.D) {
		t.Fatalf("no factor stored at lower rank: %+v", st)
	}
	if st.ExtraAnchors <= 0 || st.Anchors <= dense.Stages.Anchors {
		t.Errorf("SVD stage bought back %d anchors (%d vs %d without it)", st.ExtraAnchors, st.Anchors, dense.Stages.Anchors)
	}
	if c.Bits > c.Budget.Bits() {
		t.Errorf("used %d bits of %d", c.Bits, c.Budget.Bits())
	}
}

// With the SVD stage off (tau = 1) every summary is stored dense, also after
// the re-plans that spend unused slots on anchors.
func TestTauOneStoresDense(t *testing.T) {
	g := analyzeT(t, testSample(10, 1, 4, 1, 700, 32), 0, 0)
	for _, rho := range []float64{0.1, 0.2, 0.3, 0.5} {
		c, err := g.Compress("hae-ols", DefaultParams(rho))
		if err != nil {
			t.Fatal(err)
		}
		st := c.Stages
		if full := min(st.Summaries, g.D); st.Summaries > 0 && (st.RankK != full || st.RankV != full) {
			t.Errorf("ratio %g: tau = 1 stored ranks K %d V %d of %d summaries", rho, st.RankK, st.RankV, st.Summaries)
		}
		if c.Ratio() > rho+1e-12 {
			t.Errorf("ratio %g: used %g", rho, c.Ratio())
		}
	}
}

// TestTunes checks what Tunes claims on the default preset's first KV
// head: a method's metrics do not move with a parameter it does not
// tune (so a cache of results may leave that parameter out), and they do
// move with each one it tunes, for some value.
func TestTunes(t *testing.T) {
	g := defaultGroup(t, 0, 0)
	set := map[string]func(p *Params, x float64){
		"lambda": func(p *Params, x float64) { p.Lambda = x },
		"phi":    func(p *Params, x float64) { p.Phi = x },
		"tau":    func(p *Params, x float64) { p.Tau = x },
	}
	for _, meth := range MethodNames() {
		for param, f := range set {
			var errs []float64
			for _, x := range []float64{0.6, 0.9} {
				p := DefaultParams(0.3)
				f(&p, x)
				c, err := g.Compress(meth, p)
				if err != nil {
					errs = append(errs, -1)
					continue
				}
				errs = append(errs, g.Evaluate(c, 0).Err)
			}
			moved := errs[0] != errs[1]
			if tunes := Tunes(meth, param); moved != tunes {
				t.Errorf("%s with %s 0.6 and 0.9: err %v; Tunes says %v", meth, param, errs, tunes)
			}
		}
	}
}
