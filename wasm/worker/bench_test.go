package worker

import (
	"testing"
	"time"

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

// BenchmarkFirstAnswer is the worker's share of the app's first answer on
// the default preset: the load (the preset generated and checked), the
// selected head with its maps, then the grid, on a fresh engine, each
// phase reported in ms. A process's first run is what the browser's worker
// pays at the page's opening, before V8 has optimised the code: run it
// alone and once under Node (GOOS=js GOARCH=wasm, -test.bench
// FirstAnswer -test.benchtime 1x), with node --liftoff-only to see the
// baseline code alone.
func BenchmarkFirstAnswer(b *testing.B) {
	var load, head, grid float64
	for b.Loop() {
		t0 := time.Now()
		e := &Engine{Maps: &sink{}}
		rc := &recorder{t: b}
		e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset"}}, nil, rc.emit, nil)
		t1 := time.Now()
		e.Handle(wire.Request{ID: 2, Op: wire.OpHead, Method: "hae-ols", Params: defParams, Maps: true, Direct: true}, nil, rc.emit, nil)
		t2 := time.Now()
		e.Handle(wire.Request{ID: 3, Op: wire.OpGrid, Method: "hae-ols", Params: defParams}, nil, rc.emit, nil)
		t3 := time.Now()
		if r := rc.last(); r.Error != "" || !r.Done {
			b.Fatalf("grid: %+v", r)
		}
		load += float64(t1.Sub(t0).Microseconds()) / 1000
		head += float64(t2.Sub(t1).Microseconds()) / 1000
		grid += float64(t3.Sub(t2).Microseconds()) / 1000
	}
	n := float64(b.N)
	b.ReportMetric(load/n, "load-ms")
	b.ReportMetric(head/n, "head-ms")
	b.ReportMetric(grid/n, "grid-ms")
}
