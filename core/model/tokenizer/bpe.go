package tokenizer

import "container/heap"

// merge applies the tokenizer's merges to the symbols of one word until
// none applies: the adjacent pair of best priority (lowest merge rank, or
// highest score of the merged token) is joined first, the left-most of
// equal priorities first, as SentencePiece's and Hugging Face's BPE do.
func (t *Tokenizer) merge(syms []string) []string {
	if len(syms) < 2 {
		return syms
	}
	n := len(syms)
	prev, next := make([]int, n), make([]int, n)
	for i := range syms {
		prev[i], next[i] = i-1, i+1
	}
	next[n-1] = -1
	q := &pairQueue{}
	push := func(l int) {
		if l < 0 || next[l] < 0 {
			return
		}
		r := next[l]
		if pri, ok := t.pairPriority(syms[l], syms[r]); ok {
			heap.Push(q, pair{pri: pri, left: l, right: r, size: len(syms[l]) + len(syms[r])})
		}
	}
	for i := 0; i+1 < n; i++ {
		push(i)
	}
	for q.Len() > 0 {
		p := heap.Pop(q).(pair)
		// Stale: a side was merged away or changed since it was queued.
		if syms[p.left] == "" || next[p.left] != p.right || len(syms[p.left])+len(syms[p.right]) != p.size {
			continue
		}
		syms[p.left] += syms[p.right]
		syms[p.right] = ""
		r := next[p.right]
		next[p.left] = r
		if r >= 0 {
			prev[r] = p.left
		}
		push(prev[p.left])
		push(p.left)
	}
	out := syms[:0]
	for i := 0; i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

// pairPriority is the priority of merging a and b (lower is better) and
// whether they merge at all.
func (t *Tokenizer) pairPriority(a, b string) (float64, bool) {
	if t.merges != nil {
		r, ok := t.merges[a+"\x00"+b]
		if !ok {
			return 0, false
		}
		if _, inVocab := t.index[a+b]; !inVocab {
			return 0, false
		}
		return float64(r), true
	}
	id, ok := t.index[a+b]
	if !ok || (t.types[id] != Normal && t.types[id] != UserDefined) {
		return 0, false
	}
	return -float64(t.scores[id]), true
}

type pair struct {
	pri         float64
	left, right int
	size        int
}

type pairQueue []pair

func (q pairQueue) Len() int { return len(q) }
func (q pairQueue) Less(i, j int) bool {
	if q[i].pri != q[j].pri {
		return q[i].pri < q[j].pri
	}
	return q[i].left < q[j].left
}
func (q pairQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pairQueue) Push(x any)   { *q = append(*q, x.(pair)) }
func (q *pairQueue) Pop() any {
	old := *q
	p := old[len(old)-1]
	*q = old[:len(old)-1]
	return p
}
