package kernel

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
// ColMean, KeyEntropy and RowEntropy, and the outputs through the same
// online-softmax kernel (Partial.AddLogits) that attends over every
// compressed cache, so that a cache keeping every token reproduces O bit
// for bit.
func Calibrate(st *Stats, q []float32, m int, k, v []float32, n, d int, scale float32) {
	Logits(st.S, q, m, k, n, d, scale)
	SoftmaxRows(st.A, st.S, m, n, st.Mu, st.RowSum)
	ColMean(st.Salience, st.A, m, n)
	KeyEntropy(st.KeyEntropy, st.A, m, n, make([]float32, 2*n))
	RowEntropy(st.RowEntropy, st.A, m, n)
	p := NewPartial(m, d)
	p.AddLogits(st.S, n, nil, v)
	p.Output(st.O)
}
