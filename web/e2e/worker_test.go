package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

// rawAnswer is one worker answer as the test page recorded it.
type rawAnswer struct {
	ID    int     `json:"id"`
	Op    string  `json:"op"`
	At    float64 `json:"at"`
	Done  bool    `json:"done"`
	Error string  `json:"error"`
	JSON  string  `json:"json"`
}

// workerResults are the page's measurements (see testdata/worker-test.html).
type workerResults struct {
	LoadMs             float64        `json:"loadMs"`
	Info               wire.Info      `json:"info"`
	GridFirstMs        float64        `json:"gridFirstMs"`
	GridFirstPartMs    float64        `json:"gridFirstPartMs"`
	GridParts          int            `json:"gridParts"`
	GridMs             []float64      `json:"gridMs"`
	HeadMs             []float64      `json:"headMs"`
	HeadColdMs         float64        `json:"headColdMs"`
	HeadComputeMs      []float64      `json:"headComputeMs"`
	HeadFarMs          float64        `json:"headFarMs"`
	GridScrubMs        float64        `json:"gridScrubMs"`
	MapBytes           map[string]int `json:"mapBytes"`
	OrigRow0Sum        float64        `json:"origRow0Sum"`
	HeadDuringGridMs   float64        `json:"headDuringGridMs"`
	GridAfterHeadMs    float64        `json:"gridAfterHeadMs"`
	HeadBeforeGridDone bool           `json:"headBeforeGridDone"`
	Compare            []struct {
		ID     int         `json:"id"`
		Method string      `json:"method"`
		Params wire.Params `json:"params"`
	} `json:"compare"`
	CompareHeadID  int    `json:"compareHeadID"`
	SupersededDone bool   `json:"supersededDone"`
	BrokenError    string `json:"brokenError"`
	AfterBroken    string `json:"afterBroken"`
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
}

// TestWorkerProtocol drives worker.js from a plain page: load the default
// preset, grids and heads, a head during a grid, superseding, a broken
// file; the grid's numbers must be bit-identical to core's.
func TestWorkerProtocol(t *testing.T) {
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(fmt.Sprintf("%sworker-test.html?lambda=%v&phi=%v&tau=%v", site.URL, core.DefaultLambda, core.DefaultPhi, core.DefaultTau))
	b.WaitFor("window.haeolsTest.done || window.haeolsTest.failure", 120*time.Second, "window.haeolsTest.failure")
	if f := MustEval[string](b, "window.haeolsTest.failure"); f != "" {
		t.Fatalf("page: %s", f)
	}
	b.Screenshot("worker-test")
	res := MustEval[workerResults](b, "window.haeolsTest.results")
	raw := MustEval[[]rawAnswer](b, "window.haeolsTest.raw")

	// The worker's numbers equal core's, bit for bit.
	cfg, err := gen.DefaultConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.NewModel(s, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Layers != s.L || res.Info.Heads != s.H || res.Info.Tokens != s.N || len(res.Info.Methods) == 0 {
		t.Errorf("info %+v, sample L=%d H=%d N=%d", res.Info, s.L, s.H, s.N)
	}
	if len(res.Compare) == 0 {
		t.Fatal("the page compared no grids")
	}
	for _, cmp := range res.Compare {
		p := core.DefaultParams(cmp.Params.Ratio)
		p.Lambda, p.Phi, p.Tau = cmp.Params.Lambda, cmp.Params.Phi, cmp.Params.Tau
		checkGrid(t, m, raw, cmp.ID, cmp.Method, p)
	}
	p := core.DefaultParams(0.2)
	for _, a := range raw {
		if a.ID != res.CompareHeadID {
			continue
		}
		var r wire.Response
		json.Unmarshal([]byte(a.JSON), &r)
		want, c, err := m.Run("hae-ols", p, 2, 3)
		if err != nil || r.Head == nil {
			t.Fatalf("head: %s / core %v", a.JSON, err)
		}
		if r.Head.Metrics.Err != want.Err || r.Head.Stages.Summaries != c.Stages.Summaries || r.Head.Stages.RankK != c.Stages.RankK || len(r.Head.Metrics.Profile) != len(want.Profile) {
			t.Errorf("head L2 H3: worker %+v, core err %v stages %+v", r.Head, want.Err, c.Stages)
		}
	}

	// Maps came as buffers of the advertised size, rows summing to 1: the
	// original map, and the compressed one factored (see attnmap), per
	// row, per row and synthetic token and per column.
	g, _, _ := m.Head(1, 2)
	rows, cols := g.W+g.T, g.N
	if _, c, err := m.Run("hae-ols", core.DefaultParams(0.3), 1, 2); err != nil {
		t.Fatal(err)
	} else if res.MapBytes["orig"] != 4*rows*cols || res.MapBytes["scale"] != 4*rows || res.MapBytes["inv"] != 4*rows || res.MapBytes["syn"] != 4*rows*c.C ||
		res.MapBytes["share"] != 4*cols || res.MapBytes["source"] != 4*cols || res.MapBytes["classes"] != cols || res.MapBytes["segments"] != 4*cols || res.MapBytes["comp"] != 0 {
		t.Errorf("map buffers %v, want orig %d, scale and inv %d, syn %d, share, source and segments %d, classes %d bytes", res.MapBytes, 4*rows*cols, 4*rows, 4*rows*c.C, 4*cols, cols)
	}
	if math.Abs(res.OrigRow0Sum-1) > 1e-3 {
		t.Errorf("first attention row sums to %v", res.OrigRow0Sum)
	}

	// Scheduling.
	if res.GridParts != s.L*s.HKV {
		t.Errorf("grid came in %d parts, want one per KV head (%d)", res.GridParts, s.L*s.HKV)
	}
	if !res.HeadBeforeGridDone {
		t.Errorf("a head asked during a grid was answered only after the grid")
	}
	if res.SupersededDone {
		t.Errorf("a superseded grid still finished")
	}
	if !strings.Contains(res.BrokenError, "broken.safetensors") {
		t.Errorf("broken file: error %q, want one naming the file", res.BrokenError)
	}
	if res.AfterBroken != "ok" {
		t.Errorf("after the broken file: %s", res.AfterBroken)
	}

	// Only the site's own files were requested.
	for _, r := range site.Requests() {
		switch {
		case r == "/worker-test.html", r == "/worker.js", r == "/wasm_exec.js", r == "/app.wasm", r == "/favicon.ico":
		default:
			t.Errorf("unexpected request %s", r)
		}
	}
	for _, l := range b.Console() {
		if strings.Contains(l, "ERR_NAME_NOT_RESOLVED") {
			t.Errorf("request beyond the site: %s", l)
		}
	}

	t.Logf("load (generate default preset in the worker): %.1f ms", res.LoadMs)
	t.Logf("grid cold (analysis + hae-ols, %d parts): %.1f ms, first part after %.1f ms", res.GridParts, res.GridFirstMs, res.GridFirstPartMs)
	t.Logf("grid warm (hae-ols, new ratio): median %.1f ms, max %.1f ms (%v)", median(res.GridMs), slices.Max(res.GridMs), res.GridMs)
	t.Logf("head with maps (hae-ols), first at 0.30: %.1f ms; scrubbing 0.31..0.40 by 0.01 every 60 ms: median %.1f ms, max %.1f ms (%v)", res.HeadColdMs, median(res.HeadMs), slices.Max(res.HeadMs), res.HeadMs)
	t.Logf("  of which in the worker (compute_ms): %v", res.HeadComputeMs)
	t.Logf("grid at the scrubbed-to ratio 0.40: %.1f ms; head after a jump to 0.77 (far from the ladder's focus): %.1f ms", res.GridScrubMs, res.HeadFarMs)
	t.Logf("head during a grid: %.1f ms (grid done %.1f ms after its request)", res.HeadDuringGridMs, res.GridAfterHeadMs)
	t.Logf("app.wasm (the worker's core): browser Accept-Encoding %q, served with Content-Encoding %q", site.AcceptEncoding("/app.wasm"), site.ContentEncoding("/app.wasm"))
	if site.ContentEncoding("/app.wasm") == "" {
		t.Errorf("app.wasm was served uncompressed (Accept-Encoding %q)", site.AcceptEncoding("/app.wasm"))
	}
	// The targets of issue 3 hold on an idle machine; on a loaded one the
	// numbers are only reported unless HAEOLS_E2E_STRICT_TIMING=1. A grossly
	// slow answer (a head waiting for a whole grid) fails always.
	headLimit, gridLimit := 2000.0, 10000.0
	if os.Getenv("HAEOLS_E2E_STRICT_TIMING") == "1" {
		headLimit, gridLimit = 50, 1000
	}
	if median(res.HeadMs) > headLimit {
		t.Errorf("head latency while scrubbing: median %.1f ms, want < %v ms", median(res.HeadMs), headLimit)
	}
	if res.GridScrubMs > gridLimit {
		t.Errorf("grid after scrubbing: %.1f ms, want < %v ms", res.GridScrubMs, gridLimit)
	}
}

// checkGrid compares the grid answers of request id with core's numbers
// for every head, bit for bit (or an NA where core says it does not fit).
func checkGrid(t *testing.T, m *core.Model, raw []rawAnswer, id int, method string, p core.Params) {
	t.Helper()
	s := m.Sample
	var cells []core.Metrics
	var mean result.Num
	na := ""
	for _, a := range raw {
		if a.ID != id {
			continue
		}
		var r wire.Response
		if err := json.Unmarshal([]byte(a.JSON), &r); err != nil {
			t.Fatalf("answer %s: %v", a.JSON, err)
		}
		if r.Error != "" || r.Grid == nil {
			t.Fatalf("%s grid answer %s", method, a.JSON)
		}
		cells = append(cells, r.Grid.Cells...)
		if r.Done {
			mean, na = r.Grid.MeanErr, r.Grid.NA
		}
	}
	native, err := m.Grid(method, p, 1)
	if na != "" || errors.Is(err, core.ErrDoesNotFit) {
		if na == "" || !errors.Is(err, core.ErrDoesNotFit) {
			t.Errorf("%s at %v: worker NA %q, core %v", method, p.Ratio, na, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("core %s at %v: %v", method, p.Ratio, err)
	}
	if len(cells) != s.L*s.H {
		t.Fatalf("%s grid: %d cells, want %d", method, len(cells), s.L*s.H)
	}
	for _, c := range cells {
		want := native[c.Layer*s.H+c.Head]
		if c.Err != want.Err || c.ErrMax != want.ErrMax || c.Cos != want.Cos || c.Ratio != want.Ratio {
			t.Errorf("%s at %v, L%d H%d: worker err %v max %v cos %v ratio %v; core %v %v %v %v", method, p.Ratio, c.Layer, c.Head, c.Err, c.ErrMax, c.Cos, c.Ratio, want.Err, want.ErrMax, want.Cos, want.Ratio)
		}
	}
	if float64(mean) != core.MeanErr(native) {
		t.Errorf("%s at %v: mean err %v, core %v", method, p.Ratio, mean, core.MeanErr(native))
	}
}
