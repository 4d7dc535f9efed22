// Package verify checks the float32 kernels of HAE-OLS, on the CPU (package
// core/kernel) and on a GPU (package core/gpu), against float64 references
// on real inputs: a sample's calibration and probe queries, keys and values.
// For every kernel output it reports the largest absolute and relative
// deviation from float64 and the largest deviation measured in units of the
// output's stated tolerance (at most 1 passes); for the methods it compares
// the metrics of an analysis on the CPU with one on the GPU. `haeols verify`
// prints the Report.
//
// # Tolerances
//
// With eps = 2^-24: for a logit, cond = scale*|q|*|k| bounds the rounding
// error of its float32 dot product, tolS = 4*d*eps*cond; tolRow is the
// largest tolS of a row, tolMax the largest of all; a float32 sum of k
// terms may be off by k*eps relative (the worst-case bound; GPU tree sums
// are far below it). With n keys and m calibration rows:
//
//   - logits, row maxima: tolS;
//   - attention and row sums of exponentials: (2e-5 + 2*tolRow + n*eps) *
//     |ref| (+1e-7 for attention): exp and log on a GPU are accurate to a
//     few ulp, not correctly rounded; a logit error e scales a probability
//     by exp(e); the row sum has n terms;
//   - salience: (2e-5 + 2*tolMax + (n+m)*eps) * |ref| + 1e-7;
//   - key and row entropy (normalized to [0, 1]): 1e-4 + 4*tolMax + 2*n*eps;
//   - outputs: (1e-5 + 2*tolMax + n*eps) * (max|v| + |ref|);
//   - bin mass (k keys in the bin): (2e-5 + k*eps) * |ref| plus 1e-7;
//     bin values: (1e-5 + k*eps) * (max|v| + |ref|);
//   - features: (2e-5 + 8*d*eps*cond) * |ref|;
//   - error sums: 1e-5 * (|ref| + sum r^2 + sum o^2) of the row.
//
// Metrics (err, err_cal, cos of each head) of an analysis on the GPU may
// differ from the CPU's by more than rounding where a method's discrete
// choice (which token ranks higher) flips on a near tie; MetricTol bounds
// the per-head difference, and at ratio 1 both must be exactly 0.
package verify

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gpu"
	"github.com/haeols/haeols/core/kernel"
	"github.com/haeols/haeols/core/sample"
)

const eps32 = 0x1p-24

// MetricTol is the largest per-head difference of err, err_cal and cos
// between an analysis on the CPU and one on the GPU.
const MetricTol = 1e-3

// KernelDev is the deviation of one kernel output.
type KernelDev struct {
	Kernel string `json:"kernel"`
	Output string `json:"output"`
	Count  int    `json:"count"` // elements compared
	// CPUAbs and CPURel are the largest absolute and relative deviations of
	// the CPU kernel from float64; CPUTol the largest deviation in units of
	// the tolerance.
	CPUAbs float64 `json:"cpu_abs"`
	CPURel float64 `json:"cpu_rel"`
	CPUTol float64 `json:"cpu_tol"`
	// The same for the GPU kernel (absent without a GPU), and the largest
	// absolute GPU - CPU difference.
	GPUAbs   *float64 `json:"gpu_abs,omitempty"`
	GPURel   *float64 `json:"gpu_rel,omitempty"`
	GPUTol   *float64 `json:"gpu_tol,omitempty"`
	GPUvsCPU *float64 `json:"gpu_vs_cpu,omitempty"`
	Pass     bool     `json:"pass"`
}

// MetricDev compares one metric of one method between the CPU and the GPU
// analysis: the mean over the group's heads on each, and the largest
// per-head difference.
type MetricDev struct {
	Method string  `json:"method"`
	Ratio  float64 `json:"ratio"`
	Metric string  `json:"metric"`
	CPU    float64 `json:"cpu"`
	GPU    float64 `json:"gpu"`
	MaxAbs float64 `json:"max_abs"`
	Pass   bool    `json:"pass"`
}

// Report is the verification of one group (a KV head and its query heads).
type Report struct {
	Sample  string      `json:"sample"`
	Layer   int         `json:"layer"`
	KV      int         `json:"kv_head"`
	Heads   int         `json:"heads"`
	Rows    int         `json:"rows"` // calibration rows
	N       int         `json:"n"`    // prefix keys
	D       int         `json:"d"`
	T       int         `json:"probes"`
	Adapter *gpu.Info   `json:"adapter,omitempty"`
	Kernels []KernelDev `json:"kernels"`
	Metrics []MetricDev `json:"metrics,omitempty"`
	Pass    bool        `json:"pass"`
}

// Options choose what Group verifies.
type Options struct {
	// Methods and Ratios to compare between the CPU and the GPU analysis
	// (nil: none).
	Methods []string
	Ratios  []float64
}

// Group verifies KV head kv of layer l of s: the CPU kernels always, the
// GPU kernels when dev is not nil.
func Group(s *sample.Sample, name string, l, kv int, dev *gpu.Device, opt Options) (*Report, error) {
	if !s.HasQKV() {
		return nil, fmt.Errorf("verify %s: the sample holds attention only; the kernels need q, k and v", name)
	}
	cg, err := core.Analyze(s, l, kv, core.Options{})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", name, err)
	}
	var gg *core.Group
	if dev != nil {
		if gg, err = core.Analyze(s, l, kv, core.Options{Accel: dev}); err != nil {
			return nil, fmt.Errorf("verify %s on the GPU: %w", name, err)
		}
	}
	m, n, d, t := cg.Rows, cg.N, cg.D, cg.T
	r := &Report{Sample: name, Layer: l, KV: kv, Heads: len(cg.Heads), Rows: m, N: n, D: d, T: t, Pass: true}
	if dev != nil {
		info := dev.Info()
		r.Adapter = &info
	}
	scale := float64(cg.Scale)
	pick := func(f func(g *core.Group) []float32) []float32 {
		if gg == nil {
			return nil
		}
		return f(gg)
	}

	// Calibration: logits, softmax, column and row statistics, outputs.
	sRef, cond := refLogits(cg.Qc, m, cg.K, n, d, scale)
	tolS := func(i int) float64 { return 4 * float64(d) * eps32 * cond[i] }
	rowTol := make([]float64, m)
	for i := range rowTol {
		for j := 0; j < n; j++ {
			rowTol[i] = max(rowTol[i], tolS(i*n+j))
		}
	}
	tolMax := slices.Max(rowTol)
	aRef, muRef, sumRef := refSoftmax(sRef, m, n, func(int) int { return n })
	salRef, keRef := refColumns(aRef, m, n)
	reRef := refRowEntropy(aRef, m, n)
	_, oRef := refWeighted(aRef, m, n, nil, cg.V, d)
	vmax := absMax(cg.V)
	sumN := float64(n) * eps32 // the bound of a float32 sum of n terms
	prob := func(rt []float64, cols int) func(int) float64 {
		return func(i int) float64 { return 2e-5 + 2*rt[i/cols] + sumN }
	}
	r.add("logits", "S", sRef, cg.S, pick(func(g *core.Group) []float32 { return g.S }), func(i int, _ float64) float64 { return tolS(i) })
	r.add("softmax", "A", aRef, cg.A, pick(func(g *core.Group) []float32 { return g.A }), relTol(prob(rowTol, n), 1e-7))
	r.add("softmax", "Mu", muRef, cg.Mu, pick(func(g *core.Group) []float32 { return g.Mu }), func(i int, _ float64) float64 { return rowTol[i] })
	r.add("softmax", "RowSum", sumRef, cg.RowSum, pick(func(g *core.Group) []float32 { return g.RowSum }), relTol(prob(rowTol, 1), 0))
	colTol := relTol(func(int) float64 { return 2e-5 + 2*tolMax + sumN + float64(m)*eps32 }, 1e-7)
	entTol := func(int, float64) float64 { return 1e-4 + 4*tolMax + 2*sumN }
	outTol := func(_ int, ref float64) float64 { return (1e-5 + 2*tolMax + sumN) * (vmax + math.Abs(ref)) }
	r.add("columns", "Salience", salRef, cg.Salience, pick(func(g *core.Group) []float32 { return g.Salience }), colTol)
	r.add("columns", "KeyEntropy", keRef, cg.KeyEntropy, pick(func(g *core.Group) []float32 { return g.KeyEntropy }), entTol)
	r.add("rowentropy", "RowEntropy", reRef, cg.RowEntropy, pick(func(g *core.Group) []float32 { return g.RowEntropy }), entTol)
	r.add("weighted", "O (calibration outputs)", oRef, cg.Oc, pick(func(g *core.Group) []float32 { return g.Oc }), outTol)

	// Probes: logits against the prefix, outputs over prefix and causal
	// suffix (the full-cache references of every metric).
	for hi, p := range cg.Probes {
		kAll, vAll := s.KHead(l, kv), s.VHead(l, kv)
		ps, pc := refLogits(p.Q, t, kAll, n+t, d, scale)
		prow := make([]float64, t)
		sPre := make([]float64, t*n)
		for i := 0; i < t; i++ {
			copy(sPre[i*n:(i+1)*n], ps[i*(n+t):i*(n+t)+n])
			for j := 0; j < n+i+1; j++ {
				prow[i] = max(prow[i], 4*float64(d)*eps32*pc[i*(n+t)+j])
			}
		}
		pa, _, _ := refSoftmax(ps, t, n+t, func(i int) int { return n + i + 1 })
		_, po := refWeighted(pa, t, n+t, nil, vAll, d)
		ptol, pv := slices.Max(prow), absMax(vAll)
		var gs, gO []float32
		if gg != nil {
			gs, gO = gg.Probes[hi].S, gg.Probes[hi].O
		}
		head := fmt.Sprintf(" (head %d)", p.Head)
		r.add("logits", "probe S"+head, sPre, p.S, gs, func(i int, _ float64) float64 { return prow[i/n] })
		r.add("attend", "probe O"+head, po, p.O, gO, func(_ int, ref float64) float64 {
			return (1e-5 + 2*ptol + float64(n+t)*eps32) * (pv + math.Abs(ref))
		})
	}

	// Bin mass and features, on the CPU's attention as the common input:
	// the bin is the less salient half of the prefix, in position order,
	// split into 8 segments whose mean keys are the summary keys.
	a64 := to64(cg.A)
	var bin []int32
	med := median(cg.Salience)
	for j, x := range cg.Salience {
		if x < med {
			bin = append(bin, int32(j))
		}
	}
	zRef, yRef := refWeighted(a64, m, n, bin, cg.V, d)
	zc, yc := make([]float32, m), make([]float32, m*d)
	kernel.BinMass(zc, yc, cg.A, m, n, bin, cg.V, d)
	var zg, yg []float32
	if dev != nil {
		zg, yg = make([]float32, m), make([]float32, m*d)
		if err := dev.BinMass(zg, yg, cg.A, m, n, bin, cg.V, d); err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
	}
	sumBin := float64(len(bin)) * eps32
	r.add("weighted", "bin mass z", zRef, zc, zg, relTol(func(int) float64 { return 2e-5 + sumBin }, 1e-7))
	r.add("weighted", "bin values Y", yRef, yc, yg, func(_ int, ref float64) float64 { return (1e-5 + sumBin) * (vmax + math.Abs(ref)) })

	ns := min(8, len(bin))
	if ns > 0 {
		khat := make([]float32, ns*d)
		for u := 0; u < ns; u++ {
			lo, hi := u*len(bin)/ns, (u+1)*len(bin)/ns
			for c := 0; c < d; c++ {
				var acc float64
				for _, j := range bin[lo:hi] {
					acc += float64(cg.K[int(j)*d+c])
				}
				khat[u*d+c] = float32(acc / float64(hi-lo))
			}
		}
		fs, fcond := refLogits(cg.Qc, m, khat, ns, d, scale)
		fRef := make([]float64, m*ns)
		for i := range fRef {
			fRef[i] = math.Exp(fs[i] - float64(cg.Mu[i/ns]))
		}
		// The CPU features as fitSummaries computes them.
		f32 := make([]float32, m*ns)
		kernel.Features(f32, cg.Qc, m, khat, ns, d, cg.Scale, cg.Mu)
		fc := to64(f32)
		var fg []float32
		if dev != nil {
			fg = make([]float32, m*ns)
			if err := dev.Features(fg, cg.Qc, m, khat, ns, d, cg.Scale, cg.Mu); err != nil {
				return nil, fmt.Errorf("verify %s: %w", name, err)
			}
		}
		r.add64("features", "F", fRef, fc, fg, relTol(func(i int) float64 { return 2e-5 + 8*float64(d)*eps32*fcond[i] }, 1e-30))
	}

	// Error sums of the GPU's probe outputs (or the CPU's) against the
	// CPU's references.
	p := cg.Probes[0]
	o := p.O
	if gg != nil {
		o = gg.Probes[0].O
	}
	eRef := make([]float64, 4*t)
	ec := make([]float64, 4*t)
	for i := 0; i < t; i++ {
		var dd, rr, oo, or float64
		var dd32, rr32, oo32, or32 float32
		for c := 0; c < d; c++ {
			x, y := o[i*d+c], p.O[i*d+c]
			dd += (float64(x) - float64(y)) * (float64(x) - float64(y))
			rr += float64(y) * float64(y)
			oo += float64(x) * float64(x)
			or += float64(x) * float64(y)
			dd32 += float32((x - y) * (x - y))
			rr32 += float32(y * y)
			oo32 += float32(x * x)
			or32 += float32(x * y)
		}
		copy(eRef[4*i:], []float64{dd, rr, oo, or})
		copy(ec[4*i:], []float64{float64(dd32), float64(rr32), float64(oo32), float64(or32)})
	}
	var eg []float32
	if dev != nil {
		eg = make([]float32, 4*t)
		if err := dev.RowErrors(eg, o, p.O, t, d); err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
	}
	r.add64("errors", "error sums", eRef, ec, eg, func(i int, ref float64) float64 {
		row := eRef[4*(i/4) : 4*(i/4)+4]
		return 1e-5*(math.Abs(ref)+row[1]+row[2]) + 1e-30
	})

	if gg != nil {
		if err := r.compareMetrics(cg, gg, opt); err != nil {
			return nil, fmt.Errorf("verify %s: %w", name, err)
		}
	}
	return r, nil
}

// compareMetrics runs every method at every ratio on both analyses.
func (r *Report) compareMetrics(cg, gg *core.Group, opt Options) error {
	for _, meth := range opt.Methods {
		for _, rho := range opt.Ratios {
			p := core.DefaultParams(rho)
			cc, err1 := cg.Compress(meth, p)
			gc, err2 := gg.Compress(meth, p)
			if err1 != nil || err2 != nil {
				if errors.Is(err1, core.ErrDoesNotFit) && errors.Is(err2, core.ErrDoesNotFit) {
					continue
				}
				return fmt.Errorf("%s at %g: cpu: %v, gpu: %v", meth, rho, err1, err2)
			}
			devs := map[string]*MetricDev{}
			names := []string{"err", "err_cal", "cos", "ratio"}
			for _, k := range names {
				devs[k] = &MetricDev{Method: meth, Ratio: rho, Metric: k}
			}
			for hi := range cg.Heads {
				cm, gm := cg.Evaluate(cc, hi), gg.Evaluate(gc, hi)
				for _, k := range names {
					a, b := pickMetric(cm, k), pickMetric(gm, k)
					dv := devs[k]
					dv.CPU += a / float64(len(cg.Heads))
					dv.GPU += b / float64(len(cg.Heads))
					dv.MaxAbs = max(dv.MaxAbs, math.Abs(a-b))
				}
			}
			for _, k := range names {
				dv := devs[k]
				dv.Pass = dv.MaxAbs <= MetricTol
				if rho == 1 && k != "cos" && k != "ratio" {
					dv.Pass = dv.CPU == 0 && dv.GPU == 0
				}
				r.Pass = r.Pass && dv.Pass
				r.Metrics = append(r.Metrics, *dv)
			}
		}
	}
	return nil
}

func pickMetric(m core.Metrics, k string) float64 {
	switch k {
	case "err":
		return m.Err
	case "err_cal":
		return m.ErrCal
	case "cos":
		return m.Cos
	}
	return m.Ratio
}

// add records the deviations of the float32 outputs cpu and gpu (nil: no
// GPU) from ref, with tol(i, ref[i]) the tolerance of element i.
func (r *Report) add(kern, out string, ref []float64, cpu, gpu []float32, tol func(int, float64) float64) {
	r.add64(kern, out, ref, to64(cpu), gpu, tol)
}

func (r *Report) add64(kern, out string, ref, cpu []float64, gpu []float32, tol func(int, float64) float64) {
	k := KernelDev{Kernel: kern, Output: out, Count: len(ref)}
	floor := 1e-6 * absMax64(ref)
	dev := func(x []float64) (abs, rel, tl float64) {
		for i, y := range ref {
			e := math.Abs(x[i] - y)
			if math.IsNaN(x[i]) {
				e = math.Inf(1)
			}
			abs = max(abs, e)
			rel = max(rel, e/max(math.Abs(y), floor, 1e-300))
			tl = max(tl, e/tol(i, y))
		}
		return
	}
	k.CPUAbs, k.CPURel, k.CPUTol = dev(cpu)
	k.Pass = k.CPUTol <= 1
	if gpu != nil {
		g := to64(gpu)
		a, rl, tl := dev(g)
		var vs float64
		for i := range g {
			vs = max(vs, math.Abs(g[i]-cpu[i]))
		}
		k.GPUAbs, k.GPURel, k.GPUTol, k.GPUvsCPU = &a, &rl, &tl, &vs
		k.Pass = k.Pass && tl <= 1
	}
	r.Pass = r.Pass && k.Pass
	r.Kernels = append(r.Kernels, k)
}

// relTol is the tolerance rel(i)*|ref| + abs.
func relTol(rel func(int) float64, abs float64) func(int, float64) float64 {
	return func(i int, ref float64) float64 { return rel(i)*math.Abs(ref) + abs }
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func absMax(x []float32) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(float64(v)))
	}
	return m
}

func absMax64(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

func median(x []float32) float32 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
}
