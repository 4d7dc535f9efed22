package core

import (
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
}

// Maps computes the attention maps of the query head at index hi of g.Heads
// for cache c.
func (g *Group) Maps(c *Cache, hi int) *AttentionMaps {
	n, d, w, t := g.N, g.D, g.W, g.T
	p := g.Probes[hi]
	am := &AttentionMaps{Rows: w + t, Cols: n, Calib: w, Orig: make([]float32, (w+t)*n), Comp: make([]float32, (w+t)*n)}
	copy(am.Orig, g.A[hi*w*n:(hi+1)*w*n])
	if g.AttnOnly {
		copy(am.Orig[w*n:], p.Attn)
		keptMaps(am, c)
		return am
	}
	// Probe rows of the original: exp(S - max) / total, total including the
	// suffix partial.
	for i := 0; i < t; i++ {
		row := p.S[i*n : i*n+n]
		mx := p.Suffix.Max[i]
		for _, x := range row {
			mx = max(mx, x)
		}
		tot := p.Suffix.Sum[i] * kernel.Exp32(p.Suffix.Max[i]-mx)
		o := am.Orig[(w+i)*n : (w+i+1)*n]
		for j, x := range row {
			o[j] = kernel.Exp32(x - mx)
			tot += o[j]
		}
		for j := range o {
			o[j] /= tot
		}
	}
	// Compressed: logits of exact tokens and synthetic tokens per row.
	qs := [][]float32{g.Qc[hi*w*d : (hi+1)*w*d], p.Q}
	ss := [][]float32{g.S[hi*w*n : (hi+1)*w*n], p.S}
	syn := make([]float32, max(c.C, 1))
	// Salience share of each summarized token within its segment.
	share := make([]float32, n)
	if c.C > 0 {
		segMass := map[int32]float32{}
		segCount := map[int32]float32{}
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
	approxIndex := make([]int32, n) // synthetic token of an Approx position
	if c.C > 0 {
		k := int32(0)
		for j := 0; j < n; j++ {
			approxIndex[j] = -1
			if c.Class[j] == Approx {
				approxIndex[j] = k
				k++
			}
		}
	}
	for part := 0; part < 2; part++ {
		rows := w
		if part == 1 {
			rows = t
		}
		for i := 0; i < rows; i++ {
			q := qs[part][i*d : i*d+d]
			s := ss[part][i*n : i*n+n]
			mx := float32(-3.4e38)
			var sufMax, sufSum float32
			if part == 1 {
				sufMax, sufSum = p.Suffix.Max[i], p.Suffix.Sum[i]
				mx = sufMax
			}
			for j := 0; j < n; j++ {
				if c.Class[j].Exact() {
					mx = max(mx, s[j])
				}
			}
			for k := 0; k < c.C; k++ {
				syn[k] = float32(g.Scale * kernel.Dot(q, c.Keys[k*d:k*d+d]))
				if c.Bias != nil {
					syn[k] += c.Bias[k]
				}
				mx = max(mx, syn[k])
			}
			var tot float32
			if part == 1 {
				tot = sufSum * kernel.Exp32(sufMax-mx)
			}
			o := am.Comp[(part*w+i)*n : (part*w+i+1)*n]
			for j := 0; j < n; j++ {
				if c.Class[j].Exact() {
					o[j] = kernel.Exp32(s[j] - mx)
					tot += o[j]
				}
			}
			for k := 0; k < c.C; k++ {
				syn[k] = kernel.Exp32(syn[k] - mx)
				tot += syn[k]
			}
			for j := 0; j < n; j++ {
				switch c.Class[j] {
				case Summarized:
					o[j] = syn[c.Segment[j]] * share[j]
				case Approx:
					o[j] = syn[approxIndex[j]]
				}
			}
			if tot > 0 {
				for j := range o {
					o[j] /= tot
				}
			}
		}
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
