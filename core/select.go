package core

import (
	"cmp"
	"slices"
)

func sortInt32(x []int32) { slices.Sort(x) }

// span returns the positions lo, lo+1, ..., hi-1.
func span(lo, hi int) []int32 {
	if hi <= lo {
		return nil
	}
	p := make([]int32, hi-lo)
	for i := range p {
		p[i] = int32(lo + i)
	}
	return p
}

// keepAlways marks the budget's sinks and recent window as exact.
func keepAlways(c *Cache) {
	b := c.Budget
	c.keepExact(span(0, b.Sinks), Sink)
	c.keepExact(span(b.N-b.Recent, b.N), Recent)
}

// rankPercentile returns R(x) of HAE-OLS.md §3 for each value: its rank among
// all values, scaled to [0, 1], ties broken stably by index (position).
func rankPercentile(x []float64) []float64 {
	m := len(x)
	idx := make([]int32, m)
	for i := range idx {
		idx[i] = int32(i)
	}
	// Ascending by value, ties by index: a total order, so the result does
	// not depend on the sorting algorithm.
	slices.SortFunc(idx, func(a, b int32) int {
		return cmp.Or(cmp.Compare(x[a], x[b]), cmp.Compare(a, b))
	})
	r := make([]float64, m)
	if m == 1 {
		r[0] = 1
		return r
	}
	for rank, i := range idx {
		r[i] = float64(rank) / float64(m-1)
	}
	return r
}

// byScore returns the candidate positions ordered by score, highest first,
// ties by lower position. score[i] belongs to pos[i].
func byScore(pos []int32, score []float64) []int32 {
	idx := make([]int32, len(pos))
	for i := range idx {
		idx[i] = int32(i)
	}
	// Descending by score, ties by index (positions are ascending in pos).
	slices.SortFunc(idx, func(a, b int32) int {
		return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b))
	})
	out := make([]int32, len(pos))
	for i, j := range idx {
		out[i] = pos[j]
	}
	return out
}

// splitTop returns topK(ordered, k) and the rest of ordered, both
// ascending by position, from one marking of the (distinct) positions.
func splitTop(ordered []int32, k int) (top, rest []int32) {
	return splitTopIn(nil, ordered, k)
}

// splitTopIn is splitTop with the results and the marks in memory from
// sc (nil: newly allocated).
func splitTopIn(sc *scratch, ordered []int32, k int) (top, rest []int32) {
	k = max(0, min(k, len(ordered)))
	if len(ordered) == 0 {
		return []int32{}, []int32{}
	}
	lo, hi := ordered[0], ordered[0]
	for _, j := range ordered {
		lo, hi = min(lo, j), max(hi, j)
	}
	// Both results get one slot of slack: the loop below writes every
	// position to both and advances the one it belongs to (no branch
	// per position).
	var mark []uint8
	if sc != nil {
		mark = sc.u8.take(int(hi-lo) + 1)
		top, rest = sc.i32.takeSet(k+1), sc.i32.takeSet(len(ordered)-k+1)
	} else {
		mark = make([]uint8, int(hi-lo)+1)
		top, rest = make([]int32, k+1), make([]int32, len(ordered)-k+1)
	}
	for i, j := range ordered {
		mark[j-lo] = 2
		if i < k {
			mark[j-lo] = 1
		}
	}
	nt, nr := 0, 0
	for i, m := range mark { // m: 0 not in ordered, 1 top, 2 rest
		p := lo + int32(i)
		top[nt], rest[nr] = p, p
		nt += int(m & 1)
		nr += int(m >> 1)
	}
	top, rest = top[:nt:nt], rest[:nr:nr]
	return top, rest
}

// topK returns the k best of ordered (as from byScore), ascending by position.
func topK(ordered []int32, k int) []int32 {
	k = max(0, min(k, len(ordered)))
	sel := ordered[:k]
	if k < 64 {
		out := slices.Clone(sel)
		sortInt32(out)
		return out
	}
	// Positions are distinct and dense: mark them and read them back in
	// order, O(k + range) instead of a sort.
	top, _ := splitTop(sel, k)
	return top
}

// evictionCache is the shared shape of the eviction baselines: sinks, the
// recent window and the k best candidates by score.
func evictionCache(name string, b Budget, score []float64) *Cache {
	c := newCache(name, b)
	keepAlways(c)
	lo, hi := b.Candidates()
	cands := span(lo, hi)
	c.keepExact(topK(byScore(cands, score), b.Free()), Anchor)
	c.finishExact()
	return c
}
