package core

func init() { Register(full{}) }

// full is the uncompressed cache: the reference, at ratio 1 whatever is asked.
type full struct{}

func (full) Name() string     { return "full" }
func (full) Describe() string { return "the uncompressed cache (reference, ratio 1)" }

func (full) Compress(g *Group, p Params) (*Cache, error) {
	b, err := g.budget(1, p.Sinks, p.Recent)
	if err != nil {
		return nil, err
	}
	c := newCache("full", b)
	c.keepExact(span(0, g.N), Anchor)
	c.finishExact()
	return c, nil
}
