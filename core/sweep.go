package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/haeols/haeols/core/result"
)

// HeadRef names one query head of a model.
type HeadRef = result.HeadRef

// Sweep asks for every method at every ratio on a set of query heads.
type Sweep struct {
	// Heads are the query heads to evaluate (nil: every head, layer-major).
	Heads []HeadRef
	// Ratios and Methods span the cells, ratio-major.
	Ratios  []float64
	Methods []string
	// Params gives the parameters at a ratio (nil: DefaultParams).
	Params func(ratio float64) (Params, error)
	// Workers is the number of goroutines (0: all CPUs), fewer where the
	// jobs would not fit in Options.MaxAnalysisBytes beside the analyses.
	// The result does not depend on it.
	Workers int
	// Progress, when not nil, is called after each (cell, KV head) job,
	// from the goroutine that ran it.
	Progress func(SweepJob)
	// Compress and Evaluate, when not nil, stand in for Group.Compress
	// and Group.Evaluate, for a caller that keeps caches and their
	// metrics across sweeps (the browser's worker); they must give the
	// same results.
	Compress func(g *Group, method string, p Params) (*Cache, error)
	Evaluate func(g *Group, method string, p Params, c *Cache, hi int) Metrics
}

// SweepJob is one (cell, KV head) job of a sweep, done: the query heads of
// one KV head evaluated for one method at one ratio.
type SweepJob struct {
	// Cell is the index of the job's cell in the result, Layer and KV its
	// KV head.
	Cell, Layer, KV int
	// Heads are the indices into Sweep.Heads of the KV head's query heads
	// that the sweep asks for, and Metrics theirs (nil when Err is set).
	Heads   []int
	Metrics []Metrics
	// Err is why the job has no metrics: it wraps ErrDoesNotFit or
	// ErrNeedsKV for an n/a cell; any other error stops the sweep.
	Err error
	// Done is the number of jobs done so far, this one included, of Total.
	Done, Total int
}

// Cell is one method at one ratio on the heads of a Sweep.
type Cell struct {
	Ratio  float64
	Method string
	Params Params
	// Alloc is the share of each KV head under Params.Budget (nil:
	// uniform).
	Alloc *Allocation
	// Metrics has one entry per head of the sweep, in its order; nil when
	// the method has no result at this ratio (NA).
	Metrics []Metrics
	// NA says why the method has no result: it cannot fit the ratio
	// (ErrDoesNotFit, e.g. "needs ratio >= 0.141") or needs the q/k/v an
	// attention-only sample lacks (ErrNeedsKV, "needs q/k/v").
	NA string
	// Cause is the error behind NA (wrapping ErrDoesNotFit or ErrNeedsKV).
	Cause error
}

// NAReason is why a method has no result, in a few words, for an error
// that wraps ErrDoesNotFit or ErrNeedsKV.
func NAReason(err error) string {
	if errors.Is(err, ErrNeedsKV) {
		return "needs q/k/v"
	}
	if n, ok := errors.AsType[*NeedRatioError](err); ok {
		return fmt.Sprintf("needs ratio >= %.3f", n.Need)
	}
	return "does not fit the ratio"
}

// Sweep compresses the KV heads of the sweep's query heads with every method
// at every ratio and evaluates those heads, each KV head's cache once per
// cell, as independent (cell, KV head) jobs on Workers goroutines: the KV
// head varies fastest, so the first jobs analyse different KV heads in
// parallel. The cells are ratio-major, then in the order of Methods. A
// method that cannot fit a ratio gives a cell with NA set; any other error,
// a non-finite metric among them, stops the sweep. Cancelling ctx stops it
// after the jobs running; the error is then ctx's.
func (m *Model) Sweep(ctx context.Context, sw Sweep) ([]Cell, error) {
	s := m.Sample
	heads := sw.Heads
	if heads == nil {
		for l := 0; l < s.L; l++ {
			for h := 0; h < s.H; h++ {
				heads = append(heads, HeadRef{Layer: l, Head: h})
			}
		}
	}
	workers := sw.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = m.jobs(workers) // as many as fit in the memory limit
	params := sw.Params
	if params == nil {
		params = func(r float64) (Params, error) { return DefaultParams(r), nil }
	}
	type group struct {
		l, kv int
		heads []int // indices into heads
	}
	groupOf, n, err := m.KVGroups(heads)
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	groups := make([]group, n)
	for i, j := range groupOf {
		groups[j].l, groups[j].kv = heads[i].Layer, s.KVHeadOf(heads[i].Head)
		groups[j].heads = append(groups[j].heads, i)
	}
	cells := make([]Cell, len(sw.Ratios)*len(sw.Methods))
	for ri, r := range sw.Ratios {
		p, err := params(r)
		if err != nil {
			return nil, err
		}
		for mi, name := range sw.Methods {
			cells[ri*len(sw.Methods)+mi] = Cell{Ratio: r, Method: name, Params: p, Metrics: make([]Metrics, len(heads))}
		}
	}
	for i := range cells {
		c := &cells[i]
		if IsUniform(c.Params.Budget) {
			continue
		}
		if c.Alloc, err = m.Allocate(c.Method, c.Params); err != nil && !errors.Is(err, ErrDoesNotFit) && !errors.Is(err, ErrNeedsKV) {
			return nil, fmt.Errorf("sweep: %s at ratio %g: %w", c.Method, c.Ratio, err)
		} else if err != nil {
			c.NA, c.Cause = NAReason(err), err
		}
	}
	total := len(cells) * len(groups)
	errs := make([]error, total)
	var done, next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(workers, total); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				j := int(next.Add(1) - 1)
				if j >= total {
					return
				}
				gr := groups[j%len(groups)]
				c := &cells[j/len(groups)]
				errs[j] = m.sweepJob(&sw, c, gr.l, gr.kv, gr.heads, heads)
				if sw.Progress != nil {
					job := SweepJob{Cell: j / len(groups), Layer: gr.l, KV: gr.kv, Heads: gr.heads, Err: errs[j], Done: int(done.Add(1)), Total: total}
					if job.Err == nil {
						job.Metrics = make([]Metrics, len(gr.heads))
						for k, i := range gr.heads {
							job.Metrics[k] = c.Metrics[i]
						}
					}
					sw.Progress(job)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for j, err := range errs {
		if err == nil {
			continue
		}
		c := &cells[j/len(groups)]
		if errors.Is(err, ErrDoesNotFit) || errors.Is(err, ErrNeedsKV) {
			if c.NA == "" {
				c.NA, c.Cause = NAReason(err), err
			}
			continue
		}
		return nil, err
	}
	for i := range cells {
		if cells[i].NA != "" {
			cells[i].Metrics = nil
		}
	}
	return cells, nil
}

// KVGroups groups query heads by the KV head they share: groupOf[i] is
// the number of heads[i]'s (layer, KV head) among the n groups, numbered
// in the order of their first query head. It checks that every head is
// in the model.
func (m *Model) KVGroups(heads []HeadRef) (groupOf []int, n int, err error) {
	s := m.Sample
	index := map[[2]int]int{}
	groupOf = make([]int, len(heads))
	for i, hd := range heads {
		if hd.Layer < 0 || hd.Layer >= s.L || hd.Head < 0 || hd.Head >= s.H {
			return nil, 0, fmt.Errorf("layer %d head %d out of range (%d layers, %d heads)", hd.Layer, hd.Head, s.L, s.H)
		}
		k := [2]int{hd.Layer, s.KVHeadOf(hd.Head)}
		g, ok := index[k]
		if !ok {
			g = len(index)
			index[k] = g
		}
		groupOf[i] = g
	}
	return groupOf, len(index), nil
}

// sweepJob compresses KV head kv of layer l for cell c and evaluates the
// heads idx (indices into heads) of it.
func (m *Model) sweepJob(sw *Sweep, c *Cell, l, kv int, idx []int, heads []HeadRef) error {
	g, err := m.Group(l, kv)
	if err != nil {
		return err
	}
	if c.Cause != nil {
		return c.Cause
	}
	p := c.Params
	if c.Alloc != nil {
		p = c.Alloc.ParamsOf(p, l, kv)
	}
	var cache *Cache
	if sw.Compress != nil {
		cache, err = sw.Compress(g, c.Method, p)
	} else {
		cache, err = g.Compress(c.Method, p)
	}
	if err != nil {
		return err
	}
	for _, i := range idx {
		if hi := g.HeadIndex(heads[i].Head); sw.Evaluate != nil {
			c.Metrics[i] = sw.Evaluate(g, c.Method, p, cache, hi)
		} else {
			c.Metrics[i] = g.Evaluate(cache, hi)
		}
		if err := c.Metrics[i].CheckFinite(); err != nil {
			return fmt.Errorf("%s at ratio %g: %w", c.Method, c.Ratio, err)
		}
	}
	return nil
}
