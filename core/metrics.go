package core

import (
	"github.com/haeols/haeols/core/result"
	"math"
	"slices"

	"github.com/haeols/haeols/core/kernel"
)

// What the error of a Metrics measures (Metrics.Metric).
const (
	MetricOutput   = result.MetricOutput
	MetricLostMass = result.MetricLostMass
)

// Metrics are the per-head numbers of one compressed cache on one query
// head (result.Metrics).
type Metrics = result.Metrics

// NeedleStatus is the fate of one needle token (result.NeedleStatus).
type NeedleStatus = result.NeedleStatus

// Evaluate measures cache c on the query head at index hi of g.Heads: the
// probe outputs against the full-cache outputs, and the calibration outputs;
// for an attention-only group, the attention mass each probe (and
// calibration) row loses.
func (g *Group) Evaluate(c *Cache, hi int) Metrics {
	p := g.Probes[hi]
	m := Metrics{Method: c.Method, Metric: MetricOutput, Layer: g.Layer, Head: p.Head, Asked: c.Budget.Ratio, Ratio: c.Ratio(), RowEntropy: p.MeanRowEntropy, NeedleErr: math.NaN()}
	if g.AttnOnly {
		m.Metric, m.Cos = MetricLostMass, math.NaN()
		m.Profile = lostMass(p.Attn, g.T, g.N, c)
		m.ErrCal = mean(lostMass(g.A, g.W, g.N, c))
	} else {
		sc := getScratch()
		defer sc.put()
		g.evaluateOutputs(sc, &m, c, hi)
	}
	m.Err = mean(m.Profile)
	sorted := slices.Clone(m.Profile)
	slices.Sort(sorted)
	m.ErrMax = sorted[len(sorted)-1]
	m.ErrP95 = sorted[int(math.Ceil(0.95*float64(len(sorted))))-1]

	if len(g.NeedleProbes) > 0 {
		var s float64
		var k int
		for _, i := range g.NeedleProbes {
			if i < g.T {
				s += m.Profile[i]
				k++
			}
		}
		if k > 0 {
			m.NeedleErr = s / float64(k)
		}
	}
	for _, pos := range g.Needles {
		if pos < g.N {
			m.Needles = append(m.Needles, NeedleStatus{Pos: pos, Class: c.Class[pos]})
		}
	}
	return m
}

// lostMass returns, for each of the rows of the rows x n attention a, the
// mass on the prefix tokens that c does not keep exactly, summed in float64
// in position order (0 when c keeps every token).
func lostMass(a []float32, rows, n int, c *Cache) []float64 {
	out := make([]float64, rows)
	if c.All {
		return out
	}
	for i := range out {
		var s float64
		for j, x := range a[i*n : i*n+n] {
			if !c.Class[j].Exact() {
				s += float64(x)
			}
		}
		out[i] = s
	}
	return out
}

// evaluateOutputs sets the output-error profile, Cos and ErrCal of m.
func (g *Group) evaluateOutputs(sc *scratch, m *Metrics, c *Cache, hi int) {
	p := g.Probes[hi]
	d := g.D
	out := sc.f32.take(g.T * d)
	calOut := sc.f32.take(g.W * d)
	onCPU := true
	if acc := g.acc(); acc != nil {
		onCPU = false
		if err := g.attendAccel(acc, out[:g.T*d], calOut, c, hi); err != nil {
			// The device failed mid-session (e.g. a lost GPU): measure on
			// the CPU, whose numbers agree within float32 tolerances.
			g.dropAccel()
			onCPU = true
		}
	}
	if onCPU {
		work := sc.f32.take(max(c.C, 1))
		if !g.probesFromShare(sc, out, c, hi) {
			part := kernel.NewPartial(g.T, d)
			part.CopyFrom(p.Suffix)
			g.attend(part, c, p.S, p.Q, work)
			part.Output(out)
		}
		// Calibration rows of this head: non-causal over the prefix, no
		// suffix.
		if !g.calibFromShare(sc, calOut, c, hi) {
			cal := kernel.NewPartial(g.W, d)
			g.attend(cal, c, g.S[hi*g.W*g.N:(hi+1)*g.W*g.N], g.Qc[hi*g.W*d:(hi+1)*g.W*d], work)
			cal.Output(calOut)
		}
	}
	m.Profile = make([]float64, g.T)
	var cosSum float64
	for i := 0; i < g.T; i++ {
		e, cs := relErr(out[i*d:i*d+d], p.O[i*d:i*d+d])
		m.Profile[i] = e
		cosSum += cs
	}
	m.Cos = cosSum / float64(g.T)

	w := g.W
	var cs float64
	for i := 0; i < w; i++ {
		e, _ := relErr(calOut[i*d:i*d+d], g.Oc[(hi*w+i)*d:(hi*w+i+1)*d])
		cs += e
	}
	m.ErrCal = cs / float64(w)
}

// calibFromShare sets the calibration outputs of head hi over cache c
// (W x D) from the exact tokens' share of the calibration attention that
// HAE-OLS keeps with its cache, with no work per exact token: for row i,
//
//	o = (rs Σ_exact A V + Σ_k w_k Vhat_k) / (rs Σ_exact A + Σ_k w_k),
//
// w_k = exp(scale q.k_k + b_k - mu) with the logit and exponential
// attention uses, in float64 (rs, mu: the row's softmax normaliser and
// shift). It is the same softmax attention over the cache computes, summed
// in another order. It reports false (and leaves out alone) when c has no
// such share or a weight overflows; the caller then attends.
func (g *Group) calibFromShare(sc *scratch, out []float32, c *Cache, hi int) bool {
	if c.exactShare == nil || c.All || c.C == 0 {
		return false
	}
	ex := c.exactShare.cal
	w, d, nc := g.W, g.D, c.C
	wts := sc.f32.takeSet(w * nc) // Logits or the copy sets every element
	if len(c.calLogits) == g.Rows*nc {
		copy(wts, c.calLogits[hi*w*nc:(hi+1)*w*nc])
	} else {
		kernel.Logits(wts, g.Qc[hi*w*d:(hi+1)*w*d], w, c.Keys, nc, d, g.Scale)
	}
	for i := 0; i < w; i++ {
		row := wts[i*nc : i*nc+nc]
		if c.Bias != nil {
			for k, b := range c.Bias[:len(row)] {
				row[k] += b
			}
		}
		kernel.ExpShiftTo(row, row, g.Mu[hi*w+i]) // an infinite weight makes den infinite
	}
	dens := sc.f64.takeSet(w) // every element set before it is read
	for i := 0; i < w; i++ {
		gi := hi*w + i
		den := float64(float64(g.RowSum[gi]) * ex.z(gi))
		for _, x := range wts[i*nc : i*nc+nc] {
			den += float64(x)
		}
		if !(den > 0) || math.IsInf(den, 0) {
			return false
		}
		dens[i] = den
	}
	sv := sc.f32.takeSet(w * d) // sum_k w_k Vhat_k, as attention sums it (MatMul sets it)
	kernel.MatMul(sv, wts, w, nc, c.Values, d)
	for i := 0; i < w; i++ {
		// (rs Σ_exact A V + Σ_k w_k Vhat_k) / den, element by element.
		gi := hi*w + i
		r := gi * d
		kernel.ShareOut(out[i*d:i*d+d], ex.nonY[r:r+d], ex.by[r:r+d], ex.sign, ex.y32[r:r+d],
			float64(g.RowSum[gi]), sv[i*d:i*d+d], 0, nil, dens[i])
	}
	return true
}

// probesFromShare sets the probe outputs of head hi over cache c (T x D)
// from the exact tokens' share of the probes' prefix softmax that HAE-OLS
// keeps with its cache, like calibFromShare, plus each probe's exact suffix
// (its online-softmax partial): for probe i, with a common shift m,
//
//	o = (z e^(pm-m) Σ_exact P V + Σ_k w_k Vhat_k + e^(sm-m) acc)
//	  / (z e^(pm-m) Σ_exact P   + Σ_k w_k        + e^(sm-m) sum),
//
// P = exp(S - pm) / z the probe's softmax over the prefix, w_k = exp(scale
// q.k_k + b_k - m), (sm, sum, acc) the suffix partial. It reports false
// when c has no such share; the caller then attends.
func (g *Group) probesFromShare(sc *scratch, out []float32, c *Cache, hi int) bool {
	if c.exactShare == nil || c.exactShare.probe == nil || c.All || c.C == 0 {
		return false
	}
	ex := c.exactShare.probe
	t, d, nc := g.T, g.D, c.C
	pr := g.Probes[hi]
	_, pm, pz := g.probeSoftmax()
	syn := sc.f32.takeSet(t * nc) // Logits sets every element
	kernel.Logits(syn, pr.Q, t, c.Keys, nc, d, g.Scale)
	shift := sc.f32.take(t)
	for i := 0; i < t; i++ {
		row := syn[i*nc : i*nc+nc]
		m := max(pm[hi*t+i], pr.Suffix.Max[i])
		for k := range row {
			if c.Bias != nil {
				row[k] += c.Bias[k]
			}
			m = max(m, row[k])
		}
		kernel.ExpShiftTo(row, row, m)
		shift[i] = m
	}
	fes, fss, dens := sc.f64.takeSet(t), sc.f64.takeSet(t), sc.f64.takeSet(t) // set before read
	for i := 0; i < t; i++ {
		gi := hi*t + i
		m := shift[i]
		fe := float64(pz[gi]) * float64(kernel.Exp32(pm[gi]-m))
		fs := float64(kernel.Exp32(pr.Suffix.Max[i] - m))
		den := float64(fe*ex.z(gi)) + float64(fs*float64(pr.Suffix.Sum[i]))
		for _, x := range syn[i*nc : i*nc+nc] {
			den += float64(x)
		}
		if !(den > 0) || math.IsInf(den, 0) {
			return false
		}
		fes[i], fss[i], dens[i] = fe, fs, den
	}
	sv := sc.f32.takeSet(t * d) // sum_k w_k Vhat_k, as attention sums it (MatMul sets it)
	kernel.MatMul(sv, syn, t, nc, c.Values, d)
	for i := 0; i < t; i++ {
		// (fe Σ_exact P V + Σ_k w_k Vhat_k + fs acc) / den, element by
		// element.
		r := (hi*t + i) * d
		kernel.ShareOut(out[i*d:i*d+d], ex.nonY[r:r+d], ex.by[r:r+d], ex.sign, ex.y32[r:r+d],
			fes[i], sv[i*d:i*d+d], fss[i], pr.Suffix.Acc[i*d:i*d+d], dens[i])
	}
	return true
}

// attendAccel computes on acc the probe outputs (probe, T x D) and the
// calibration outputs of head hi (cal, W x D) over cache c: its exact
// prefix tokens in position order, its synthetic tokens with their biases
// and, for the probes, the causal suffix.
func (g *Group) attendAccel(acc Accelerator, probe, cal []float32, c *Cache, hi int) error {
	n, d, t := g.N, g.D, g.T
	var idx []int32
	if !c.All {
		idx = c.Exact
	}
	ne := n
	if !c.All {
		ne = len(idx)
	}
	tot := ne + c.C + t
	keys, vals := make([]float32, tot*d), make([]float32, tot*d)
	if c.All {
		copy(keys, g.K)
		copy(vals, g.V)
	} else {
		for i, j := range idx {
			copy(keys[i*d:(i+1)*d], g.K[int(j)*d:int(j+1)*d])
			copy(vals[i*d:(i+1)*d], g.V[int(j)*d:int(j+1)*d])
		}
	}
	copy(keys[ne*d:], c.Keys[:c.C*d])
	copy(vals[ne*d:], c.Values[:c.C*d])
	copy(keys[(ne+c.C)*d:], g.kAll[n*d:])
	copy(vals[(ne+c.C)*d:], g.vAll[n*d:])
	var bias []float32
	if c.Bias != nil {
		bias = make([]float32, tot)
		copy(bias[ne:], c.Bias[:c.C])
	}
	p := g.Probes[hi]
	if err := acc.Attend(probe, p.Q, t, keys, vals, tot, d, g.Scale, bias, ne+c.C, true); err != nil {
		return err
	}
	if ne+c.C == 0 {
		clear(cal)
		return nil
	}
	var cb []float32
	if bias != nil {
		cb = bias[:ne+c.C]
	}
	return acc.Attend(cal, g.Qc[hi*g.W*d:(hi+1)*g.W*d], g.W, keys[:(ne+c.C)*d], vals[:(ne+c.C)*d], ne+c.C, d, g.Scale, cb, 0, false)
}

// attend adds the cache's tokens to the partial of the query rows q whose
// logits against the exact prefix keys are s.
func (g *Group) attend(part *kernel.Partial, c *Cache, s, q, work []float32) {
	switch {
	case c.All:
		part.AddLogits(s, g.N, nil, g.V)
	case len(c.Exact) > 0:
		part.AddLogits(s, g.N, c.Exact, g.V)
	}
	if c.C > 0 {
		part.AddKeys(q, c.Keys, c.Values, c.C, g.Scale, c.Bias, false, work)
	}
}

// relErr returns ||a-b|| / ||b|| and the cosine similarity of a and b, in
// float64. A zero reference gives the absolute error and cosine 1 for a
// zero estimate.
func relErr(a, b []float32) (float64, float64) {
	var dd, bb, aa, ab float64
	for i := range b {
		x, y := float64(a[i]), float64(b[i])
		dd += float64((x - y) * (x - y))
		bb += float64(y * y)
		aa += float64(x * x)
		ab += float64(x * y)
	}
	if bb == 0 {
		if aa == 0 {
			return 0, 1
		}
		return math.Sqrt(dd), 0
	}
	cos := 0.0
	if aa > 0 {
		cos = ab / math.Sqrt(aa*bb)
	}
	return math.Sqrt(dd / bb), cos
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
