package core

import (
	"fmt"
	"math"
	"sync"

	"github.com/haeols/haeols/core/kernel"
	"github.com/haeols/haeols/core/solve"
	"github.com/haeols/haeols/core/xmath"
)

// PinvCutoff is the relative singular-value cutoff of the OLS pseudoinverse.
const PinvCutoff = 1e-6

// hae is the HAE-OLS pipeline of HAE-OLS.md §3 and its ablations: selection
// by attention mass and key entropy, OLS summaries of the recycle bin, and
// truncated-SVD storage of the summaries whose savings buy back anchors.
type hae struct {
	name, desc string
	// lambda and tau, when >= 0, override the parameters.
	lambda, tau float64
	// summaries false: no recycle bin at all, every free slot is an anchor.
	summaries bool
	// ols false: merge instead of fitting (beta = segment size, value =
	// salience-weighted mean).
	ols bool
}

func init() {
	Register(hae{name: "hae-ols", desc: "HAE-OLS: entropy+mass selection, OLS summaries of the rest, SVD-compressed summaries", lambda: -1, tau: -1, summaries: true, ols: true})
	Register(hae{name: "hae-nosvd", desc: "HAE-OLS without the SVD stage (tau = 1)", lambda: -1, tau: 1, summaries: true, ols: true})
	Register(hae{name: "hae-merge", desc: "HAE-OLS selection with plain merging instead of OLS (beta = segment size, mean value)", lambda: -1, tau: -1, summaries: true, ols: false})
	Register(hae{name: "entropy", desc: "selection by key entropy alone (lambda = 1), no summaries", lambda: 1, tau: 1, summaries: false, ols: false})
}

func (h hae) Name() string     { return h.name }
func (h hae) Describe() string { return h.desc }

// Anchors implements Selector: entropy alone, or mass and entropy.
func (h hae) Anchors() string {
	if h.lambda == 1 {
		return "whose attention entropy is lowest (attended by few queries)"
	}
	return "ranked highest by attention mass and low entropy together"
}

// Tunes reports the parameters h reads: lambda and tau unless fixed, phi
// when it fits summaries.
func (h hae) Tunes(param string) bool {
	switch param {
	case "lambda":
		return h.lambda < 0
	case "tau":
		return h.tau < 0
	case "phi":
		return h.summaries
	}
	return false
}

func (h hae) Compress(g *Group, p Params) (*Cache, error) {
	if h.summaries {
		if err := g.needKV(); err != nil {
			return nil, err
		}
	}
	b, err := g.budget(p.Ratio, p.Sinks, p.Recent)
	if err != nil {
		return nil, err
	}
	lambda, tau := p.Lambda, p.Tau
	if h.lambda >= 0 {
		lambda = h.lambda
	}
	if h.tau >= 0 {
		tau = h.tau
	}
	lo, hi := b.Candidates()
	free := b.Free()
	order := haeOrder(g, lo, hi, lambda)
	ordered := order.idx
	sc := getScratch()
	defer sc.put()

	c := newCache(h.name, b)
	keepAlways(c)
	nc := hi - lo
	if !h.summaries || free <= 0 || nc <= free {
		c.keepExact(topK(ordered, free), Anchor)
		c.finishExact()
		return c, nil
	}
	d := g.D
	ns := p.Summaries
	if ns == 0 {
		ns = int(math.Round(p.Phi * float64(free)))
	}
	ns = max(1, min(ns, g.Rows/2, nc))
	for ns > 0 && b.SlotsFor(int64(ns*(2*d+1))) > free {
		ns--
	}
	if ns == 0 || p.Phi == 0 && p.Summaries == 0 {
		c.keepExact(topK(ordered, free), Anchor)
		c.finishExact()
		return c, nil
	}
	anchors := free - b.SlotsFor(int64(ns*(2*d+1)))
	f1, err := g.planBin(sc, order, anchors, ns, tau, h.ols, int64(free-anchors)*int64(2*d))
	if err != nil {
		return nil, err
	}
	// Slots the summaries do not use (saved by the SVD stage, or freed by
	// summaries whose NNLS weight came out 0) buy more exact anchors: re-plan
	// with them and refit (maxReplans times), so the cache uses most of its
	// budget, as every other method does.
	// A refit can keep more summaries than the plan before it (a smaller
	// bin drops fewer), so a re-plan that does not fit is retried with half
	// the extra anchors.
	best, a := f1, anchors
	for pass := 0; pass < maxReplans; pass++ {
		extra := free - a - b.SlotsFor(best.numbers)
		var next *binPlan
		for ; extra > 0 && next == nil; extra /= 2 {
			a2 := a + extra
			p, err := g.planBin(sc, order, a2, ns, tau, h.ols, int64(free-a2)*int64(2*d))
			if err == nil && p.numbers <= int64(free-a2)*int64(2*d) {
				next = p
				a = a2
			}
		}
		if next == nil {
			break
		}
		next.extra = a - anchors
		best = next
	}
	if best.fit != nil {
		if err := g.finish(sc, best.fit); err != nil {
			return nil, err
		}
	}
	best.apply(c)
	c.finishExact()
	return c, nil
}

// haeOrder returns the candidates [lo, hi) by HAE score, best first:
// (1-lambda) R(a) + lambda R(1-H). The order depends only on lambda and the
// candidate range, not on the ratio, so it is computed once per group and
// kept (callers must not modify it).
func haeOrder(g *Group, lo, hi int, lambda float64) *binOrder {
	key := orderKey{lambda, lo, hi}
	st := haeStateOf(g)
	st.orderMu.Lock()
	defer st.orderMu.Unlock()
	if o, ok := st.orders[key]; ok {
		return o
	}
	cands := span(lo, hi)
	ra := make([]float64, len(cands))
	rh := make([]float64, len(cands))
	for i, j := range cands {
		ra[i] = float64(g.Salience[j])
		rh[i] = 1 - float64(g.KeyEntropy[j])
	}
	ra, rh = rankPercentile(ra), rankPercentile(rh)
	for i := range ra {
		ra[i] = float64((1-lambda)*ra[i]) + float64(lambda*rh[i])
	}
	o := &binOrder{idx: byScore(cands, ra)}
	if st.orders == nil || len(st.orders) >= maxOrders {
		st.orders = map[orderKey]*binOrder{}
	}
	st.orders[key] = o
	return o
}

// haeState is what the HAE family (hae-ols, hae-nosvd, hae-merge, entropy)
// keeps in a group (Group.Memo): its candidate orders by lambda and which
// of them hold bin-target sums.
type haeState struct {
	orderMu  sync.Mutex
	orders   map[orderKey]*binOrder
	sumsMu   sync.Mutex
	withSums []*binOrder // orders holding bin-target sums, oldest first
}

// haeStateOf returns the HAE family's state in g.
func haeStateOf(g *Group) *haeState {
	return g.Memo("hae", func() any { return &haeState{} }).(*haeState)
}

// orderKey identifies a cached HAE order; maxOrders bounds the cache (a
// user dragging the lambda slider creates one per position).
type orderKey struct {
	lambda float64
	lo, hi int
}

const maxOrders = 64

// binOrder is an order of candidate tokens, best first. Every HAE-OLS bin
// is a tail of it (the candidates after the anchors), so its targets are
// the candidates' totals minus prefix sums along the order, which are
// built chunk by chunk as far as a plan needs them and then reused.
type binOrder struct {
	idx  []int32
	mu   sync.Mutex
	sums *orderSums // nil until first used; dropped by keepSums
}

// orderSums are the bin-target sums of an order. totZ[i] and totY[i,:] are
// the sums over all the candidates in units of the calibration attention A:
// row i's full-cache mass and output (1 and Oc) minus the non-candidates'
// share. cal holds the calibration rows' sums over A, probe (nil for an
// attention-only group) the probe rows' over their softmax on the prefix
// (Group.probeSoftmax).
type orderSums struct {
	chunk      int
	totZ, totY []float64
	cal        rowSums
	probe      *rowSums
}

// rowSums are the sums of one set of attention rows P along an order: the
// non-candidates' share (sinks, recent window), and per chunk boundary b
// built so far z[b][i] = sum over idx[:b*chunk] of P[i,j] and y[b][i,:] the
// same weighted by V[j,:], accumulated chunk by chunk in float64 from
// kernel.BinMass's float32 chunk sums.
type rowSums struct {
	nonZ, nonY []float64
	z, y       [][]float64
}

// newRowSums starts the sums from the non-candidates' kernel.BinMass sums.
func newRowSums(z32, y32 []float32) rowSums {
	return rowSums{nonZ: to64(z32), nonY: to64(y32), z: [][]float64{make([]float64, len(z32))}, y: [][]float64{make([]float64, len(y32))}}
}

// add appends the next boundary: the last one plus one chunk's sums.
func (r *rowSums) add(z32, y32 []float32) {
	pz, py := r.z[len(r.z)-1], r.y[len(r.y)-1]
	z, y := make([]float64, len(z32)), make([]float64, len(y32))
	for i, x := range z32 {
		z[i] = pz[i] + float64(x)
	}
	for i, x := range y32 {
		y[i] = py[i] + float64(x)
	}
	r.z, r.y = append(r.z, z), append(r.y, y)
}

// exact returns the exact tokens' share for a plan whose anchors are the
// prefix sums at boundary b plus sign times the chunk sums (z32, y32,
// which it keeps): the anchors after b (sign 1), or the candidates before
// b that are not anchors (sign -1); plus the non-candidates' share.
func (r *rowSums) exact(b int, sign float64, z32, y32 []float32) *exactRows {
	return &exactRows{nonZ: r.nonZ, nonY: r.nonY, bz: r.z[b], by: r.y[b], sign: sign, z32: z32, y32: y32}
}

// maxSumChunks bounds the chunks of orderSums (their memory is
// (maxSumChunks+1) x rows x (D+1) float64s) and minSumChunk their size:
// a bin's targets then cost at most half of max(minSumChunk, candidates
// / maxSumChunks) tokens of BinMass (from the nearer boundary) once the
// sums reach past its anchors.
const (
	maxSumChunks = 16
	minSumChunk  = 64
)

// sumChunk is the chunk of the sums of an order of n candidates.
func sumChunk(n int) int { return max(minSumChunk, (n+maxSumChunks-1)/maxSumChunks) }

// prefixSums returns the order's sums with the chunk boundaries up to b
// built (b is clamped to the last boundary), and the prefix sums at b.
func (g *Group) prefixSums(o *binOrder, b int) (*orderSums, []float64, []float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rows, d, n := g.Rows, g.D, len(o.idx)
	s := o.sums
	if s == nil {
		s = &orderSums{chunk: sumChunk(n)}
		// Totals over the candidates: everything minus the non-candidates.
		in := make([]bool, g.N)
		for _, j := range o.idx {
			in[j] = true
		}
		var out []int32
		for j := 0; j < g.N; j++ {
			if !in[j] {
				out = append(out, int32(j))
			}
		}
		z32, y32 := make([]float32, rows), make([]float32, rows*d)
		g.binMass(z32, y32, out)
		s.totZ, s.totY = make([]float64, rows), make([]float64, rows*d)
		for i := 0; i < rows; i++ {
			s.totZ[i] = 1 - float64(z32[i])
			for c := 0; c < d; c++ {
				s.totY[i*d+c] = float64(g.Oc[i*d+c]) - float64(y32[i*d+c])
			}
		}
		s.cal = newRowSums(z32, y32)
		// The probes' share serves the CPU's metrics only (an accelerator
		// attends over the cache).
		if pp := g.probeRows(); pp > 0 && g.acc() == nil {
			pz32, py32 := g.probeMass(nil, out)
			p := newRowSums(pz32, py32)
			s.probe = &p
		}
		o.sums = s
		g.keepSums(o)
	}
	b = min(b, (n+s.chunk-1)/s.chunk)
	if len(s.cal.z) <= b {
		z32, y32 := make([]float32, rows), make([]float32, rows*d)
		for k := len(s.cal.z); k <= b; k++ {
			chunk := o.idx[(k-1)*s.chunk : min(k*s.chunk, n)]
			g.binMass(z32, y32, chunk)
			s.cal.add(z32, y32)
			if s.probe != nil {
				s.probe.add(g.probeMass(nil, chunk))
			}
		}
	}
	return s, s.cal.z[b], s.cal.y[b]
}

// probeMass is kernel.BinMass of the probe rows' softmax over the keys
// idx (on the CPU: the probes' share is only used there), in memory from
// sc (nil: newly allocated).
func (g *Group) probeMass(sc *scratch, idx []int32) ([]float32, []float32) {
	pp, d := g.probeRows(), g.D
	pa, _, _ := g.probeSoftmax()
	var z32, y32 []float32
	if sc != nil {
		z32, y32 = sc.f32.take(pp), sc.f32.take(pp*d)
	} else {
		z32, y32 = make([]float32, pp), make([]float32, pp*d)
	}
	kernel.BinMass(z32, y32, pa, pp, g.N, idx, g.V, d)
	return z32, y32
}

// probeRows is the number of probe rows of the group (all heads), 0 for an
// attention-only group.
func (g *Group) probeRows() int {
	if g.AttnOnly || g.T == 0 {
		return 0
	}
	return len(g.Heads) * g.T
}

// maxSums is how many orders of a group keep their sums: a user
// dragging the lambda slider builds one per position, and only the
// latest few are likely to be asked again.
const maxSums = 4

// keepSums records that o holds sums and drops the sums of the
// oldest order past maxSums (a caller still using them keeps its copy).
func (g *Group) keepSums(o *binOrder) {
	st := haeStateOf(g)
	st.sumsMu.Lock()
	st.withSums = append(st.withSums, o)
	var old *binOrder
	if len(st.withSums) > maxSums {
		old = st.withSums[0]
		st.withSums = st.withSums[1:]
	}
	st.sumsMu.Unlock()
	if old != nil && old != o {
		old.mu.Lock()
		old.sums = nil
		old.mu.Unlock()
	}
}

// maxReplans is how many times unused summary slots are re-planned into
// anchors: once, as the reference text does for the SVD stage. Three gave a
// little lower error (docs/RESULTS.md) at twice the cost of a slider move.
const maxReplans = 1

// binPlan is one planned split: anchors, the bin and its fitted summaries.
type binPlan struct {
	// anchors and bin (both ascending) are memory of the Compress call's
	// scratch: apply copies what the cache keeps.
	anchors []int32
	bin     []int32
	fit     *summaryFit
	numbers int64 // 16-bit numbers the summaries use (factors + biases)
	extra   int   // anchors bought back by the SVD stage
}

// planBin keeps the first nAnchors of the order exact, fits ns summaries to the
// rest and compresses them at energy tau within avail numbers.
func (g *Group) planBin(sc *scratch, order *binOrder, nAnchors, ns int, tau float64, ols bool, avail int64) (*binPlan, error) {
	ordered := order.idx
	nAnchors = max(0, min(nAnchors, len(ordered)))
	pl := &binPlan{}
	pl.anchors, pl.bin = splitTopIn(sc, ordered, nAnchors)
	ns = min(ns, len(pl.bin))
	if ns == 0 {
		return pl, nil
	}
	f, err := g.fitSummaries(sc, order, nAnchors, pl.bin, ns, tau, ols, true)
	if err != nil {
		return nil, err
	}
	// Lowering ranks to fit is part of the SVD stage: with the stage off
	// (tau = 1) a plan that does not fit densely is refused instead.
	if (tau >= 1 && f.numbers() > avail) || !f.fitBudget(avail) {
		return nil, fmt.Errorf("summaries do not fit %d numbers: %w", avail, ErrDoesNotFit)
	}
	pl.fit, pl.numbers = f, f.numbers()
	return pl, nil
}

// apply writes the plan into the cache.
func (pl *binPlan) apply(c *Cache) {
	c.keepExact(pl.anchors, Anchor)
	c.Stages.Bin = len(pl.bin)
	c.Stages.ExtraAnchors = pl.extra
	f := pl.fit
	if f == nil {
		return
	}
	for i, j := range pl.bin {
		if s := f.segOf[i]; s >= 0 {
			c.Class[j], c.Segment[j] = Summarized, int32(s)
		}
	}
	c.C = f.kept
	c.Keys, c.Values, c.Bias = f.keys, f.values, f.bias
	c.calLogits = f.logits
	c.Stages.Summaries, c.Stages.Dropped = f.kept, f.dropped
	c.Stages.RankK, c.Stages.RankV = f.rankK, f.rankV
	c.Stages.EnergyK, c.Stages.EnergyV = f.energyK, f.energyV
	c.Stages.FitResidual = f.residual
	c.exactShare = f.exact
	c.Stages.SummaryBits = pl.numbers * BitsPerNumber
}

// summaryFit are the summary tokens fitted to one recycle bin.
type summaryFit struct {
	d, kept, dropped int
	keys, values     []float32 // kept x d (after SVD truncation)
	bias             []float32 // kept
	segOf            []int     // per bin token: kept summary index, -1 if dropped
	rankK, rankV     int       // ranks of the stored keys and values
	energyK, energyV float64   // squared-Frobenius share those ranks keep
	residual         float64   // ||F beta - z|| / ||z||
	// logits, when set, are the calibration rows' logits of the kept
	// summaries' keys (g.Rows x kept), as kernel.Logits computes them on
	// keys: the features' logits, which Evaluate then need not compute
	// again. nil when the keys changed after the features (fitBudget) or
	// an accelerator computed the features.
	logits []float32
	// pending, until finish, holds what the values still need (keys,
	// values and bias are unset meanwhile).
	pending *pendingFit
	// exact is the exact tokens' share of the calibration attention (OLS
	// fits, after finish).
	exact *exactShare
}

// storeNumbers is the storage of a c x d matrix of rank r: its factors
// (c*r + r*d) when that is smaller than the dense c*d.
func storeNumbers(c, d, r int) int64 { return int64(min(c*r+r*d, c*d)) }

func (f *summaryFit) numbers() int64 {
	return storeNumbers(f.kept, f.d, f.rankK) + storeNumbers(f.kept, f.d, f.rankV) + int64(f.kept)
}

// truncate replaces the c x d matrix x (float64, row-major) by its rank-r
// approximation at energy tau when that is cheaper to store than x itself;
// it returns the rank stored and the energy kept.
func truncate(x []float64, c, d int, tau float64) (int, float64, error) {
	full := min(c, d)
	if tau >= 1 || c == 0 {
		return full, 1, nil
	}
	s, err := solve.Decompose(x, c, d)
	if err != nil {
		return 0, 0, err
	}
	r := s.RankForEnergy(tau)
	if storeNumbers(c, d, r) >= int64(c*d) {
		return full, 1, nil
	}
	s.Reconstruct(r, x)
	return r, energy(s.S, r), nil
}

// fitBudget lowers the SVD ranks, the larger first, until the summaries fit
// in avail numbers; it reports whether they do. It is only needed after the
// SVD stage's re-plan changed the bin.
func (f *summaryFit) fitBudget(avail int64) bool {
	for f.numbers() > avail {
		x, r, e := f.keys, &f.rankK, &f.energyK
		if f.rankV > f.rankK {
			x, r, e = f.values, &f.rankV, &f.energyV
		} else {
			f.logits = nil // the keys change
		}
		if *r == 0 {
			return false
		}
		m := to64(x)
		s, err := solve.Decompose(m, f.kept, f.d)
		if err != nil {
			return false
		}
		*r = min(*r, f.kept, f.d) - 1
		s.Reconstruct(*r, m)
		*e *= energy(s.S, *r)
		to32(x, m)
	}
	return true
}

// fitSummaries fits ns summaries to the bin, the tail order.idx[from:]
// (bin: the same in ascending positions), as in
// HAE-OLS.md §3: contiguous segments, salience-weighted centroid keys
// (truncated at energy tau), then either NNLS for the logit weights beta and
// the pseudoinverse for the values (ols), or merging (beta = segment size,
// salience-weighted mean value). Summaries with beta = 0 are dropped.
//
// With lazy set the values wait when they do not change the storage (the
// SVD stage off): the fit then holds the weights and what it takes to
// finish, and finish computes the values. A plan that the SVD stage's
// re-plan replaces never pays for its bin's weighted values nor its
// pseudoinverse; finishing gives the same bits as an eager fit.
func (g *Group) fitSummaries(sc *scratch, order *binOrder, from int, bin []int32, ns int, tau float64, ols, lazy bool) (*summaryFit, error) {
	f, err := g.fitWeights(sc, order, from, bin, ns, tau, ols)
	if err != nil {
		return nil, err
	}
	if lazy && tau >= 1 {
		// Without the SVD stage the values are stored densely: the storage
		// is known from the kept count alone.
		f.rankK, f.rankV = min(f.rankK, f.kept), min(f.kept, f.d)
		return f, nil
	}
	return f, g.finish(sc, f)
}

// pendingFit is what a summary fit keeps between its weights and its
// values.
type pendingFit struct {
	order      *binOrder
	from       int
	ns         int
	tau        float64
	ols        bool
	khat, vbar []float64 // ns x d: (truncated) centroid keys, mean values
	feat, beta []float64 // rows x ns features, ns weights
	logits     []float32 // rows x ns: the features' logits (nil: not on the CPU)
	z          []float64 // rows: the NNLS targets (bin mass)
	newIdx     []int     // per summary: kept index or -1
}

// fitWeights is the first part of fitSummaries: segments, centroid keys,
// the SVD of the keys and the weights beta (NNLS on the bin mass, or the
// segment sizes), with the summaries to keep. The values are left pending.
func (g *Group) fitWeights(sc *scratch, order *binOrder, from int, bin []int32, ns int, tau float64, ols bool) (*summaryFit, error) {
	d, rows := g.D, g.Rows
	m := len(bin)
	f := &summaryFit{d: d, segOf: sc.ints.takeSet(m)} // the segments cover the bin
	pf := &pendingFit{order: order, from: from, ns: ns, tau: tau, ols: ols}
	f.pending = pf
	// Segments and centroid keys (and, for merging, mean values).
	khat := sc.f64.take(ns * d)
	var vbar []float64 // merging only
	if !ols {
		vbar = sc.f64.take(ns * d)
	}
	size := sc.f64.takeSet(ns) // every segment sets its size
	wts := sc.f64.takeSet(m)
	for t := 0; t < ns; t++ {
		lo, hi := t*m/ns, (t+1)*m/ns
		var wsum float64
		for i := lo; i < hi; i++ {
			wsum += float64(g.Salience[bin[i]])
		}
		for i := lo; i < hi; i++ {
			f.segOf[i] = t
			w := 1 / float64(hi-lo)
			if wsum > 0 {
				w = float64(g.Salience[bin[i]]) / wsum
			}
			wts[i] = w
		}
		kernel.AxpyWidenRows(khat[t*d:t*d+d], wts[lo:hi], bin[lo:hi], g.K, d)
		if vbar != nil {
			kernel.AxpyWidenRows(vbar[t*d:t*d+d], wts[lo:hi], bin[lo:hi], g.V, d)
		}
		size[t] = float64(hi - lo)
	}
	pf.khat, pf.vbar = khat, vbar
	var err error
	if f.rankK, f.energyK, err = truncate(khat, ns, d, tau); err != nil {
		return nil, fmt.Errorf("SVD of summary keys: %w", err)
	}

	beta := sc.f64.takeSet(ns) // NNLS clears it, or the sizes are copied
	pf.beta = beta
	if ols {
		// Features F[i,t] = exp(scale q_i . khat_t - mu_i), with the logits
		// from the float32 kernel on the float32 keys that will be stored:
		// exactly the logits attention will compute for the summaries.
		k32 := sc.f32.takeSet(ns * d) // to32 sets every element
		to32(k32, khat)
		feat, lg := g.features(sc, k32, ns)
		pf.feat, pf.logits = feat, lg
		z, _, _ := g.targets(sc, order, from, false)
		pf.z = z
		if err := sc.nnls.NNLS(feat, rows, ns, z, beta); err != nil {
			return nil, fmt.Errorf("NNLS for summary weights: %w", err)
		}
	} else {
		copy(beta, size)
	}

	// Keep the summaries with beta > 0, renumbered.
	newIdx := sc.ints.takeSet(ns) // set for every summary below
	for t := 0; t < ns; t++ {
		if beta[t] > 0 && isFinite(xmath.Log(beta[t])) {
			newIdx[t] = f.kept
			f.kept++
		} else {
			newIdx[t] = -1
			f.dropped++
		}
	}
	pf.newIdx = newIdx
	for i, t := range f.segOf {
		f.segOf[i] = newIdx[t]
	}
	return f, nil
}

// finish computes the pending values of f: the pseudoinverse fit to the
// bin's weighted values (ols) or the mean values, the kept summaries'
// keys, values and biases, and the SVD of the values.
func (g *Group) finish(sc *scratch, f *summaryFit) error {
	pf := f.pending
	if pf == nil {
		return nil
	}
	d, rows, ns := g.D, g.Rows, pf.ns
	beta := pf.beta
	vhat := sc.f64.takeSet(ns * d) // the rows read (kept summaries, beta > 0) are set below
	if pf.ols {
		feat := pf.feat
		f.residual = fitResidual(feat, rows, ns, beta, pf.z)
		var y []float64
		_, y, f.exact = g.targets(sc, pf.order, pf.from, true)
		// G = F diag(beta) restricted to the columns with beta > 0: a zero
		// column only adds a zero row to the minimum-norm solution, and
		// leaving it out makes the least-squares problem smaller.
		live := sc.ints.take(ns)[:0]
		for t := 0; t < ns; t++ {
			if beta[t] > 0 {
				live = append(live, t)
			}
		}
		if nl := len(live); nl > 0 {
			gm := sc.f64.takeSet(rows * nl)
			for i := 0; i < rows; i++ {
				for c, t := range live {
					gm[i*nl+c] = feat[i*ns+t] * beta[t]
				}
			}
			vl := sc.f64.takeSet(nl * d) // PinvSolve clears it
			if _, err := solve.PinvSolve(gm, rows, nl, y, d, PinvCutoff, vl); err != nil {
				return fmt.Errorf("least squares for summary values: %w", err)
			}
			for c, t := range live {
				copy(vhat[t*d:t*d+d], vl[c*d:c*d+d])
			}
		}
	} else {
		copy(vhat, pf.vbar)
	}

	newIdx := pf.newIdx
	// newIdx numbers the kept summaries 0..kept-1: every row is set.
	keys := sc.f64.takeSet(f.kept * d)
	vals := sc.f64.takeSet(f.kept * d)
	f.bias = make([]float32, f.kept)
	for t := 0; t < ns; t++ {
		if k := newIdx[t]; k >= 0 {
			copy(keys[k*d:k*d+d], pf.khat[t*d:t*d+d])
			copy(vals[k*d:k*d+d], vhat[t*d:t*d+d])
			f.bias[k] = float32(xmath.Log(beta[t]))
		}
	}
	f.rankK = min(f.rankK, f.kept)
	var err error
	if f.rankV, f.energyV, err = truncate(vals, f.kept, d, pf.tau); err != nil {
		return fmt.Errorf("SVD of summary values: %w", err)
	}
	f.keys, f.values = make([]float32, f.kept*d), make([]float32, f.kept*d)
	to32(f.keys, keys)
	if lg := pf.logits; lg != nil && f.kept > 0 {
		// The kept keys are the features' keys (to32 of the same
		// float64 rows): keep their logits for Evaluate.
		from := sc.ints.takeSet(f.kept) // kept summary k is summary from[k]
		for t, k := range newIdx[:ns] {
			if k >= 0 {
				from[k] = t
			}
		}
		f.logits = make([]float32, rows*f.kept)
		for i := 0; i < rows; i++ {
			src, dst := lg[i*ns:i*ns+ns], f.logits[i*f.kept:i*f.kept+f.kept]
			for k, t := range from {
				dst[k] = src[t]
			}
		}
	}
	to32(f.values, vals)
	f.pending = nil
	return nil
}

// fitResidual returns ||F beta - z|| / ||z|| for the rows x ns features F
// (0 when z = 0).
func fitResidual(feat []float64, rows, ns int, beta, z []float64) float64 {
	var rr, zz float64
	beta = beta[:ns]
	for i := 0; i < rows; i++ {
		var s float64
		for t, f := range feat[i*ns : i*ns+ns] {
			s += float64(f * beta[t])
		}
		rr += float64((s - z[i]) * (s - z[i]))
		zz += float64(z[i] * z[i])
	}
	if zz == 0 {
		return 0
	}
	return math.Sqrt(rr / zz)
}

// features returns the summary features F[i,t] = exp(scale q_i . k_t -
// mu_i) of the ns summary keys k (ns x D) for the calibration rows, widened
// to float64 for the solves: kernel.Features on the CPU (the float32
// logits and exponential attention will compute for the summaries), or
// g's accelerator (within its tolerance of that). On the CPU it also
// returns the logits (rows x ns, from sc), nil otherwise.
func (g *Group) features(sc *scratch, k []float32, ns int) ([]float64, []float32) {
	rows, d := g.Rows, g.D
	f32 := sc.f32.takeSet(rows * ns) // Features sets every element
	var lg []float32
	if acc := g.acc(); acc == nil || acc.Features(f32, g.Qc, rows, k, ns, d, g.Scale, g.Mu) != nil {
		if acc != nil {
			g.dropAccel()
		}
		// kernel.Features with the logits kept: Logits, then each row's
		// ExpShift.
		lg = sc.f32.takeSet(rows * ns) // Logits sets every element
		kernel.Logits(lg, g.Qc, rows, k, ns, d, g.Scale)
		for i, mu := range g.Mu[:rows] {
			kernel.ExpShiftTo(f32[i*ns:i*ns+ns], lg[i*ns:i*ns+ns], mu)
		}
	}
	feat := sc.f64.takeSet(rows * ns)
	for i, x := range f32 {
		feat[i] = float64(x)
	}
	return feat, lg
}

// binMass is kernel.BinMass of the calibration attention over the keys
// idx, on g's accelerator when it has one.
func (g *Group) binMass(z, y []float32, idx []int32) {
	if acc := g.acc(); acc != nil {
		if err := acc.BinMass(z, y, g.A, g.Rows, g.N, idx, g.V, g.D); err == nil {
			return
		}
		g.dropAccel()
	}
	kernel.BinMass(z, y, g.A, g.Rows, g.N, idx, g.V, g.D)
}

// targets returns, for every calibration row i, the bin mass
// z[i] = sum_{j in bin} exp(S[i,j]-mu[i]) and, when withY, the bin weighted
// values Y[i,:] = sum_{j in bin} exp(S[i,j]-mu[i]) V[j,:], in float64, for
// the bin order.idx[from:]: the candidates' totals minus the anchors'
// share. That share is the order's prefix sum at the chunk boundary
// nearer to from, corrected by kernel.BinMass of the tokens between the
// boundary and from (added when the boundary is before from, subtracted
// when after; for the mass alone, the same float32 sum in the same order
// on the CPU): at most half a chunk of tokens. With withY it also returns
// the exact tokens' share of the calibration attention (the
// non-candidates' and the anchors').
func (g *Group) targets(sc *scratch, order *binOrder, from int, withY bool) (z, y []float64, ex *exactShare) {
	rows, n, d := g.Rows, g.N, g.D
	chunk, nc := sumChunk(len(order.idx)), len(order.idx)
	b, sign := from/chunk, 1.0
	part := order.idx[b*chunk : from]
	if hi := min((b+1)*chunk, nc); hi-from < len(part) {
		b, sign, part = b+1, -1, order.idx[from:hi]
	}
	sums, pz, py := g.prefixSums(order, b)
	z = sc.f64.takeSet(rows) // set for every row below
	var z32 []float32
	if withY {
		// The chunk sums go into the exact share, which the cache keeps.
		z32 = make([]float32, rows)
		y = sc.f64.takeSet(rows * d) // ShareTargets sets every row
		y32 := make([]float32, rows*d)
		g.binMass(z32, y32, part)
		for i := 0; i < rows; i++ {
			// y[i,:] = rs (totY - (py + sign y32)), element by element.
			r := i * d
			kernel.ShareTargets(y[r:r+d], float64(g.RowSum[i]), sums.totY[r:r+d], py[r:r+d], sign, y32[r:r+d])
		}
		ex = &exactShare{cal: sums.cal.exact(b, sign, z32, y32)}
		if sums.probe != nil {
			pz32, py32 := g.probeMass(nil, part)
			ex.probe = sums.probe.exact(b, sign, pz32, py32)
		}
	} else {
		z32 = sc.f32.takeSet(rows) // set for every row below
		for i := 0; i < rows; i++ {
			r := g.A[i*n : i*n+n]
			var s float32
			for _, j := range part {
				s += r[j]
			}
			z32[i] = s
		}
	}
	for i := 0; i < rows; i++ {
		z[i] = max(float64(g.RowSum[i])*(sums.totZ[i]-(pz[i]+float64(sign*float64(z32[i])))), 0)
	}
	return z, y, ex
}
