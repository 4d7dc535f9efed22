package core

func init() { Register(snapkv{}) }

// snapkv is SnapKV-style eviction: Top-K on salience max-pooled over a window
// of 7 positions, which keeps the neighbours of important tokens.
type snapkv struct{}

// SnapPool is the max-pooling window of snapkv (positions, centred).
const SnapPool = 7

func (snapkv) Name() string { return "snapkv" }
func (snapkv) Describe() string {
	return "SnapKV-style Top-K on attention mass max-pooled over 7 positions"
}

// Anchors implements Selector.
func (snapkv) Anchors() string { return "with the most attention mass (pooled over neighbours)" }

func (snapkv) Compress(g *Group, p Params) (*Cache, error) {
	b, err := g.budget(p.Ratio, p.Sinks, p.Recent)
	if err != nil {
		return nil, err
	}
	pooled := g.Memo("snapkv", func() any { return maxPool(g.Salience, SnapPool) }).([]float32)
	lo, hi := b.Candidates()
	return evictionCache("snapkv", b, toFloat64(pooled[lo:hi])), nil
}

// maxPool returns y[j] = max of x over the window of width w centred on j
// (clipped at the ends).
func maxPool(x []float32, w int) []float32 {
	y := make([]float32, len(x))
	h := w / 2
	for j := range x {
		m := x[j]
		for k := max(0, j-h); k <= min(len(x)-1, j+h); k++ {
			m = max(m, x[k])
		}
		y[j] = m
	}
	return y
}
