package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// TestTraceScrub records a Chrome trace (the DevTools Tracing domain, as
// the Performance panel does) of a cold scrub of the app (see
// scrubLatency) and logs, per thread of each Chromium process, how long
// its tasks ran (wall) and how much CPU they used, and how long the
// heatmap page waited on the GPU process to read its canvas back (in
// headless Chromium without a GPU the compositor works in software and
// reads every WebGL frame back). The trace goes to
// artifacts/trace-cold.json, to open in chrome://tracing or Perfetto.
// HAEOLS_TRACE=1 runs it; HAEOLS_TRACE=v8 samples V8 (function names of
// wasm code are the name section's: build the site without -s to see
// them, make web WASMFLAGS=-trimpath).
func TestTraceScrub(t *testing.T) {
	mode := os.Getenv("HAEOLS_TRACE")
	if mode == "" {
		t.Skip("HAEOLS_TRACE=1 records a trace of a cold scrub")
	}
	_, b := openApp(t, "")
	waitFirstAnswers(b)
	var mu sync.Mutex
	var events []json.RawMessage
	done := make(chan struct{})
	if err := chromedp.Listen(b.Ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range e.Value {
				if raw, err := json.Marshal(v); err == nil {
					events = append(events, raw)
				}
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			close(done)
		}
	}); err != nil {
		t.Fatal(err)
	}
	cats := []string{"devtools.timeline", "toplevel", "v8", "v8.wasm", "blink", "gpu", "cc", "viz",
		"disabled-by-default-devtools.timeline", "disabled-by-default-gpu.service", "gpu.angle"}
	if mode == "v8" {
		cats = append(cats, "disabled-by-default-v8.cpu_profiler")
	}
	if _, err := chromedp.Call(b.Ctx, tracing.Start, tracing.StartParams{TraceConfig: &tracing.TraceConfig{IncludedCategories: cats},
		TransferMode: tracing.StartTransferModeReportEvents}); err != nil {
		t.Fatalf("start tracing: %v", err)
	}
	scrubLatency(t, b, "cold", 30, 10)
	if _, err := chromedp.Call(b.Ctx, tracing.End, cdp.Empty{}); err != nil {
		t.Fatalf("end tracing: %v", err)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the trace did not complete")
	}
	mu.Lock()
	defer mu.Unlock()
	raw, err := json.Marshal(map[string]any{"traceEvents": events})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(ArtifactsDir(), "trace-cold.json")
	if err := os.MkdirAll(ArtifactsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d trace events in %s", len(events), p)
	for _, l := range traceSummary(events) {
		t.Log(l)
	}
}

// traceEvent is the part of a Chrome trace event the summary reads.
type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Ts   float64        `json:"ts"`   // µs
	Dur  float64        `json:"dur"`  // µs, wall
	Tdur float64        `json:"tdur"` // µs, thread CPU
	Args map[string]any `json:"args"`
}

// traceSummary lists, per thread, the wall time and CPU of its top-level
// tasks (those no other task of the thread contains), busiest first, and
// the canvas read-backs (GLES2::ReadPixels) per process.
func traceSummary(raw []json.RawMessage) []string {
	type key struct{ pid, tid int }
	proc, thread := map[int]string{}, map[key]string{}
	tasks := map[key][]traceEvent{}
	type wait struct {
		n   int
		dur float64
	}
	reads := map[int]*wait{}
	for _, r := range raw {
		var e traceEvent
		if json.Unmarshal(r, &e) != nil {
			continue
		}
		k := key{e.Pid, e.Tid}
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			proc[e.Pid], _ = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			thread[k], _ = e.Args["name"].(string)
		case e.Ph == "X":
			tasks[k] = append(tasks[k], e)
			if e.Name == "GLES2::ReadPixels" {
				if reads[e.Pid] == nil {
					reads[e.Pid] = &wait{}
				}
				reads[e.Pid].n++
				reads[e.Pid].dur += e.Dur
			}
		}
	}
	// The renderers by what they host: the app page runs the worker, the
	// heatmap page reads its canvas back.
	for k, name := range thread {
		if name == "DedicatedWorker thread" {
			proc[k.pid] = "app page"
		}
	}
	for pid := range reads {
		proc[pid] = "heatmap page"
	}
	type busy struct {
		name      string
		wall, cpu float64
	}
	var bs []busy
	for k, es := range tasks {
		sort.Slice(es, func(i, j int) bool { return es[i].Ts < es[j].Ts || es[i].Ts == es[j].Ts && es[i].Dur > es[j].Dur })
		var u busy
		end := -1.0
		for _, e := range es {
			if e.Ts >= end {
				u.wall += e.Dur
				u.cpu += e.Tdur
				end = e.Ts + e.Dur
			}
		}
		if u.wall >= 10e3 {
			u.name = fmt.Sprintf("%s (%d) %s", proc[k.pid], k.pid, thread[k])
			bs = append(bs, u)
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].wall > bs[j].wall })
	out := []string{"process (pid) thread: its tasks' wall time and CPU"}
	for _, u := range bs {
		out = append(out, fmt.Sprintf("  %-55s %7.0f ms %7.0f ms", u.name, u.wall/1e3, u.cpu/1e3))
	}
	for pid, w := range reads {
		out = append(out, fmt.Sprintf("canvas read-backs in the %s: %d, waiting %.1f ms each", proc[pid], w.n, w.dur/1e3/float64(w.n)))
	}
	return out
}
