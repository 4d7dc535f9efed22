package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/wasm/worker"
)

// writeSample writes the default preset at the given shape as
// dir/samples/name, in float16, and returns its size in bytes.
func writeSample(t *testing.T, dir, name string, layers, heads, kvHeads, tokens, d int) int64 {
	t.Helper()
	cfg, err := gen.DefaultConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.Tokens, cfg.Dim = layers, heads, kvHeads, tokens, d
	s, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "samples"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := sample.WriteSafetensors(f, s, sample.F16); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// openMarks records, in the app page (not its frames), when each part of
// the first answer is first on screen, in ms of performance.now() since
// the navigation started: the selected head's numbers ("head": its title
// carries its error), its heatmap drawn ("heatmap") and every grid cell
// filled ("grid"). It checks once per animation frame.
const openMarks = `(() => {
	if (window.top !== window) return;
	window.haeolsOpen = {};
	// The worker's milestones: made, its first message, a fetched sample
	// (the load's progress 0.5), the load answered, the first head request
	// sent and answered.
	window.haeolsOpenWorker = {};
	const W = window.Worker;
	window.Worker = function (...args) {
		const w = new W(...args);
		window.haeolsOpenWorker.made = performance.now();
		w.addEventListener("message", e => {
			const o = window.haeolsOpenWorker;
			if (!("first" in o)) o.first = performance.now();
			const j = e.data && e.data.json;
			if (typeof j === "string" && !("fetched" in o) && j.includes('"op":"load"') && j.includes('"progress":0.5')) o.fetched = performance.now();
			if (typeof j === "string" && !("loaded" in o) && j.includes('"op":"load"') && j.includes('"done":true')) o.loaded = performance.now();
			if (typeof j === "string" && !("headAnswered" in o) && j.includes('"op":"head"')) o.headAnswered = performance.now();
		});
		const post = w.postMessage.bind(w);
		w.postMessage = (m, ...rest) => {
			const o = window.haeolsOpenWorker;
			if (!("sent" in o)) o.sent = performance.now();
			if (!("headSent" in o) && m && typeof m.json === "string" && m.json.includes('"op":"head"')) o.headSent = performance.now();
			return post(m, ...rest);
		};
		return w;
	};
	const marks = {
		ui: () => document.getElementById("ratio") !== null,
		// textContent, not innerText: reading innerText lays the page
		// out, in every frame, which slowed the page being measured.
		sample: () => document.body !== null && document.body.textContent.includes("cached tokens"),
		head: () => { const h = document.getElementById("head-title"); return h !== null && h.textContent.includes(" err ") },
		heatmap: () => window.haeolsTimings !== undefined && window.haeolsTimings.drawn !== undefined && window.haeolsTimings.drawn.length > 0,
		grid: () => { const cells = [...document.querySelectorAll("#grid td.cell")];
			return cells.length > 0 && cells.every(c => c.textContent.trim() !== "…") && !document.querySelector(".status .loading") },
	};
	const tick = () => {
		for (const k in marks) if (!(k in window.haeolsOpen) && marks[k]()) window.haeolsOpen[k] = performance.now();
		if (Object.keys(window.haeolsOpen).length < 5) requestAnimationFrame(tick);
	};
	requestAnimationFrame(tick);
})()`

// newMarksBrowser is a fresh browser whose pages record openMarks.
func newMarksBrowser(t *testing.T) *Browser {
	t.Helper()
	b := NewBrowser(t)
	if err := chromedp.Do(b.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: openMarks})
		return err
	})); err != nil {
		t.Fatalf("add the marks script: %v", err)
	}
	return b
}

// openTimes opens the app at query in a fresh browser and returns when its
// head, heatmap and grid were first on screen (ms since navigation).
func openTimes(t *testing.T, site *Site, query, shot string) map[string]float64 {
	t.Helper()
	b := newMarksBrowser(t)
	b.Navigate(site.URL + "index.html" + query)
	if os.Getenv("HAEOLS_REVISIT") != "" {
		b.WaitFor(`window.haeolsOpen && Object.keys(window.haeolsOpen).length === 5`, 180*time.Second, "")
		t.Logf("first visit: %v %v", MustEval[map[string]float64](b, `window.haeolsOpenWorker`), MustEval[map[string]float64](b, `window.haeolsOpen`))
		b.Navigate(site.URL + "index.html" + query)
	}
	b.WaitFor(`window.haeolsOpen && Object.keys(window.haeolsOpen).length === 5`, 180*time.Second,
		`JSON.stringify(window.haeolsOpen) + " " + document.body.innerText.slice(0, 300)`)
	b.Screenshot(shot)
	first := MustEval[map[string]float64](b, `Object.fromEntries(["head", "headQueued", "headCompute", "maps", "drawn", "grid", "gridWorkers"].map(k => [k, ((window.haeolsTimings || {})[k] || [-1])[0]]))`)
	t.Logf("the worker: %v; the first head request: %v", MustEval[map[string]float64](b, `window.haeolsOpenWorker`), first)
	tm := MustEval[map[string]float64](b, `window.haeolsOpen`)
	tm["gridWorkers"] = first["gridWorkers"]
	tm["cores"] = MustEval[float64](b, `navigator.hardwareConcurrency`)
	return tm
}

// TestAppOpenTimes opens the app on the default sample and on a 4,096-token
// sample of 32 query heads (8 KV heads, d = 128; `haeols gen -preset
// default -layers 4 -heads 8 -kv-heads 2 -tokens 4096 -dim 128`) and logs
// when each shows the selected head's numbers, its heatmap and the whole
// grid (docs/PERFORMANCE.md, "Opening a sample"). It asserts that all three
// come, not how fast.
func TestAppOpenTimes(t *testing.T) {
	appSetup(t)
	dir := t.TempDir()
	writeSample(t, dir, "big4k.safetensors", 4, 8, 2, 4096, 128)
	site := StartSiteWith(t, dir)
	for _, c := range []struct{ name, query, shot string }{
		{"default sample", "", "app-open-default"},
		{"4K tokens x 32 heads", "?sample=samples/big4k.safetensors", "app-open-big4k"},
	} {
		tm := openTimes(t, site, c.query, c.shot)
		t.Logf("%s: from opening the page: the UI %.0f ms, the sample's description %.0f ms, head %.0f ms, its heatmap %.0f ms, whole grid %.0f ms (first whole answer %.0f ms) on %.0f workers",
			c.name, tm["ui"], tm["sample"], tm["head"], tm["heatmap"], tm["grid"], max(tm["head"], tm["heatmap"], tm["grid"]), tm["gridWorkers"])
		// A 50 MB sample file is shared out to helper workers, one per
		// core beyond the worker's (wasm/worker's Pool); the default
		// sample is generated in the worker and computed there alone.
		want := 1.0
		if c.query != "" {
			want = float64(1 + worker.HelpersFor(int(tm["cores"])))
		}
		if tm["gridWorkers"] != want {
			t.Errorf("%s: the grid was computed by %v workers, want %v (%v cores)", c.name, tm["gridWorkers"], want, tm["cores"])
		}
	}
	// The linked sample was fetched once (by the worker).
	if st := site.Statuses("/samples/big4k.safetensors"); os.Getenv("HAEOLS_REVISIT") == "" && (len(st) != 1 || st[0] != 200) {
		t.Errorf("samples/big4k.safetensors answered %v, want 200 once", st)
	}
}

// TestAppLinkedSampleMissing: a link to a sample file the site lacks says
// so with the server's answer and shows the default sample instead.
func TestAppLinkedSampleMissing(t *testing.T) {
	_, b := openApp(t, "?sample=samples/nosuch.safetensors")
	msg := MustEval[string](b, `document.getElementById("error").innerText`)
	if !strings.Contains(msg, "nosuch.safetensors") || !strings.Contains(msg, "HTTP 404") || !strings.Contains(msg, "instead") {
		t.Errorf("error %q does not name the file, the 404 and the fallback", msg)
	}
	if q := appQuery(t, b); q.Get("sample") != "default" {
		t.Errorf("URL %v, want sample default", q)
	}
}

// TestAppGridHelpers opens a 12 MB sample (2 layers x 8 query heads on 2
// KV heads, 2,048 tokens, d = 128) in a page that says it has 2 cores,
// where the worker shares the grid out to a helper worker, and in one
// that says 1, where it computes alone: the grid says so ("on 2
// workers") and its cells and the model's mean are the same.
func TestAppGridHelpers(t *testing.T) {
	appSetup(t)
	dir := t.TempDir()
	if size := writeSample(t, dir, "mid.safetensors", 2, 8, 2, 2048, 128); size < worker.ShareMinBytes {
		t.Fatalf("the sample is %d bytes, want at least %d", size, worker.ShareMinBytes)
	}
	site := StartSiteWith(t, dir)
	type seen struct {
		workers float64
		cells   []string
		mean    string
		timing  string
	}
	open := func(cores int, shot string) seen {
		b := NewBrowser(t)
		claimCores(t, b, cores)
		b.Navigate(site.URL + "index.html?sample=samples/mid.safetensors")
		b.WaitFor(appGridDone+` && window.haeolsTimings && window.haeolsTimings.gridWorkers !== undefined`, 180*time.Second,
			`document.body.innerText.slice(0, 400)`)
		b.Screenshot(shot)
		return seen{
			workers: MustEval[float64](b, `window.haeolsTimings.gridWorkers[0]`),
			cells:   gridLabels(b),
			mean:    MustEval[string](b, `document.body.innerText.match(/MODEL MEAN AT THIS RATIO\s+\S+\s+\S+/i)?.[0] || ""`),
			timing:  MustEval[string](b, `document.body.innerText.match(/grid \d+ ms[^\n]*/)?.[0] || ""`),
		}
	}
	shared := open(2, "app-grid-helpers")
	alone := open(1, "app-grid-alone")
	t.Logf("2 cores: %+v", shared)
	t.Logf("1 core: %+v", alone)
	if shared.workers != 2 || !strings.Contains(shared.timing, "on 2 workers") {
		t.Errorf("2 cores: the grid came from %v workers (%q), want 2", shared.workers, shared.timing)
	}
	if alone.workers != 1 || strings.Contains(alone.timing, "workers") {
		t.Errorf("1 core: the grid came from %v workers (%q), want 1", alone.workers, alone.timing)
	}
	if len(shared.cells) != 16 || strings.Join(shared.cells, " ") != strings.Join(alone.cells, " ") || shared.mean == "" || shared.mean != alone.mean {
		t.Errorf("the grids differ:\n%v %q\n%v %q", shared.cells, shared.mean, alone.cells, alone.mean)
	}
}

// TestAppPrefetchesLinkedSample: a link to a sample file of the site has
// the worker fetch it as the page starts (index.html), before the page has
// compiled app.wasm and drawn its first view (which makes the heatmap
// page), and the load uses that fetch: the file is asked for once. A link
// to a file the app will not load (a bad name) fetches nothing.
func TestAppPrefetchesLinkedSample(t *testing.T) {
	site, b := openApp(t, "?sample=samples/needle.safetensors")
	if st := site.Statuses("/samples/needle.safetensors"); len(st) != 1 || st[0] != 200 {
		t.Errorf("samples/needle.safetensors answered %v, want 200 once", st)
	}
	reqs := site.Requests()
	at := func(p string) int { return slices.Index(reqs, p) }
	if s, h := at("/samples/needle.safetensors"), at("/heatmap.html"); s < 0 || h < 0 || s > h {
		t.Errorf("requests %v: the sample (at %d) was not asked for before the heatmap page (at %d)", reqs, s, h)
	}
	if !strings.Contains(MustEval[string](b, `document.body.innerText`), "needle") {
		t.Errorf("the page does not show the needle sample")
	}
	site2, _ := openApp(t, "?sample=samples/..needle.safetensors")
	for _, p := range site2.Requests() {
		if strings.HasPrefix(p, "/samples/") {
			t.Errorf("a link the app refuses fetched %s", p)
		}
	}
}

// claimCores makes b's pages say that the machine has n cores
// (navigator.hardwareConcurrency), which the app counts its workers by.
func claimCores(t *testing.T, b *Browser, n int) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: fmt.Sprintf(`Object.defineProperty(Navigator.prototype, "hardwareConcurrency", {get: () => %d})`, n)})
		return err
	})); err != nil {
		t.Fatalf("override the cores: %v", err)
	}
}

// TestAppPreload opens the default sample in a page that says it has
// worker.PreloadMinCores cores, whose worker makes the preset from the
// page's address while the page starts (wasm/worker's Preload), and in
// one that says 2, whose worker makes it when the page asks: the head's
// numbers, the grid and the model's mean are the same, and the worker's
// answer to the load took less computing with the preset made ahead.
func TestAppPreload(t *testing.T) {
	appSetup(t)
	site := StartSite(t)
	type seen struct {
		head, mean string
		cells      []string
		loadMs     float64
	}
	open := func(cores int) seen {
		b := NewBrowser(t)
		claimCores(t, b, cores)
		// The worker's answer to the load: its compute time.
		if err := chromedp.Do(b.Ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
				if (window.top !== window) return;
				const W = window.Worker;
				window.Worker = function (...args) {
					const w = new W(...args);
					w.addEventListener("message", e => {
						const j = e.data && e.data.json;
						if (typeof j !== "string" || window.haeolsLoadMs !== undefined) return;
						const r = JSON.parse(j);
						if (r.op === "load" && r.done && !r.error) window.haeolsLoadMs = r.compute_ms || 0;
					});
					return w;
				};
			})()`})
			return err
		})); err != nil {
			t.Fatalf("add the load script: %v", err)
		}
		b.Navigate(site.URL + "index.html")
		b.WaitFor(appGridDone+` && window.haeolsLoadMs !== undefined`, 120*time.Second, `document.body.innerText.slice(0, 400)`)
		return seen{
			head:   MustEval[string](b, `document.getElementById("head-title").textContent`),
			mean:   MustEval[string](b, `document.body.innerText.match(/MODEL MEAN AT THIS RATIO\s+\S+\s+\S+/i)?.[0] || ""`),
			cells:  gridLabels(b),
			loadMs: MustEval[float64](b, `window.haeolsLoadMs`),
		}
	}
	pre := open(worker.PreloadMinCores)
	plain := open(2)
	t.Logf("%d cores (preloaded): %+v", worker.PreloadMinCores, pre)
	t.Logf("2 cores: %+v", plain)
	if pre.head == "" || pre.head != plain.head || pre.mean == "" || pre.mean != plain.mean ||
		strings.Join(pre.cells, " ") != strings.Join(plain.cells, " ") {
		t.Errorf("the preloaded sample's answers differ:\n%+v\n%+v", pre, plain)
	}
	if pre.loadMs >= plain.loadMs {
		t.Errorf("the load computed %.1f ms with the preset made ahead, %.1f ms without: not preloaded", pre.loadMs, plain.loadMs)
	}
}

// TestAppRunnerOnDemand: the first view runs on app.wasm alone (no
// runner.wasm is fetched); opening a model starts the model runner
// (runner.wasm) once, and it answers everything from then on: the says
// table, the heads of the model's run, a new ratio.
func TestAppRunnerOnDemand(t *testing.T) {
	site, b := openApp(t, "?tour=5&compute=cpu")
	waitFirstAnswers(b)
	runners := func() int { return strings.Count(strings.Join(site.Requests(), "\n")+"\n", "/runner.wasm\n") }
	if n := runners(); n != 0 {
		t.Errorf("the first view fetched runner.wasm %d times", n)
	}
	MustEval[bool](b, `(() => { document.getElementById("tour-model").click(); return true })()`)
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	b.WaitFor(`document.getElementById("head-title").innerText.includes("err ") && document.getElementById("head-title").innerText.includes("ratio 0.3 ")`, 60*time.Second,
		`document.getElementById("head-title").innerText`)
	if n := runners(); n != 1 {
		t.Errorf("opening the model fetched runner.wasm %d times, want 1", n)
	}
	setSlider(b, "tour-ratio", 0.5)
	b.WaitFor(`document.getElementById("says-table").dataset.ratio === "0.5" && `+saysAllDone+
		` && document.getElementById("head-title").innerText.includes("ratio 0.5 ") && document.getElementById("head-title").innerText.includes("err ")`, 180*time.Second, saysState)
	if n := runners(); n != 1 {
		t.Errorf("after a new ratio runner.wasm was fetched %d times, want 1", n)
	}
	if errs := MustEval[string](b, `document.querySelector(".error") ? document.querySelector(".error").innerText.trim() : ""`); errs != "" && errs != "dismiss" {
		t.Errorf("the app shows an error: %q", errs)
	}
}

// firstLoadGoal is the most the default view may fetch before its first
// heatmap, in gzip bytes (docs/PERFORMANCE.md's goal).
const firstLoadGoal = 5_000_000

// TestAppFirstLoad opens the default view and adds up the gzip copies (the
// .gz files make web writes) of every file the page and its workers fetched
// until the first heatmap was drawn: what a host serving gzip sends. It is
// at most firstLoadGoal, and runner.wasm is not among them.
func TestAppFirstLoad(t *testing.T) {
	site, b := openApp(t, "")
	waitFirstAnswers(b)
	var total int64
	seen := map[string]bool{}
	var rows []string
	for _, p := range site.Requests() {
		if seen[p] {
			continue
		}
		seen[p] = true
		name := filepath.Join(DistDir(), filepath.FromSlash(strings.TrimPrefix(p, "/")))
		fi, err := os.Stat(name + ".gz")
		if err != nil {
			if fi, err = os.Stat(name); err != nil {
				t.Errorf("the page fetched %s, which web/dist does not have", p)
				continue
			}
		}
		total += fi.Size()
		rows = append(rows, fmt.Sprintf("%s %d", p, fi.Size()))
		if p == "/runner.wasm" {
			t.Errorf("the first view fetched runner.wasm")
		}
	}
	t.Logf("first load, gzip bytes: %s; total %d (%.2f MB)", strings.Join(rows, ", "), total, float64(total)/1e6)
	if total > firstLoadGoal {
		t.Errorf("the first load is %d bytes gzip, over the %d goal", total, firstLoadGoal)
	}
}
