package core

import (
	"context"
	"fmt"
	"sync"

	"github.com/haeols/haeols/core/sample"
)

// Model analyses every KV head of a sample on first use and keeps the
// analyses, so that asking for another method, ratio or parameter only pays
// for compression and evaluation. It is safe for concurrent use.
type Model struct {
	Sample *sample.Sample
	Opt    Options
	slots  []groupSlot

	allocMu sync.Mutex
	allocs  map[allocKey]allocEntry // Allocate's results, by method and parameters
}

type groupSlot struct {
	once sync.Once
	g    *Group
	err  error
}

// NewModel validates s, refuses a sample whose analysis would be absurd
// (no probe queries; more than MaxHeads query heads or one KV head's
// analyses over Options.MaxAnalysisBytes: errors wrap ErrTooLarge; values whose
// logits or outputs must overflow float32: ErrNonFinite) and prepares its
// lazy per-KV-head analyses. An
// attention-only sample has one group per query head (s.KVHeads() = s.H);
// see Analyze.
func NewModel(s *sample.Sample, opt Options) (*Model, error) {
	mx, err := s.ValidateMaxima()
	if err != nil {
		return nil, err
	}
	if err := checkLimits(s, mx, opt); err != nil {
		return nil, err
	}
	return &Model{Sample: s, Opt: opt, slots: make([]groupSlot, s.L*s.KVHeads())}, nil
}

// Group returns the analysis of KV head kv in layer l, computing it once.
func (m *Model) Group(l, kv int) (*Group, error) {
	s := m.Sample
	hkv := s.KVHeads()
	if l < 0 || l >= s.L || kv < 0 || kv >= hkv {
		return nil, fmt.Errorf("model: layer %d / KV head %d out of range (%d layers, %d KV heads)", l, kv, s.L, hkv)
	}
	sl := &m.slots[l*hkv+kv]
	sl.once.Do(func() { sl.g, sl.err = Analyze(s, l, kv, m.Opt) })
	return sl.g, sl.err
}

// Head returns the group of query head h in layer l and h's index in it.
func (m *Model) Head(l, h int) (*Group, int, error) {
	s := m.Sample
	if h < 0 || h >= s.H {
		return nil, 0, fmt.Errorf("model: head %d out of range (%d heads)", h, s.H)
	}
	g, err := m.Group(l, s.KVHeadOf(h))
	if err != nil {
		return nil, 0, err
	}
	return g, g.HeadIndex(h), nil
}

// Run compresses the cache of query head h's KV head in layer l with the
// method at p (at its share of the model's budget under p.Budget) and
// evaluates it on h.
func (m *Model) Run(method string, p Params, l, h int) (Metrics, *Cache, error) {
	g, hi, err := m.Head(l, h)
	if err != nil {
		return Metrics{}, nil, err
	}
	if !IsUniform(p.Budget) {
		a, err := m.Allocate(method, p)
		if err != nil {
			return Metrics{}, nil, err
		}
		p = a.ParamsOf(p, g.Layer, g.KV)
	}
	c, err := g.Compress(method, p)
	if err != nil {
		return Metrics{}, nil, err
	}
	return g.Evaluate(c, hi), c, nil
}

// Grid returns the metrics of every query head (index l*H + h) for the
// method at p: a Sweep of one cell over every head, on up to workers
// goroutines (0: all CPUs). The result does not depend on workers; a
// method that cannot fit p.Ratio is an error wrapping ErrDoesNotFit.
func (m *Model) Grid(method string, p Params, workers int) ([]Metrics, error) {
	cells, err := m.Sweep(context.Background(), Sweep{Ratios: []float64{p.Ratio}, Methods: []string{method}, Workers: workers,
		Params: func(float64) (Params, error) { return p, nil }})
	if err != nil {
		return nil, err
	}
	if c := cells[0]; c.NA != "" {
		return nil, c.Cause
	}
	return cells[0].Metrics, nil
}

// MeanErr is the model-level number of HAE-OLS.md §5: the mean of err over
// heads.
func MeanErr(ms []Metrics) float64 {
	var s float64
	for _, m := range ms {
		s += m.Err
	}
	return s / float64(len(ms))
}
