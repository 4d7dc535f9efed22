package worker

import (
	"testing"

	"github.com/haeols/haeols/wire"
)

// BenchmarkDrag is the worker's share of a cold drag of the ratio slider
// on the default preset, as the app drives it: per move a head request
// (with its maps, sent to the heatmap page directly), then the ladder's
// steps within ScrubReach (Engine.Climb, as while scrubbing: in a steady
// drag, one new position); from 0.29 down to 0.10 after the first answer
// at 0.30, on a fresh engine (every position compressed anew). It reports
// ms per move; run it under GOOS=js GOARCH=wasm (Node) too, to see what
// the browser's worker pays (make bench and make bench-wasm run it).
func BenchmarkDrag(b *testing.B) {
	var moves int
	for b.Loop() {
		b.StopTimer()
		e, rc, _ := loaded(b, "default")
		e.Maps = &sink{}
		p := defParams
		// The page's first answer (the analysis, the two nearest steps
		// either way climbed) comes before the drag.
		e.Handle(wire.Request{ID: 1, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 1, Head: 2, Maps: true, Direct: true}, nil, rc.emit, nil)
		for e.Climb(ScrubReach) {
		}
		b.StartTimer()
		for r := 29; r >= 10; r-- {
			p.Ratio = float64(r) / 100
			e.Handle(wire.Request{ID: 100 + r, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 1, Head: 2, Maps: true, Direct: true}, nil, rc.emit, nil)
			for e.Climb(ScrubReach) {
			}
			moves++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(moves), "ms/move")
}
