package kernel

import "math"

// Stats are the per-row and per-key statistics of m calibration query rows
// against n keys (HAE-OLS.md §1): the logits S and attention A (m x n), each
// row's maximum logit Mu and sum of exp(S - Mu) RowSum, the salience and
// normalized key entropy of every key (n), the normalized row entropy (m) and
// the full-cache attention outputs O (m x d). Calibrate computes them on the
// CPU; package core/gpu computes the same on a GPU.
type Stats struct {
	S, A                 []float32
	Mu, RowSum           []float32
	Salience, KeyEntropy []float32
	RowEntropy           []float32
	O                    []float32
}

// NewStats allocates the statistics of m rows, n keys and head dimension d.
func NewStats(m, n, d int) *Stats {
	return &Stats{
		S: make([]float32, m*n), A: make([]float32, m*n),
		Mu: make([]float32, m), RowSum: make([]float32, m),
		Salience: make([]float32, n), KeyEntropy: make([]float32, n),
		RowEntropy: make([]float32, m), O: make([]float32, m*d),
	}
}

// Calibrate fills st (from NewStats(m, n, d)) for the m query rows q
// (m x d) against the n keys k with values v (n x d): Logits, SoftmaxRows,
// KeyStats (ColMean and KeyEntropy) and RowEntropy, and the outputs
// through the same online-softmax kernel (Partial.AddLogits) that attends
// over every compressed cache, so that a cache keeping every token
// reproduces O bit for bit.
func Calibrate(st *Stats, q []float32, m int, k, v []float32, n, d int, scale float32) {
	Logits(st.S, q, m, k, n, d, scale)
	p := NewPartial(m, d)
	softmaxAttend(st.A, st.S, m, n, st.Mu, st.RowSum, p, v)
	KeyStats(st.Salience, st.KeyEntropy, st.A, m, n, make([]float32, 2*n))
	RowEntropy(st.RowEntropy, st.A, m, n)
	p.Output(st.O)
}

// softmaxAttend is SoftmaxRows(a, s, m, n, mu, sum) and then
// p.AddLogits(s, n, nil, v) on the empty partial p, the same bits, with
// each row's exponentials computed once: both take Exp32(s[i,j] - the row's
// maximum). The softmax's sum runs over the whole row and the partial's
// chunk by chunk (expChunk keys, as addRow), each in index order; rows
// are taken two at a time, so that the four chains of dependent additions
// overlap and each row of v is loaded once for both rows' weighted sums
// (axpy2). A row whose maximum the vector lanes do not give (a NaN, a zero
// maximum, an empty row, no vector kernels) or is -Inf takes the two
// kernels' own paths.
func softmaxAttend(a, s []float32, m, n int, mu, sum []float32, p *Partial, v []float32) {
	if m <= 0 {
		return
	}
	a, s, mu, sum = a[:m*n], s[:m*n], mu[:m], sum[:m]
	d := p.D
	fused := func(i int) bool {
		mx, ok := rowMax(s[i*n : i*n+n])
		if !ok || math.IsInf(float64(mx), -1) {
			SoftmaxRows(a[i*n:i*n+n], s[i*n:i*n+n], 1, n, mu[i:i+1], sum[i:i+1])
			p.addRow(i, s[i*n:i*n+n], nil, v)
			return false
		}
		ExpShiftTo(a[i*n:i*n+n], s[i*n:i*n+n], mx)
		mu[i], p.Max[i] = mx, mx
		return true
	}
	// finish takes row i's sums (the softmax's t and the partial's) and
	// normalises the row, whose weighted sum of v is in p.Acc.
	finish := func(i int, t, part float32) {
		p.Sum[i] = part
		scaleTo(a[i*n:i*n+n], 1/t)
		sum[i] = t
	}
	i := 0
	for ; i+1 < m; i += 2 {
		f0, f1 := fused(i), fused(i+1)
		switch {
		case f0 && f1:
			t0, c0, t1, c1 := rowSums2(a[i*n:i*n+n], a[(i+1)*n:(i+1)*n+n])
			axpy2(p.Acc[i*d:i*d+d], p.Acc[(i+1)*d:(i+2)*d], a[i*n:i*n+n], a[(i+1)*n:(i+1)*n+n], nil, v, d)
			finish(i, t0, c0)
			finish(i+1, t1, c1)
		case f0:
			t0, c0, _, _ := rowSums2(a[i*n:i*n+n], a[i*n:i*n+n])
			axpy(p.Acc[i*d:i*d+d], a[i*n:i*n+n], nil, v, d)
			finish(i, t0, c0)
		case f1:
			t1, c1, _, _ := rowSums2(a[(i+1)*n:(i+1)*n+n], a[(i+1)*n:(i+1)*n+n])
			axpy(p.Acc[(i+1)*d:(i+2)*d], a[(i+1)*n:(i+1)*n+n], nil, v, d)
			finish(i+1, t1, c1)
		}
	}
	if i < m && fused(i) {
		t, c, _, _ := rowSums2(a[i*n:i*n+n], a[i*n:i*n+n])
		axpy(p.Acc[i*d:i*d+d], a[i*n:i*n+n], nil, v, d)
		finish(i, t, c)
	}
}

// rowSums2 returns, for each of two rows x and y of the same length, the
// sum in index order (ExpShift's) and the sum, in order, of the sums of
// its chunks of expChunk (addRow's); the two rows' chains of additions
// run side by side. A single row is rowSums2(x, x).
func rowSums2(x, y []float32) (tx, px, ty, py float32) {
	y = y[:len(x)]
	for j0 := 0; j0 < len(x); j0 += expChunk {
		j1 := min(j0+expChunk, len(x))
		xs, ys := x[j0:j1], y[j0:j1]
		ys = ys[:len(xs)]
		var cx, cy float32
		for j, e := range xs {
			f := ys[j]
			tx += e
			cx += e
			ty += f
			cy += f
		}
		px += cx
		py += cy
	}
	return tx, px, ty, py
}
