package core

func init() { Register(topk{}) }

// topk is H2O-style eviction: sinks, recent window and the candidates with
// the most attention mass (salience) from the calibration queries.
type topk struct{}

func (topk) Name() string { return "topk" }
func (topk) Describe() string {
	return "H2O-style Top-K: sinks, recent window and the candidates with the most attention mass"
}

func (topk) Compress(g *Group, p Params) (*Cache, error) {
	b, err := g.budget(p.Ratio, p.Sinks, p.Recent)
	if err != nil {
		return nil, err
	}
	lo, hi := b.Candidates()
	return evictionCache("topk", b, toFloat64(g.Salience[lo:hi])), nil
}

func toFloat64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
