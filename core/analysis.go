package core

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/haeols/haeols/core/kernel"
	"github.com/haeols/haeols/core/sample"
)

// Options are the analysis settings that do not change while a user scrubs.
type Options struct {
	// Calib is w, the number of calibration queries per query head (the last
	// w prefix queries); 0 means min(128, n/2).
	Calib int
	// MaxAnalysisBytes is the most memory the analyses of all KV heads
	// (AnalysisBytes) and the running jobs of a sweep (WorkBytes each) may
	// take together; 0 means DefaultMaxAnalysisBytes of the sample,
	// negative no limit. NewModel refuses a sample where the analyses and
	// one job do not fit; a sweep runs as many jobs at once as fit.
	MaxAnalysisBytes int64
	// Accel, when set, runs the analysis and the output metrics on another
	// device (a *gpu.Device of package core/gpu); nil runs everything on the
	// CPU kernels of core/kernel. The methods' choices and the small solves
	// stay on the CPU either way.
	Accel Accelerator
}

// Accelerator runs the heavy kernels of an analysis and of the output
// metrics on another device, with the semantics of core/kernel (within
// float32 tolerances). Package core/gpu implements it with WGSL compute
// shaders.
type Accelerator interface {
	// Calibrate is kernel.Calibrate.
	Calibrate(st *kernel.Stats, q []float32, m int, k, v []float32, n, d int, scale float32) error
	// Logits is kernel.Logits plus an optional per-key bias.
	Logits(dst, q []float32, m int, k []float32, n, d int, scale float32, bias []float32) error
	// Attend writes the attention outputs of the m rows q over c keys with
	// values and optional logit biases; row i sees every key, or, when
	// causal, the first base+i+1.
	Attend(out, q []float32, m int, keys, vals []float32, c, d int, scale float32, bias []float32, base int, causal bool) error
	// BinMass is kernel.BinMass (the least-squares targets of HAE-OLS).
	BinMass(z, y, a []float32, m, n int, idx []int32, v []float32, d int) error
	// Features sets f[i*ns+t] = exp(scale q_i . k_t - mu_i), the summary
	// features of the least-squares fit.
	Features(f, q []float32, m int, k []float32, ns, d int, scale float32, mu []float32) error
}

// Group is the analysis of one KV head (HAE-OLS.md §1) and the query heads
// that share it (grouped-query attention): everything that does not depend on
// the method, the ratio or the parameters, computed once.
//
// For an attention-only sample (AttnOnly) a group is one query head; A,
// Salience, KeyEntropy and RowEntropy come from the sample's attention and
// K, V, Qc, S, Mu, RowSum and Oc are nil (see Analyze).
type Group struct {
	Layer, KV int
	Heads     []int // the query heads that use this KV head
	N, D      int   // prefix length, head dim
	W         int   // calibration queries per query head
	Rows      int   // calibration rows of the group: len(Heads) * W
	T         int   // probe queries per query head
	Scale     float32
	// AttnOnly marks a group analysed from attention probabilities alone
	// (Scale is then 0): only the eviction methods apply and the metrics are
	// the lost attention mass (MetricLostMass).
	AttnOnly bool

	K, V       []float32 // prefix keys and values, N x D (views of the sample)
	Qc         []float32 // calibration queries, Rows x D, head by head
	S          []float32 // calibration logits, Rows x N
	A          []float32 // calibration attention (row softmax of S), Rows x N
	Mu, RowSum []float32 // per row: max logit, sum of exp(S - Mu)
	Oc         []float32 // full-cache calibration outputs, Rows x D

	Salience   []float32 // a[j]: mean attention mass, N
	KeyEntropy []float32 // H[j] in [0, 1], N
	RowEntropy []float32 // per calibration row, in [0, 1], Rows

	Probes []*Probes // one per query head, in the order of Heads

	// Needles are needle positions in the prefix; NeedleProbes the probe
	// indices that ask for one (from the sample's metadata).
	Needles, NeedleProbes []int

	// accel runs the output metrics and the summary fits when the analysis
	// ran on it (nil after it failed: the CPU then); kAll and vAll are then
	// the keys and values of prefix and suffix (N x D).
	accel      atomic.Pointer[accelBox]
	kAll, vAll []float32

	memoMu    sync.Mutex
	memos     map[string]*memoEntry // each method's own state (Memo)
	probeOnce sync.Once
	probeP    []float32 // per head, T x N: probe softmax over the prefix
	probeM    []float32 // per head and probe: the prefix's max logit
	probeZ    []float32 // and sum of exp(S - max)
	mapsMu    sync.Mutex
	maps      *origMaps // the latest head's original map (Maps)
}

// probeSoftmax returns the probe rows' softmax over the prefix alone, all
// heads' T x N rows stacked, with each row's max logit and normaliser
// (P = exp(S - m) / z), computed on first use.
func (g *Group) probeSoftmax() (p, m, z []float32) {
	g.probeOnce.Do(func() {
		t, n := g.T, g.N
		h := len(g.Heads)
		g.probeP, g.probeM, g.probeZ = make([]float32, h*t*n), make([]float32, h*t), make([]float32, h*t)
		for hi, pr := range g.Probes {
			kernel.SoftmaxRows(g.probeP[hi*t*n:(hi+1)*t*n], pr.S, t, n, g.probeM[hi*t:(hi+1)*t], g.probeZ[hi*t:(hi+1)*t])
		}
	})
	return g.probeP, g.probeM, g.probeZ
}

// Probes are the held-out probe queries of one query head with their exact
// suffix attention and full-cache reference outputs (q/k/v samples), or
// their attention on the prefix (attention-only samples: Attn is set, Q, S,
// Suffix and O are nil).
type Probes struct {
	Head           int
	Q              []float32       // T x D
	S              []float32       // T x N logits against the prefix keys
	Suffix         *kernel.Partial // causal attention over the suffix keys
	O              []float32       // full-cache outputs, T x D
	MeanRowEntropy float64         // mean row entropy of this head's calibration queries
	// Attn is, for an attention-only group, each probe row's attention on
	// the N prefix positions, T x N, divided by the row's whole sum (prefix
	// and suffix), so that 1 - sum_j Attn[i,j] is the probe's (exact) mass on
	// the suffix.
	Attn []float32
}

// Analyze computes the group analysis of KV head kv in layer l of s.
//
// An attention-only sample (no q, k, v) is analysed per query head: kv is
// then the query head (s.KVHeads() = s.H) and the group holds only it. Its
// calibration rows are the attention rows of the last w prefix positions,
// restricted to the n prefix columns and renormalised to sum 1 (real
// attention is causal, so row i covers keys <= i and the prefix columns
// already hold all of its mass up to storage rounding; a row with no prefix
// mass becomes uniform). Salience, key entropy and row entropy use the same
// kernels as the q/k/v path. Unlike that path, whose calibration queries see
// the whole prefix, these rows are what the model computed (causal).
func Analyze(s *sample.Sample, l, kv int, opt Options) (*Group, error) {
	if l < 0 || l >= s.L || kv < 0 || kv >= s.KVHeads() {
		return nil, fmt.Errorf("analyze: layer %d / KV head %d out of range (%d layers, %d KV heads)", l, kv, s.L, s.KVHeads())
	}
	n, d := s.Prefix(), s.D
	t := s.N - n
	if t < 1 {
		return nil, fmt.Errorf("analyze: no probe queries (prefix %d = N %d)", n, s.N)
	}
	w := opt.Calib
	if w == 0 {
		w = min(128, n/2)
	}
	if w < 1 || w > n {
		return nil, fmt.Errorf("analyze: calibration queries %d outside [1, %d]", w, n)
	}
	if !s.HasQKV() {
		return analyzeAttn(s, l, kv, n, w), nil
	}
	gs := s.Group()
	g := &Group{
		Layer: l, KV: kv, N: n, D: d, W: w, Rows: gs * w, T: t,
		Scale:   float32(s.Scale()),
		Needles: s.Meta.Needles, NeedleProbes: s.Meta.NeedleProbes,
	}
	kAll, vAll := s.KHead(l, kv), s.VHead(l, kv)
	g.K, g.V = kAll[:n*d], vAll[:n*d]
	kSuf, vSuf := kAll[n*d:], vAll[n*d:]

	rows := g.Rows
	g.Qc = make([]float32, rows*d)
	for i := 0; i < gs; i++ {
		h := kv*gs + i
		g.Heads = append(g.Heads, h)
		q := s.QHead(l, h)
		copy(g.Qc[i*w*d:(i+1)*w*d], q[(n-w)*d:n*d])
	}
	st := kernel.NewStats(rows, n, d)
	if opt.Accel != nil {
		g.accel.Store(&accelBox{opt.Accel})
		g.kAll, g.vAll = kAll, vAll
		if err := opt.Accel.Calibrate(st, g.Qc, rows, g.K, g.V, n, d, g.Scale); err != nil {
			return nil, fmt.Errorf("analyze layer %d KV head %d: %w", l, kv, err)
		}
	} else {
		kernel.Calibrate(st, g.Qc, rows, g.K, g.V, n, d, g.Scale)
	}
	g.setStats(st)
	if err := checkFinite("the calibration logits", g.S); err != nil {
		return nil, fmt.Errorf("analyze layer %d KV head %d: %w", l, kv, err)
	}
	if err := checkFinite("the calibration outputs", g.Oc); err != nil {
		return nil, fmt.Errorf("analyze layer %d KV head %d: %w", l, kv, err)
	}

	work := make([]float32, max(t, n))
	for i, h := range g.Heads {
		p := &Probes{Head: h, Q: s.QHead(l, h)[n*d:], S: make([]float32, t*n), O: make([]float32, t*d)}
		p.Suffix = kernel.NewPartial(t, d)
		p.Suffix.AddKeys(p.Q, kSuf, vSuf, t, g.Scale, nil, true, work)
		if acc := g.acc(); acc != nil {
			// The references go through Attend, as every compressed cache
			// will (evaluateOutputs), so a full cache has error 0.
			err := acc.Logits(p.S, p.Q, t, g.K, n, d, g.Scale, nil)
			if err == nil {
				err = acc.Attend(p.O, p.Q, t, kAll, vAll, n+t, d, g.Scale, nil, n, true)
			}
			if err != nil {
				return nil, fmt.Errorf("analyze layer %d KV head %d, probes of head %d: %w", l, kv, h, err)
			}
		} else {
			kernel.Logits(p.S, p.Q, t, g.K, n, d, g.Scale)
			full := kernel.NewPartial(t, d)
			full.CopyFrom(p.Suffix)
			full.AddLogits(p.S, n, nil, g.V)
			full.Output(p.O)
		}
		var e float64
		for _, x := range g.RowEntropy[i*w : (i+1)*w] {
			e += float64(x)
		}
		p.MeanRowEntropy = e / float64(w)
		if err := checkFinite("the probe logits", p.S); err != nil {
			return nil, fmt.Errorf("analyze layer %d KV head %d, probes of head %d: %w", l, kv, h, err)
		}
		if err := checkFinite("the probe outputs", p.O); err != nil {
			return nil, fmt.Errorf("analyze layer %d KV head %d, probes of head %d: %w", l, kv, h, err)
		}
		g.Probes = append(g.Probes, p)
	}
	return g, nil
}

// accelBox holds a group's accelerator (atomic.Pointer needs a concrete
// type).
type accelBox struct{ a Accelerator }

// acc is the group's accelerator, nil for the CPU.
func (g *Group) acc() Accelerator {
	if b := g.accel.Load(); b != nil {
		return b.a
	}
	return nil
}

// dropAccel makes the group compute on the CPU from now on (its device
// failed); the CPU's numbers agree within the device's tolerances.
func (g *Group) dropAccel() { g.accel.Store(nil) }

// setStats takes the calibration statistics of st into g. The reference
// outputs st.O went through the same attention kernel as every compressed
// cache, so a cache that keeps all tokens has error exactly 0.
func (g *Group) setStats(st *kernel.Stats) {
	g.S, g.A, g.Mu, g.RowSum = st.S, st.A, st.Mu, st.RowSum
	g.Salience, g.KeyEntropy, g.RowEntropy, g.Oc = st.Salience, st.KeyEntropy, st.RowEntropy, st.O
}

// analyzeAttn is Analyze for an attention-only sample: query head h of
// layer l, prefix n, w calibration rows (both checked by Analyze).
func analyzeAttn(s *sample.Sample, l, h, n, w int) *Group {
	N, t := s.N, s.N-n
	g := &Group{
		Layer: l, KV: h, Heads: []int{h}, N: n, D: s.D, W: w, Rows: w, T: t, AttnOnly: true,
		Needles: s.Meta.Needles, NeedleProbes: s.Meta.NeedleProbes,
	}
	a := s.AttnHead(l, h)
	g.A = make([]float32, w*n)
	for i := 0; i < w; i++ {
		renormalize(g.A[i*n:(i+1)*n], a[(n-w+i)*N:(n-w+i)*N+n], a[(n-w+i)*N:(n-w+i)*N+n])
	}
	g.Salience = make([]float32, n)
	g.KeyEntropy = make([]float32, n)
	g.RowEntropy = make([]float32, w)
	kernel.KeyStats(g.Salience, g.KeyEntropy, g.A, w, n, make([]float32, 2*n))
	kernel.RowEntropy(g.RowEntropy, g.A, w, n)

	p := &Probes{Head: h, Attn: make([]float32, t*n)}
	for i := 0; i < t; i++ {
		row := a[(n+i)*N : (n+i+1)*N]
		renormalize(p.Attn[i*n:(i+1)*n], row[:n], row)
	}
	var e float64
	for _, x := range g.RowEntropy {
		e += float64(x)
	}
	p.MeanRowEntropy = e / float64(w)
	g.Probes = []*Probes{p}
	return g
}

// renormalize sets dst = src / sum(whole), the sum taken in float64 in
// order; a zero sum gives the uniform row 1/len(dst).
func renormalize(dst, src, whole []float32) {
	var sum float64
	for _, x := range whole {
		sum += float64(x)
	}
	for j, x := range src {
		if sum > 0 {
			dst[j] = float32(float64(x) / sum)
		} else {
			dst[j] = 1 / float32(len(dst))
		}
	}
}

// MeanRowEntropy is the mean row entropy of the group's calibration queries
// ("how diffuse is this head").
func (g *Group) MeanRowEntropy() float64 {
	var e float64
	for _, x := range g.RowEntropy {
		e += float64(x)
	}
	return e / float64(len(g.RowEntropy))
}

// HeadIndex returns the index in g.Heads of query head h, or -1.
func (g *Group) HeadIndex(h int) int {
	for i, x := range g.Heads {
		if x == h {
			return i
		}
	}
	return -1
}

// Compress runs the named method at parameters p.
func (g *Group) Compress(method string, p Params) (*Cache, error) {
	m, err := Lookup(method)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := m.Compress(g, p)
	if err != nil {
		return nil, fmt.Errorf("%s at ratio %.3g (layer %d, KV head %d): %w", method, p.Ratio, g.Layer, g.KV, err)
	}
	if c.Bits > c.Budget.Bits() {
		return nil, fmt.Errorf("%s: internal error: used %d bits over the budget of %d (layer %d, KV head %d)", method, c.Bits, c.Budget.Bits(), g.Layer, g.KV)
	}
	return c, nil
}

// budget returns the budget of the group's cache at ratio rho. An
// attention-only group has no head dim: it counts in slots, with d = 1 for
// the bit accounting, so its ratio is the slots kept over n.
func (g *Group) budget(rho float64, sinks, recent int) (Budget, error) {
	d := g.D
	if g.AttnOnly {
		d = 1
	}
	return NewBudget(g.N, d, rho, sinks, recent)
}

// needKV returns ErrNeedsKV for an attention-only group, for the methods
// that read keys and values.
func (g *Group) needKV() error {
	if g.AttnOnly {
		return ErrNeedsKV
	}
	return nil
}

// memoEntry is one method's state in a group, built once.
type memoEntry struct {
	once sync.Once
	v    any
}

// Memo returns the group's state kept under key (by convention the method's
// name, or a name its family shares), built by build on first use and kept
// for the group's life. A method keeps there what it derives from the
// analysis once and reuses at every ratio (pooled salience, SVDs, orders),
// so that its state lives in its own file. Concurrent callers of one key
// wait for the first build.
func (g *Group) Memo(key string, build func() any) any {
	g.memoMu.Lock()
	e, ok := g.memos[key]
	if !ok {
		if g.memos == nil {
			g.memos = map[string]*memoEntry{}
		}
		e = &memoEntry{}
		g.memos[key] = e
	}
	g.memoMu.Unlock()
	e.once.Do(func() { e.v = build() })
	return e.v
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func to32(dst []float32, x []float64) {
	for i, v := range x {
		dst[i] = float32(v)
	}
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
