package core

func init() { Register(streaming{}) }

// streaming is StreamingLLM: the sinks plus the most recent tokens.
type streaming struct{}

func (streaming) Name() string { return "streaming" }
func (streaming) Describe() string {
	return "StreamingLLM: attention sinks plus the most recent tokens"
}

func (streaming) Compress(g *Group, p Params) (*Cache, error) {
	b, err := g.budget(p.Ratio, p.Sinks, p.Recent)
	if err != nil {
		return nil, err
	}
	// Every free slot extends the recent window.
	lo, hi := b.Candidates()
	score := make([]float64, hi-lo)
	for i := range score {
		score[i] = float64(i)
	}
	return evictionCache("streaming", b, score), nil
}
