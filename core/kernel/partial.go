package kernel

import "math"

// Block sizes of the Partial kernels: AddKeys computes the logits of
// partRows query rows (at most partRowsMax) by partKeys keys at a time into
// a stack buffer, and every row update exponentiates at most expChunk
// logits at a time. The rows of a block do not change any row's bits.
const (
	partRowsMax = 8
	partKeys    = 128
	expChunk    = 256
)

// partRows is AddKeys's rows per block: 8 with 8 lanes, whose logits
// kernel for up to 8 rows puts them in the lanes (BenchmarkPartialAddKeys
// 1.3x faster than 4 rows), and 4 otherwise (in wasm 4 rows are 1.3x
// faster than 8).
func partRows() int {
	if vecLanes == 8 {
		return 8
	}
	return 4
}

// Partial is the running state of an attention computation over a key set
// that arrives in blocks (online softmax): for each of M query rows the
// largest logit seen Max[i], the sum of exp(logit - Max[i]) Sum[i] and the
// correspondingly weighted sum of values Acc[i,:] (D columns).
//
// Logits must be finite or -Inf (a key with logit -Inf gets weight 0). The
// exponentials are Exp32, so a logit far below the row maximum (by more than
// about 104) contributes exactly 0, and large logits never overflow.
type Partial struct {
	M, D          int
	Max, Sum, Acc []float32
}

// NewPartial returns an empty partial for m rows of d columns.
func NewPartial(m, d int) *Partial {
	p := &Partial{M: m, D: d, Max: make([]float32, m), Sum: make([]float32, m), Acc: make([]float32, m*d)}
	p.Reset()
	return p
}

// Reset empties p (no keys seen).
func (p *Partial) Reset() {
	for i := range p.Max {
		p.Max[i] = float32(math.Inf(-1))
	}
	clear(p.Sum)
	clear(p.Acc)
}

// CopyFrom makes p a copy of src (same shape).
func (p *Partial) CopyFrom(src *Partial) {
	copy(p.Max, src.Max)
	copy(p.Sum, src.Sum)
	copy(p.Acc, src.Acc)
}

// AddKeys adds the c keys k (c x d) with values v (c x d) and optional logit
// biases bias (nil for none) to p for the query rows q (p.M x d): logit
// scale*dot(q[i],k[j]) + bias[j]. When causal is true, row i sees only keys
// j <= i. work is scratch of c floats; the current implementation keeps its
// scratch on the stack and does not touch work (which may be nil).
//
// The keys are taken in blocks of 128 (each block one online-softmax step per
// row); each logit has the bits of scale*Dot(q[i], k[j]) + bias[j].
func (p *Partial) AddKeys(q, k, v []float32, c int, scale float32, bias []float32, causal bool, work []float32) {
	d := p.D
	var buf [partRowsMax * partKeys]float32
	pr := partRows()
	for i0 := 0; i0 < p.M; i0 += pr {
		rows := min(pr, p.M-i0)
		cmax := c
		if causal {
			cmax = min(c, i0+rows)
		}
		for j0 := 0; j0 < cmax; j0 += partKeys {
			nk := min(partKeys, cmax-j0)
			blk := buf[:rows*nk]
			Logits(blk, q[i0*d:(i0+rows)*d], rows, k[j0*d:(j0+nk)*d], nk, d, scale)
			// count is how many of the block's keys row r sees, and
			// logits its logits with their biases.
			count := func(r int) int {
				if causal {
					return min(nk, i0+r+1-j0)
				}
				return nk
			}
			logits := func(r, cnt int) []float32 {
				row := blk[r*nk : r*nk+cnt]
				if bias != nil {
					b := bias[j0 : j0+cnt]
					b = b[:len(row)]
					for j := range row {
						row[j] += b[j]
					}
				}
				return row
			}
			for r := 0; r < rows; r++ {
				cnt := count(r)
				if cnt <= 0 {
					continue
				}
				vb := v[j0*d : (j0+cnt)*d]
				if vecLanes > 0 && r+1 < rows && count(r+1) == cnt {
					// Two rows that see the same keys: side by side.
					p.addRows2(i0+r, logits(r, cnt), logits(r+1, cnt), nil, vb)
					r++
					continue
				}
				p.addRow(i0+r, logits(r, cnt), nil, vb)
			}
		}
	}
}

// AddLogits adds the keys idx (nil: all n) whose logits for row i are
// s[i*n+j], with values v (n x d), to p. s is not modified.
func (p *Partial) AddLogits(s []float32, n int, idx []int32, v []float32) {
	i := 0
	if vecLanes > 0 {
		for ; i+1 < p.M; i += 2 {
			p.addRows2(i, s[i*n:i*n+n], s[(i+1)*n:(i+2)*n], idx, v)
		}
	}
	for ; i < p.M; i++ {
		p.addRow(i, s[i*n:i*n+n], idx, v)
	}
}

// addRows2 is addRow(i, r0, idx, v) and addRow(i+1, r1, idx, v), the same
// bits, side by side: each chunk's exponentials without their sums
// (ExpShiftTo), the two rows' in-order sums of the chunk with their chains
// interleaved (rowSums2) and both rows' weighted sums in one pass over the
// rows of v (axpy2). The maxima are addRow's; a row whose maximum is -Inf,
// or without idx one whose maximum the lanes do not give, sends both rows
// to addRow.
func (p *Partial) addRows2(i int, r0, r1 []float32, idx []int32, v []float32) {
	var m0, m1 float32
	ok := true
	cnt := len(r0)
	r1 = r1[:len(r0)]
	if idx == nil {
		var ok0, ok1 bool
		m0, ok0 = rowMax(r0)
		m1, ok1 = rowMax(r1)
		ok = ok0 && ok1
	} else {
		cnt = len(idx)
		m0, m1 = float32(math.Inf(-1)), float32(math.Inf(-1))
		for _, j := range idx {
			m0 = max(m0, r0[j])
			m1 = max(m1, r1[j])
		}
	}
	if !ok || math.IsInf(float64(m0), -1) || math.IsInf(float64(m1), -1) {
		p.addRow(i, r0, idx, v)
		p.addRow(i+1, r1, idx, v)
		return
	}
	m0, m1 = p.rescale(i, m0), p.rescale(i+1, m1)
	d := p.D
	a0, a1 := p.Acc[i*d:i*d+d], p.Acc[(i+1)*d:(i+2)*d]
	s0, s1 := p.Sum[i], p.Sum[i+1]
	var b0, b1 [expChunk]float32
	for t0 := 0; t0 < cnt; t0 += expChunk {
		t1 := min(t0+expChunk, cnt)
		e0, e1 := b0[:t1-t0], b1[:t1-t0]
		var ids []int32
		vt := v
		if idx == nil {
			ExpShiftTo(e0, r0[t0:t1], m0)
			ExpShiftTo(e1, r1[t0:t1], m1)
			vt = v[t0*d:]
		} else {
			ids = idx[t0:t1]
			for t, j := range ids {
				e0[t], e1[t] = r0[j], r1[j]
			}
			ExpShiftTo(e0, e0, m0)
			ExpShiftTo(e1, e1, m1)
		}
		c0, _, c1, _ := rowSums2(e0, e1)
		s0 += c0
		s1 += c1
		axpy2(a0, a1, e0, e1, ids, vt, d)
	}
	p.Sum[i], p.Sum[i+1] = s0, s1
}

// rescale makes mx the running maximum of row i if it is larger, scaling the
// row's sum and accumulator by exp(old - mx), and returns the maximum now in
// force.
func (p *Partial) rescale(i int, mx float32) float32 {
	old := p.Max[i]
	if !(mx > old) {
		return old
	}
	r := Exp32(old - mx)
	p.Sum[i] *= r
	scaleTo(p.Acc[i*p.D:i*p.D+p.D], r)
	p.Max[i] = mx
	return mx
}

// maxOfRow is max over row in index order (-Inf when empty), from the lane
// maxima of rowMax where they give its bits.
func maxOfRow(row []float32) float32 {
	if mx, ok := rowMax(row); ok {
		return mx
	}
	mx := float32(math.Inf(-1))
	for _, x := range row {
		mx = max(mx, x)
	}
	return mx
}

// addRow merges one row's logits (all of row if idx is nil, else row[idx[j]])
// into the partial.
func (p *Partial) addRow(i int, row []float32, idx []int32, v []float32) {
	d := p.D
	var mx float32
	cnt := len(row)
	if idx == nil {
		mx = maxOfRow(row)
	} else {
		cnt = len(idx)
		mx = float32(math.Inf(-1))
		for _, j := range idx {
			mx = max(mx, row[j])
		}
	}
	if math.IsInf(float64(mx), -1) {
		return
	}
	mx = p.rescale(i, mx)
	acc := p.Acc[i*d : i*d+d]
	sum := p.Sum[i]
	var buf [expChunk]float32
	for t0 := 0; t0 < cnt; t0 += expChunk {
		t1 := min(t0+expChunk, cnt)
		e := buf[:t1-t0]
		if idx == nil {
			sum += ExpShift(e, row[t0:t1], mx)
			axpy(acc, e, nil, v[t0*d:], d)
			continue
		}
		ids := idx[t0:t1]
		for t, j := range ids {
			e[t] = row[j]
		}
		sum += ExpShift(e, e, mx)
		axpy(acc, e, ids, v, d)
	}
	p.Sum[i] = sum
}

// Merge folds the partial o (same shape) into p.
func (p *Partial) Merge(o *Partial) {
	d := p.D
	for i := 0; i < p.M; i++ {
		if o.Sum[i] == 0 {
			continue
		}
		a := p.Acc[i*d : i*d+d]
		b := o.Acc[i*d : i*d+d]
		if p.Sum[i] == 0 {
			p.Max[i], p.Sum[i] = o.Max[i], o.Sum[i]
			copy(a, b)
			continue
		}
		mx := max(p.Max[i], o.Max[i])
		ra := Exp32(p.Max[i] - mx)
		rb := Exp32(o.Max[i] - mx)
		p.Sum[i] = float32(p.Sum[i]*ra) + float32(o.Sum[i]*rb)
		b = b[:len(a)]
		for c, x := range a {
			a[c] = float32(x*ra) + float32(b[c]*rb)
		}
		p.Max[i] = mx
	}
}

// Output writes the attention outputs Acc[i,:]/Sum[i] into dst (M x D); a row
// that saw no key gets zeros.
func (p *Partial) Output(dst []float32) {
	d := p.D
	for i := 0; i < p.M; i++ {
		o := dst[i*d : i*d+d]
		if p.Sum[i] == 0 {
			clear(o)
			continue
		}
		inv := 1 / p.Sum[i]
		acc := p.Acc[i*d : i*d+d]
		acc = acc[:len(o)]
		for c, x := range acc {
			o[c] = x * inv
		}
	}
}
