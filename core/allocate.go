package core

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Budget policies: how one total memory budget is shared among a model's
// KV heads (Params.Budget). Every policy hands out the same total, the
// uniform one: floor(rho * n) slots per KV head, summed over the model's
// KV heads.
const (
	// BudgetUniform gives every KV head floor(rho * n) slots.
	BudgetUniform = "uniform"
	// BudgetPyramid shares the total among layers as PyramidKV does: an
	// arithmetic sequence from (2 - 1/PyramidBeta) times the mean at layer
	// 0 down to 1/PyramidBeta times it at the last layer, KV heads of a
	// layer alike.
	BudgetPyramid = "pyramid"
	// BudgetAdaKV keeps each layer's uniform total and shares it among the
	// layer's KV heads as AdaKV does: AdaKVFloor of it evenly, the rest to
	// the tokens with the highest attention mass (Group.Salience) over all
	// the layer's KV heads together, each head getting the slots of its
	// tokens among them.
	BudgetAdaKV = "adakv"
	// BudgetHAE measures each KV head's calibration error (Metrics.ErrCal,
	// never the held-out probes) for the method at the ratios of
	// allocLadder and gives each next slot where that error falls fastest
	// per slot (greedy on each head's lower convex hull).
	BudgetHAE = "hae"
)

// Budgets are the budget policies, the default first.
var Budgets = []string{BudgetUniform, BudgetPyramid, BudgetAdaKV, BudgetHAE}

// PyramidBeta is PyramidKV's beta: the last layer keeps 1/beta of the mean.
const PyramidBeta = 20

// AdaKVFloor is the share of each layer's budget AdaKV spreads evenly
// over its KV heads before ranking tokens.
const AdaKVFloor = 0.2

// allocLadder are the ratios at which BudgetHAE measures each head.
var allocLadder = []float64{1.0 / 32, 1.0 / 16, 1.0 / 8, 3.0 / 16, 1.0 / 4, 3.0 / 8, 1.0 / 2, 5.0 / 8, 3.0 / 4, 7.0 / 8, 1}

// Allocation is the share of each KV head (layer-major: l*KVHeads + kv)
// of one total budget.
type Allocation struct {
	Policy  string
	Ratio   float64 // the asked total ratio
	N       int     // slots of a KV head's full prefix cache
	KVHeads int
	// Slots are each KV head's slots; they sum to Total.
	Slots []int
	Total int
}

// RatioOf returns the ratio KV head kv of layer l is given.
func (a *Allocation) RatioOf(l, kv int) float64 {
	return float64(a.Slots[l*a.KVHeads+kv]) / float64(a.N)
}

// ParamsOf returns p for KV head kv of layer l: its ratio from the
// allocation, Budget cleared (the head's own compression is uniform).
func (a *Allocation) ParamsOf(p Params, l, kv int) Params {
	p.Ratio, p.Budget = a.RatioOf(l, kv), ""
	return p
}

// IsUniform reports whether the budget policy is the uniform one.
func IsUniform(budget string) bool { return budget == "" || budget == BudgetUniform }

// allocKey names an allocation of a model: the method and the whole
// parameters.
type allocKey struct {
	method string
	p      Params
}

type allocEntry struct {
	a   *Allocation
	err error
}

// maxAllocs bounds the allocations a Model keeps (a slider's steps).
const maxAllocs = 64

// Allocate shares the budget of p.Ratio among the model's KV heads by
// p.Budget; method is the one BudgetHAE measures. The allocation does not
// depend on anything but the sample, the policy, the method and p; the
// model keeps it, so every caller shares one (do not modify it).
func (m *Model) Allocate(method string, p Params) (*Allocation, error) {
	k := allocKey{method, p}
	m.allocMu.Lock()
	e, ok := m.allocs[k]
	m.allocMu.Unlock()
	if ok {
		return e.a, e.err
	}
	a, err := m.allocate(method, p)
	m.allocMu.Lock()
	if m.allocs == nil || len(m.allocs) >= maxAllocs {
		m.allocs = map[allocKey]allocEntry{}
	}
	m.allocs[k] = allocEntry{a, err}
	m.allocMu.Unlock()
	return a, err
}

// allocate is Allocate without the memo.
func (m *Model) allocate(method string, p Params) (*Allocation, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := m.Sample
	L, H := s.L, s.KVHeads()
	g0, err := m.Group(0, 0)
	if err != nil {
		return nil, err
	}
	b, err := g0.budget(p.Ratio, 0, 0)
	if err != nil {
		return nil, err
	}
	n, per := g0.N, b.Slots
	a := &Allocation{Policy: p.Budget, Ratio: p.Ratio, N: n, KVHeads: H, Slots: make([]int, L*H), Total: per * L * H}
	if a.Policy == "" {
		a.Policy = BudgetUniform
	}
	switch a.Policy {
	case BudgetUniform:
		for i := range a.Slots {
			a.Slots[i] = per
		}
	case BudgetPyramid:
		w := make([]float64, L*H)
		for l := 0; l < L; l++ {
			x := 1.0
			if L > 1 {
				lo, hi := 1.0/PyramidBeta, 2-1.0/PyramidBeta
				x = hi - (hi-lo)*float64(l)/float64(L-1)
			}
			for kv := 0; kv < H; kv++ {
				w[l*H+kv] = x
			}
		}
		share(a.Slots, w, a.Total, n)
	case BudgetAdaKV:
		for l := 0; l < L; l++ {
			if err := m.adaKV(a.Slots[l*H:(l+1)*H], l, per*H, n); err != nil {
				return nil, err
			}
		}
	case BudgetHAE:
		if err := m.haeAllocate(a, method, p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("budget %q: unknown policy (known: %v)", p.Budget, Budgets)
	}
	return a, nil
}

// share sets out to integer slots proportional to w summing to total,
// each in [1, n] (largest remainders, then what a cap leaves goes to the
// others in proportion).
func share(out []int, w []float64, total, n int) {
	fixed := make([]bool, len(out))
	left := total
	for {
		var sw float64
		for i, x := range w {
			if !fixed[i] {
				sw += x
			}
		}
		capped := false
		for i, x := range w {
			if !fixed[i] && float64(left)*x/sw > float64(n) {
				out[i], fixed[i], capped = n, true, true
				left -= n
			}
		}
		if capped {
			continue
		}
		type rem struct {
			i int
			r float64
		}
		var rs []rem
		given := 0
		for i, x := range w {
			if fixed[i] {
				continue
			}
			v := float64(left) * x / sw
			out[i] = int(math.Floor(v))
			given += out[i]
			rs = append(rs, rem{i, v - math.Floor(v)})
		}
		slices.SortStableFunc(rs, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
		for k := 0; k < left-given; k++ {
			out[rs[k%len(rs)].i]++
		}
		break
	}
	lift(out, n)
}

// lift raises every entry to at least 1 slot, taking them from the
// largest, so the sum is unchanged (the total is at least len(out)).
func lift(out []int, n int) {
	for i := range out {
		for out[i] < 1 {
			j := 0
			for k := range out {
				if out[k] > out[j] {
					j = k
				}
			}
			out[j]--
			out[i]++
		}
		out[i] = min(out[i], n)
	}
}

// adaKV shares a layer's total among its KV heads (out) as BudgetAdaKV.
func (m *Model) adaKV(out []int, l, total, n int) error {
	type tok struct {
		a     float32
		kv, j int
	}
	var toks []tok
	for kv := range out {
		g, err := m.Group(l, kv)
		if err != nil {
			return err
		}
		for j, x := range g.Salience {
			toks = append(toks, tok{x, kv, j})
		}
	}
	floor := int(math.Floor(AdaKVFloor * float64(total) / float64(len(out))))
	for kv := range out {
		out[kv] = floor
	}
	left := total - floor*len(out)
	// The highest mass first; ties by head, then position, so the order
	// is fixed.
	slices.SortStableFunc(toks, func(x, y tok) int {
		if c := cmp.Compare(y.a, x.a); c != 0 {
			return c
		}
		if x.kv != y.kv {
			return x.kv - y.kv
		}
		return x.j - y.j
	})
	for _, t := range toks {
		if left == 0 {
			break
		}
		if out[t.kv] < n {
			out[t.kv]++
			left--
		}
	}
	lift(out, n)
	return nil
}

// haeAllocate fills a by BudgetHAE.
func (m *Model) haeAllocate(a *Allocation, method string, p Params) error {
	type point struct {
		slots int
		err   float64
	}
	s := m.Sample
	hulls := make([][]point, len(a.Slots))
	for l := 0; l < s.L; l++ {
		for kv := 0; kv < a.KVHeads; kv++ {
			g, err := m.Group(l, kv)
			if err != nil {
				return err
			}
			var pts []point
			for _, r := range allocLadder {
				q := p
				q.Ratio, q.Budget = r, ""
				b, err := g.budget(r, 0, 0)
				if err != nil || b.Slots < 1 || (len(pts) > 0 && b.Slots == pts[len(pts)-1].slots) {
					continue
				}
				c, err := g.Compress(method, q)
				if err != nil {
					continue // this ratio does not fit the method
				}
				var e float64
				for hi := range g.Heads {
					e += g.Evaluate(c, hi).ErrCal
				}
				pts = append(pts, point{b.Slots, e / float64(len(g.Heads))})
			}
			if len(pts) == 0 {
				return fmt.Errorf("budget hae: %s fits no ratio of layer %d KV head %d: %w", method, l, kv, ErrDoesNotFit)
			}
			// The lower convex hull, error falling.
			var h []point
			for _, pt := range pts {
				for len(h) >= 2 {
					x, y := h[len(h)-2], h[len(h)-1]
					if (y.err-x.err)*float64(pt.slots-x.slots) >= (pt.err-x.err)*float64(y.slots-x.slots) {
						h = h[:len(h)-1]
					} else {
						break
					}
				}
				h = append(h, pt)
			}
			hulls[l*a.KVHeads+kv] = h
		}
	}
	at := make([]int, len(hulls)) // each head's hull point
	left := a.Total
	for i, h := range hulls {
		a.Slots[i] = h[0].slots
		left -= h[0].slots
	}
	if left < 0 {
		// The method's smallest fitting ratio is above the total: give
		// the uniform shares (the compression then says it does not fit).
		for i := range a.Slots {
			a.Slots[i] = a.Total / len(a.Slots)
		}
		a.Slots[0] += a.Total - a.Total/len(a.Slots)*len(a.Slots)
		return nil
	}
	for left > 0 {
		best, slope := -1, 0.0
		for i, h := range hulls {
			if at[i]+1 >= len(h) {
				continue
			}
			x, y := h[at[i]], h[at[i]+1]
			if s := (x.err - y.err) / float64(y.slots-x.slots); best < 0 || s > slope {
				best, slope = i, s
			}
		}
		if best < 0 {
			break // every head at its full cache
		}
		x, y := hulls[best][at[best]], hulls[best][at[best]+1]
		step := min(y.slots-x.slots, left)
		a.Slots[best] += step
		left -= step
		at[best]++
	}
	// What the hulls leave (every head full) cannot happen: the total is
	// at most every head's full cache. Spread any rest anyway.
	for i := 0; left > 0 && i < len(a.Slots); i++ {
		add := min(left, a.N-a.Slots[i])
		a.Slots[i] += add
		left -= add
	}
	return nil
}
