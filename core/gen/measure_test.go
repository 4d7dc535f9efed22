package gen

import (
	"math"

	"github.com/haeols/haeols/core/sample"
)

// This file holds the attention measurements the behaviour tests use:
// plain float64 loops, written for clarity, not speed.

// attnRow returns the softmax attention of query position i of head (l, h)
// over keys 0..nk-1 (float64).
func attnRow(s *sample.Sample, l, h, i, nk int) []float64 {
	q := s.QHead(l, h)[i*s.D : i*s.D+s.D]
	k := s.KHead(l, s.KVHeadOf(h))
	sc := s.Scale()
	a := make([]float64, nk)
	mx := math.Inf(-1)
	for j := 0; j < nk; j++ {
		var d float64
		for c := 0; c < s.D; c++ {
			d += float64(q[c]) * float64(k[j*s.D+c])
		}
		a[j] = d * sc
		mx = math.Max(mx, a[j])
	}
	var t float64
	for j := range a {
		a[j] = math.Exp(a[j] - mx)
		t += a[j]
	}
	for j := range a {
		a[j] /= t
	}
	return a
}

// causalRow is the attention of query i over keys 0..i, as in the model run.
func causalRow(s *sample.Sample, l, h, i int) []float64 { return attnRow(s, l, h, i, i+1) }

// headStats are the behaviour measurements of one head.
type headStats struct {
	sink    float64 // mean mass on keys 0..3
	local   float64 // mean mass on the last 32 keys (i-31..i)
	entropy float64 // mean normalized row entropy
	needleP float64 // mean mass of the needle probes on the needle tokens
	needleC float64 // mean mass of the calibration queries on the needle tokens (non-causal over the prefix)
	induct  float64 // mean mass on keys after an earlier occurrence of the query token
	inductN int     // number of queries with such keys
	bigram  float64 // mean mass on keys after an earlier occurrence of the query's last two tokens
	bigramN int     // number of queries with such keys
}

// queries returns the measured query positions: the calibration window
// (last w = min(128, n/2) prefix positions) and the probes.
func queries(s *sample.Sample) []int {
	n := s.Prefix()
	w := min(128, n/2)
	var out []int
	for i := n - w; i < s.N; i++ {
		out = append(out, i)
	}
	return out
}

// inductionTargets returns the keys j <= i that follow an earlier
// occurrence of the query's token (tok[j-1] == tok[i], j-1 < i): where an
// induction head should look (the "prefix matching" of Olsson et al., 2022).
// With bigram set, the token before must match too (tok[j-2] == tok[i-1]):
// the one continuation a copy would take.
func inductionTargets(tok []string, i int, bigram bool) []int {
	var out []int
	for j := 1; j <= i; j++ {
		if tok[j-1] != tok[i] || j-1 == i {
			continue
		}
		if bigram && (j < 2 || i < 1 || tok[j-2] != tok[i-1]) {
			continue
		}
		out = append(out, j)
	}
	return out
}

func measure(s *sample.Sample, l, h int) headStats {
	var st headStats
	n := s.Prefix()
	qs := queries(s)
	for _, i := range qs {
		a := causalRow(s, l, h, i)
		for j := 0; j < 4 && j <= i; j++ {
			st.sink += a[j]
		}
		for j := max(0, i-31); j <= i; j++ {
			st.local += a[j]
		}
		var e float64
		for _, p := range a {
			if p > 0 {
				e -= p * math.Log(p)
			}
		}
		st.entropy += e / math.Log(float64(len(a)))
		if t := inductionTargets(s.Meta.Tokens, i, false); len(t) > 0 {
			for _, j := range t {
				st.induct += a[j]
			}
			st.inductN++
		}
		if t := inductionTargets(s.Meta.Tokens, i, true); len(t) > 0 {
			for _, j := range t {
				st.bigram += a[j]
			}
			st.bigramN++
		}
	}
	st.sink /= float64(len(qs))
	st.local /= float64(len(qs))
	st.entropy /= float64(len(qs))
	if st.inductN > 0 {
		st.induct /= float64(st.inductN)
	}
	if st.bigramN > 0 {
		st.bigram /= float64(st.bigramN)
	}
	if len(s.Meta.Needles) > 0 {
		for _, p := range s.Meta.NeedleProbes {
			a := causalRow(s, l, h, n+p)
			for _, j := range s.Meta.Needles {
				st.needleP += a[j]
			}
		}
		st.needleP /= float64(len(s.Meta.NeedleProbes))
		w := min(128, n/2)
		for i := n - w; i < n; i++ {
			a := attnRow(s, l, h, i, n)
			for _, j := range s.Meta.Needles {
				st.needleC += a[j]
			}
		}
		st.needleC /= float64(w)
	}
	return st
}
