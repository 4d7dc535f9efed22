package core

import (
	"github.com/haeols/haeols/core/attnmap"
	"github.com/haeols/haeols/core/kernel"
)

// AttentionMaps are the attention pictures of one query head: rows are the
// head's W calibration queries followed by its T probe queries, columns the
// N prefix positions. Orig is the full-cache attention restricted to the
// prefix; Comp is the compressed cache's attention mapped back onto prefix
// positions: an exact or approximate token shows its own probability, a
// summary's probability is spread over the tokens of its segment in
// proportion to their salience, an evicted token shows 0. Both include the
// probability that probe queries put on the suffix in the row normalization,
// so rows of the two maps are directly comparable.
//
// For an attention-only group, Orig is the sample's attention (calibration
// rows renormalised over the prefix, probe rows as stored, see Analyze) and
// Comp keeps the exactly kept tokens' probabilities renormalised per row
// over what the row still sees (kept prefix tokens, plus the suffix for
// probe rows), as softmax over the smaller cache gives them; evicted tokens
// show 0, and a row that keeps no mass at all stays 0.
type AttentionMaps struct {
	Rows, Cols int
	Calib      int // the first Calib rows are calibration queries
	Orig, Comp []float32
	// Factored is Comp in factored form (see MapsFactored); nil for an
	// attention-only group.
	Factored *attnmap.Factored
}

// origMaps is a group's original attention map of its latest head asked
// for (Maps): a slider move asks for another cache of the same head.
type origMaps struct {
	hi     int
	orig   []float32 // (W+T) x N
	pm, pz []float32 // per probe row: max logit and normaliser (suffix included)
}

// origMap returns the original attention map of the query head at index
// hi (shared: callers must not modify it) and, unless the group is
// attention-only, its probe rows' max logit and normaliser.
func (g *Group) origMap(hi int) *origMaps {
	g.mapsMu.Lock()
	defer g.mapsMu.Unlock()
	if o := g.maps; o != nil && o.hi == hi {
		return o
	}
	n, w, t := g.N, g.W, g.T
	p := g.Probes[hi]
	o := &origMaps{hi: hi, orig: make([]float32, (w+t)*n)}
	copy(o.orig, g.A[hi*w*n:(hi+1)*w*n])
	if g.AttnOnly {
		copy(o.orig[w*n:], p.Attn)
		g.maps = o
		return o
	}
	// Probe rows: the prefix softmax, rescaled so that each row's total
	// includes the suffix partial. pm and pz are the rows' max logit and
	// normaliser: probe probability = exp(S - pm) / pz.
	po := o.orig[w*n:]
	pm, pz := make([]float32, t), make([]float32, t)
	kernel.SoftmaxRows(po, p.S, t, n, pm, pz)
	for i := 0; i < t; i++ {
		mx := max(pm[i], p.Suffix.Max[i])
		pre := float32(pz[i] * kernel.Exp32(pm[i]-mx))
		tot := pre + float32(p.Suffix.Sum[i]*kernel.Exp32(p.Suffix.Max[i]-mx))
		f := pre / tot
		for j := range po[i*n : (i+1)*n] {
			po[i*n+j] *= f
		}
		pm[i], pz[i] = mx, tot
	}
	o.pm, o.pz = pm, pz
	g.maps = o
	return o
}

// Maps computes the attention maps of the query head at index hi of g.Heads
// for cache c. Orig is shared by the maps of the same head (the group
// keeps its latest head's): do not modify it.
func (g *Group) Maps(c *Cache, hi int) *AttentionMaps {
	am := g.MapsFactored(c, hi)
	if am.Comp == nil {
		am.Comp = make([]float32, am.Rows*am.Cols)
		am.Factored.Expand(am.Comp, am.Orig)
	}
	return am
}

// MapsFactored is Maps with the compressed map in factored form (Factored,
// and Comp nil) where it has one, which is much smaller (the worker sends
// it to the heatmap page on every slider move); an attention-only group's
// compressed map comes in Comp as in Maps (Factored nil).
func (g *Group) MapsFactored(c *Cache, hi int) *AttentionMaps {
	n, d, w, t := g.N, g.D, g.W, g.T
	p := g.Probes[hi]
	o := g.origMap(hi)
	am := &AttentionMaps{Rows: w + t, Cols: n, Calib: w, Orig: o.orig}
	if g.AttnOnly {
		am.Comp = make([]float32, (w+t)*n)
		keptMaps(am, c)
		return am
	}
	f := &attnmap.Factored{Rows: w + t, Cols: n, Scale: make([]float32, w+t), Inv: make([]float32, w+t),
		Source: make([]int32, n), Share: make([]float32, n)}
	am.Factored = f
	if c.All {
		for r := range f.Scale {
			f.Scale[r] = 1
		}
		for j := range f.Source {
			f.Source[j] = attnmap.Exact
		}
		return am
	}
	pm, pz := o.pm, o.pz
	// Synthetic tokens' logits (with their biases) for every row.
	f.C = c.C
	syn := make([]float32, (w+t)*c.C)
	f.Syn = syn
	if c.C > 0 {
		kernel.Logits(syn[:w*c.C], g.Qc[hi*w*d:(hi+1)*w*d], w, c.Keys, c.C, d, g.Scale)
		kernel.Logits(syn[w*c.C:], p.Q, t, c.Keys, c.C, d, g.Scale)
		if c.Bias != nil {
			for r := 0; r < w+t; r++ {
				for k, b := range c.Bias[:c.C] {
					syn[r*c.C+k] += b
				}
			}
		}
	}
	// Salience share of each summarized token within its segment.
	share := f.Share
	if c.C > 0 {
		segMass := make([]float32, c.C)
		segCount := make([]float32, c.C)
		for j := 0; j < n; j++ {
			if c.Class[j] == Summarized {
				segMass[c.Segment[j]] += g.Salience[j]
				segCount[c.Segment[j]]++
			}
		}
		for j := 0; j < n; j++ {
			if c.Class[j] == Summarized {
				sg := c.Segment[j]
				if segMass[sg] > 0 {
					share[j] = g.Salience[j] / segMass[sg]
				} else {
					share[j] = 1 / segCount[sg]
				}
			}
		}
	}
	// The columns a compressed row fills: the exact ones, and those shown
	// through a synthetic token (its index, and the share of its
	// probability the column gets: the salience share for a summarized
	// token, 1 for an approximate copy).
	for j := range f.Source {
		f.Source[j] = attnmap.None
	}
	for _, j := range c.Exact {
		f.Source[j] = attnmap.Exact
	}
	if c.C > 0 {
		k := int32(0)
		for j := 0; j < n; j++ {
			switch c.Class[j] {
			case Summarized:
				f.Source[j] = c.Segment[j]
			case Approx:
				f.Source[j], share[j] = k, 1
				k++
			}
		}
	}
	// Per row, the factors: a row's probabilities are P[j] = exp(S[j] - m)
	// / z, so an exact token's weight relative to a new maximum m2 is P[j] z
	// exp(m - m2), with no exponential per token.
	for r := 0; r < w+t; r++ {
		orow := am.Orig[r*n : (r+1)*n]
		var m, z, sufMax, sufSum float32
		if r < w {
			m, z = g.Mu[hi*w+r], g.RowSum[hi*w+r]
		} else {
			i := r - w
			m, z = pm[i], pz[i]
			sufMax, sufSum = p.Suffix.Max[i], p.Suffix.Sum[i]
		}
		sr := syn[r*c.C : (r+1)*c.C]
		m2 := m
		for _, x := range sr {
			if x > m2 {
				m2 = x
			}
		}
		var kept float32
		for _, j := range c.Exact {
			kept += orow[j]
		}
		fe := z * kernel.Exp32(m-m2)
		tot := float32(kept * fe)
		if r >= w {
			tot += float32(sufSum * kernel.Exp32(sufMax-m2))
		}
		for k, x := range sr {
			sr[k] = kernel.Exp32(x - m2)
			tot += sr[k]
		}
		if !(tot > 0) {
			f.Scale[r] = -1 // the row keeps nothing: all 0
			continue
		}
		inv := 1 / tot
		f.Scale[r], f.Inv[r] = fe*inv, inv
	}
	return am
}

// keptMaps sets am.Comp for an attention-only group from am.Orig: per row,
// the kept tokens' probabilities divided by the row's retained mass (1 minus
// the mass on tokens not kept exactly), in float64.
func keptMaps(am *AttentionMaps, c *Cache) {
	n := am.Cols
	for i := 0; i < am.Rows; i++ {
		o, out := am.Orig[i*n:(i+1)*n], am.Comp[i*n:(i+1)*n]
		var lost float64
		for j, x := range o {
			if !c.All && !c.Class[j].Exact() {
				lost += float64(x)
			}
		}
		kept := 1 - lost
		if !(kept > 0) {
			continue
		}
		for j, x := range o {
			if c.All || c.Class[j].Exact() {
				out[j] = float32(float64(x) / kept)
			}
		}
	}
}
