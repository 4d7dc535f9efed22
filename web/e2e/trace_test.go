package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	stop := startTrace(t, b, mode == "v8")
	scrubLatency(t, b, "cold", 30, 10)
	events := stop()
	writeTrace(t, "trace-cold.json", events)
	for _, l := range traceSummary(events) {
		t.Log(l)
	}
}

// startTrace starts recording a Chrome trace in b (with V8's sampling
// profiler when v8 is set); the function it returns ends it and returns
// the events.
func startTrace(t *testing.T, b *Browser, v8 bool) func() []json.RawMessage {
	t.Helper()
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
	cats := []string{"devtools.timeline", "toplevel", "v8", "v8.wasm", "blink", "gpu", "cc", "viz", "blink.user_timing", "loading", "netlog",
		"disabled-by-default-devtools.timeline", "disabled-by-default-gpu.service", "gpu.angle"}
	if v8 {
		cats = append(cats, "disabled-by-default-v8.cpu_profiler")
	}
	if _, err := chromedp.Call(b.Ctx, tracing.Start, tracing.StartParams{TraceConfig: &tracing.TraceConfig{IncludedCategories: cats},
		TransferMode: tracing.StartTransferModeReportEvents}); err != nil {
		t.Fatalf("start tracing: %v", err)
	}
	return func() []json.RawMessage {
		t.Helper()
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
		return events
	}
}

// writeTrace writes the events as artifacts/name, a trace that
// chrome://tracing and Perfetto open.
func writeTrace(t *testing.T, name string, events []json.RawMessage) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"traceEvents": events})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(ArtifactsDir(), name)
	if err := os.MkdirAll(ArtifactsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d trace events in %s", len(events), p)
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

// threadKey names a thread of a trace.
type threadKey struct{ pid, tid int }

// parseTrace reads the events of a trace: the names of its processes and
// threads, and each thread's complete ("X") events; each event also goes
// to each, when it is not nil.
func parseTrace(raw []json.RawMessage, each func(traceEvent)) (proc map[int]string, thread map[threadKey]string, tasks map[threadKey][]traceEvent) {
	proc, thread, tasks = map[int]string{}, map[threadKey]string{}, map[threadKey][]traceEvent{}
	for _, r := range raw {
		var e traceEvent
		if json.Unmarshal(r, &e) != nil {
			continue
		}
		k := threadKey{e.Pid, e.Tid}
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			proc[e.Pid], _ = e.Args["name"].(string)
		case e.Ph == "M" && e.Name == "thread_name":
			thread[k], _ = e.Args["name"].(string)
		case e.Ph == "X":
			tasks[k] = append(tasks[k], e)
		}
		if each != nil {
			each(e)
		}
	}
	return proc, thread, tasks
}

// traceSummary lists, per thread, the wall time and CPU of its top-level
// tasks (those no other task of the thread contains), busiest first, and
// the canvas read-backs (GLES2::ReadPixels) per process.
func traceSummary(raw []json.RawMessage) []string {
	type wait struct {
		n   int
		dur float64
	}
	reads := map[int]*wait{}
	proc, thread, tasks := parseTrace(raw, func(e traceEvent) {
		if e.Ph == "X" && e.Name == "GLES2::ReadPixels" {
			if reads[e.Pid] == nil {
				reads[e.Pid] = &wait{}
			}
			reads[e.Pid].n++
			reads[e.Pid].dur += e.Dur
		}
	})
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

// TestTraceOpen records a Chrome trace of opening the app in a fresh
// browser (from before the navigation until the head, its heatmap and the
// whole grid are on screen, as TestAppOpenTimes measures) and logs, per
// thread, its CPU in each half second from the navigation's start, with the
// page's milestones: where the time to a first answer goes. The trace goes
// to artifacts/trace-open.json, with V8's samples when HAEOLS_TRACE=v8.
// HAEOLS_TRACE_OPEN=default opens the default sample,
// HAEOLS_TRACE_OPEN=big4k the 4,096-token sample of TestAppOpenTimes.
func TestTraceOpen(t *testing.T) {
	which := os.Getenv("HAEOLS_TRACE_OPEN")
	query := map[string]string{"default": "", "big4k": "?sample=samples/big4k.safetensors"}
	q, ok := query[which]
	if !ok {
		t.Skip("HAEOLS_TRACE_OPEN=default or big4k records a trace of opening the app")
	}
	appSetup(t)
	dir := t.TempDir()
	writeSample(t, dir, "big4k.safetensors", 4, 8, 2, 4096, 128)
	site := StartSiteWith(t, dir)
	b := newMarksBrowser(t)
	stop := startTrace(t, b, os.Getenv("HAEOLS_TRACE") == "v8")
	b.Navigate(site.URL + "index.html" + q)
	b.WaitFor(`window.haeolsOpen && Object.keys(window.haeolsOpen).length === 5`, 180*time.Second, "")
	marks := MustEval[map[string]float64](b, `Object.assign({}, window.haeolsOpen, Object.fromEntries(Object.entries(window.haeolsOpenWorker).map(([k, v]) => ["worker " + k, v])))`)
	events := stop()
	writeTrace(t, "trace-open.json", events)
	for _, l := range traceTimeline(events, marks, 500) {
		t.Log(l)
	}
}

// traceTimeline lists, for each thread that used at least 100 ms of CPU,
// its CPU in ms per step of stepMS from the navigation's start (the
// trace's navigationStart of the top frame), and then the marks (ms from
// the same start) in order.
func traceTimeline(raw []json.RawMessage, marks map[string]float64, stepMS float64) []string {
	start := -1.0
	proc, thread, tasks := parseTrace(raw, func(e traceEvent) {
		if e.Name != "navigationStart" {
			return
		}
		if d, _ := e.Args["data"].(map[string]any); d != nil {
			if u, _ := d["documentLoaderURL"].(string); strings.Contains(u, "index.html") && (start < 0 || e.Ts < start) {
				start = e.Ts
			}
		}
	})
	if start < 0 {
		return []string{"no navigationStart of index.html in the trace"}
	}
	end := 0.0
	for _, v := range marks {
		end = max(end, v)
	}
	n := int(end/stepMS) + 1
	type row struct {
		name  string
		total float64
		cpu   []float64
	}
	var rows []row
	for k, es := range tasks {
		sort.Slice(es, func(i, j int) bool { return es[i].Ts < es[j].Ts || es[i].Ts == es[j].Ts && es[i].Dur > es[j].Dur })
		r := row{name: fmt.Sprintf("%s %s", proc[k.pid], thread[k]), cpu: make([]float64, n)}
		last := -1.0
		for _, e := range es {
			if e.Ts < last || e.Dur <= 0 {
				continue // inside the previous top-level task
			}
			last = e.Ts + e.Dur
			// The task's CPU, spread evenly over its wall time.
			t0, t1 := (e.Ts-start)/1e3, (e.Ts+e.Dur-start)/1e3
			for i := max(0, int(t0/stepMS)); i < n && float64(i)*stepMS < t1; i++ {
				lo, hi := max(t0, float64(i)*stepMS), min(t1, float64(i+1)*stepMS)
				c := e.Tdur / 1e3 * (hi - lo) / (t1 - t0)
				r.cpu[i] += c
				r.total += c
			}
		}
		if r.total >= 100 {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].total > rows[j].total })
	out := []string{fmt.Sprintf("CPU ms per %.0f ms from the navigation's start, per thread (total first)", stepMS)}
	for _, r := range rows {
		var b strings.Builder
		for _, c := range r.cpu {
			fmt.Fprintf(&b, "%4.0f", c)
		}
		out = append(out, fmt.Sprintf("%-40.40s %6.0f |%s", r.name, r.total, b.String()))
	}
	names := make([]string, 0, len(marks))
	for k := range marks {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return marks[names[i]] < marks[names[j]] })
	for _, k := range names {
		out = append(out, fmt.Sprintf("mark %-16s %7.0f ms (step %d)", k, marks[k], int(marks[k]/stepMS)))
	}
	return out
}
