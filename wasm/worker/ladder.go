package worker

import (
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

// The ladder (see wire): for the view in focus, the ratio slider's steps
// nearest first, each compressed once and its maps relayed to the heatmap
// page once.

// sameFocus reports whether a and b are the same view but for the ratio.
func sameFocus(a, b *wire.Request) bool {
	return a.Layer == b.Layer && a.Head == b.Head && a.Method == b.Method &&
		a.Params.Lambda == b.Params.Lambda && a.Params.Phi == b.Params.Phi && a.Params.Tau == b.Params.Tau &&
		a.Panel == b.Panel && a.Maps == b.Maps && a.Direct == b.Direct
}

// setFocus records the head just asked for (of KV head kv): the ladder
// climbs from its step, on the side of the last move first.
func (e *Engine) setFocus(req wire.Request, kv int) {
	step := wire.RatioStep(req.Params.Ratio)
	dir := 0
	if f := e.focus; f != nil && sameFocus(f, &req) {
		switch {
		case step > e.focusStep:
			dir = 1
		case step < e.focusStep:
			dir = -1
		default:
			dir = e.focusDir
		}
	}
	r := req
	e.focus, e.focusKV, e.focusStep, e.focusDir = &r, kv, step, dir
}

// ladderSteps are the ratio slider's steps from step outward, nearest
// first (step itself first), the side of dir first at each distance.
func ladderSteps(step, dir int) []int {
	lo, hi := wire.RatioStep(wire.RatioSlider.Min), wire.RatioStep(wire.RatioSlider.Max)
	first := 1
	if dir < 0 {
		first = -1
	}
	var out []int
	if step >= lo && step <= hi {
		out = append(out, step)
	}
	for d := 1; step-d >= lo || step+d <= hi; d++ {
		for _, k := range []int{step + first*d, step - first*d} {
			if k >= lo && k <= hi {
				out = append(out, k)
			}
		}
	}
	return out
}

// Climb does one unit of the focus's ladder: the nearest slider step not
// compressed yet, or whose maps the heatmap page does not hold yet (it
// compresses it and relays its maps), among those at most reach steps
// from the focus (reach 0: all); it reports whether it did any work
// (false: those steps are done). The worker runs it whenever no request
// may run, one step at a time with the queue looked at in between.
func (e *Engine) Climb(reach int) bool {
	if e.focus == nil || e.model == nil {
		return false
	}
	for _, step := range ladderSteps(e.focusStep, e.focusDir) {
		if reach > 0 && (step > e.focusStep+reach || step < e.focusStep-reach) {
			break // nearest first: the rest are further
		}
		req := *e.focus
		req.Params.Ratio = wire.StepRatio(step)
		p := coreParams(req.Params)
		if p.Validate() != nil {
			continue
		}
		k := cacheKey{req.Layer, e.focusKV, req.Method, p}
		if _, kept := e.caches[k]; !kept {
			e.compress(k.layer, k.kv, k.method, k.params)
			e.sendLadder(req, k)
			return true
		}
		if e.sendLadder(req, k) {
			return true
		}
	}
	return false
}

// sendLadder relays the maps of req, a step of the focus's ladder with the
// kept cache k, to the heatmap page (Maps.Ladder), unless the focus does
// not ask for relayed maps, the page holds them already or cannot take
// them; it reports whether it sent them.
func (e *Engine) sendLadder(req wire.Request, k cacheKey) bool {
	if !req.Maps || !req.Direct || e.Maps == nil || !e.Maps.Ready() {
		return false
	}
	view := wire.ViewKey(e.gen, req.Layer, req.Head, req.Method, req.Params, req.Panel)
	// The page needs the head's original map to draw them: it came with
	// the focused request's maps, unless the page restarted since.
	key := e.mapsKey(req.Layer, req.Head)
	if e.Maps.HoldsView(view) || e.Maps.LadderFull(view) || !e.Maps.Holds(key) {
		return false
	}
	ce, ok := e.caches[k]
	if !ok || ce.err != nil {
		return false
	}
	g, hi, err := e.model.Head(req.Layer, req.Head)
	if err != nil || g.AttnOnly {
		// An attention-only sample's compressed map has no factored form:
		// each would be as large as the map (0.8 MB on the default size).
		return false
	}
	m, bufs, _ := e.mapsMessage(req, g, ce.c, hi, result.Num(e.evaluate(k, g, ce.c, hi).Err))
	m.Ladder = true
	return e.Maps.Send(m, key, bufs)
}

// bufsSize is the size of a message's buffers, as a wire.Ladder counts it
// (the heatmap page adds up their byteLength).
func bufsSize(bufs map[string][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}
