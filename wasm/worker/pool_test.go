package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/wire"
)

// inProc is a helper worker in this process: a Worker on its own Engine,
// fed by Post and answering through deliver (round-tripped through JSON,
// as between browser workers). With failGrids it answers every grid with
// an error instead.
type inProc struct {
	w         *Worker
	mu        sync.Mutex
	posts     []wire.Request
	closed    bool
	failGrids bool
	holdGrids bool // take grids without ever answering them
	deliver   func(wire.Response)
}

func (h *inProc) Post(req wire.Request, bufs map[string][]byte) {
	h.mu.Lock()
	h.posts = append(h.posts, req)
	fail := h.failGrids && req.Op == wire.OpGrid
	hold := h.holdGrids && req.Op == wire.OpGrid
	h.mu.Unlock()
	if hold {
		return
	}
	if fail {
		h.deliver(wire.Response{ID: req.ID, Op: req.Op, Error: "grid: a helper that fails", Done: true})
		return
	}
	cp := map[string][]byte{}
	for k, b := range bufs {
		cp[k] = bytes.Clone(b)
	}
	h.w.Q.Push(req, cp)
}

// Started: an in-process helper runs at once.
func (h *inProc) Started() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

func (h *inProc) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
}

// ops returns the ops posted to h.
func (h *inProc) ops() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ops []string
	for _, r := range h.posts {
		ops = append(ops, r.Op)
	}
	return ops
}

// inProcPool returns a pool of in-process helpers, and the helpers it
// started (in order); failing says which helpers fail their grids.
func inProcPool(t *testing.T, n int, failing ...int) (*Pool, *[]*inProc) {
	var started []*inProc
	p := &Pool{N: n, MinBytes: 1}
	p.Start = func(i int, deliver func(wire.Response)) (Conn, error) {
		h := &inProc{failGrids: slices.Contains(failing, i)}
		h.deliver = func(r wire.Response) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Errorf("helper %d: marshal: %v", i, err)
				return
			}
			var back wire.Response
			if err := json.Unmarshal(b, &back); err != nil {
				t.Errorf("helper %d: unmarshal: %v", i, err)
				return
			}
			h.mu.Lock()
			closed := h.closed
			h.mu.Unlock()
			if !closed {
				deliver(back)
			}
		}
		h.w = &Worker{E: &Engine{}, Q: NewQueue(), Emit: func(r wire.Response, _ map[string][]byte) { h.deliver(r) }}
		go h.w.Loop()
		started = append(started, h)
		return h, nil
	}
	return p, &started
}

// groupedSafetensors is a small sample of 2 layers with 2 KV heads each
// (4 KV heads, 8 query heads) as a safetensors file.
func groupedSafetensors(t *testing.T) []byte {
	t.Helper()
	cfg, err := gen.DefaultConfig("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Layers, cfg.Heads, cfg.KVHeads = 2, 4, 2
	return safetensorsOfConfig(t, cfg)
}

// gridOf runs a grid on e and returns its cells by (layer, head), the
// final answer and how many parts came.
func gridOf(t *testing.T, e *Engine, method string, p wire.Params, check Check) (map[core.HeadRef]core.Metrics, wire.Response, int) {
	t.Helper()
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 7, Op: wire.OpGrid, Method: method, Params: p}, nil, rc.emit, check)
	cells := map[core.HeadRef]core.Metrics{}
	for _, s := range rc.out {
		if s.r.ID != 7 || s.r.Error != "" || s.r.Grid == nil {
			t.Fatalf("%s %v: answer %+v", method, p.Ratio, s.r)
		}
		for _, c := range s.r.Grid.Cells {
			k := core.HeadRef{Layer: c.Layer, Head: c.Head}
			if _, dup := cells[k]; dup {
				t.Errorf("%s %v: L%d H%d answered twice", method, p.Ratio, c.Layer, c.Head)
			}
			cells[k] = c
		}
	}
	return cells, rc.last(), len(rc.out)
}

func loadFile(t *testing.T, e *Engine, data []byte) {
	t.Helper()
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "grouped.safetensors"}},
		map[string][]byte{"file": data}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || !r.Done {
		t.Fatalf("load: %+v", r)
	}
}

// sameCells reports how got differs from want, bit for bit.
func sameCells(t *testing.T, what string, got, want map[core.HeadRef]core.Metrics, gotMean, wantMean float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d cells, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if math.Float64bits(g.Err) != math.Float64bits(w.Err) || math.Float64bits(g.ErrMax) != math.Float64bits(w.ErrMax) ||
			math.Float64bits(g.Cos) != math.Float64bits(w.Cos) || g.Ratio != w.Ratio {
			t.Errorf("%s L%d H%d: err %v max %v cos %v ratio %v, alone %v %v %v %v", what, k.Layer, k.Head,
				g.Err, g.ErrMax, g.Cos, g.Ratio, w.Err, w.ErrMax, w.Cos, w.Ratio)
		}
	}
	if math.Float64bits(gotMean) != math.Float64bits(wantMean) {
		t.Errorf("%s: mean %v, alone %v", what, gotMean, wantMean)
	}
}

// TestGridWithHelpers: a grid shared out to helper workers gives the same
// bits as one worker alone, for every method and at ratios where some do
// not fit, and the helpers get their shares of the KV heads.
func TestGridWithHelpers(t *testing.T) {
	data := groupedSafetensors(t)
	alone := &Engine{}
	loadFile(t, alone, data)
	for _, n := range []int{1, 2, 3} {
		pool, started := inProcPool(t, n)
		e := &Engine{Pool: pool}
		loadFile(t, e, data)
		if len(*started) != n || len(pool.usable(e.model.Sample)) != n {
			t.Fatalf("%d helpers: started %d, usable %v", n, len(*started), pool.usable(e.model.Sample))
		}
		for _, method := range []string{"hae-ols", "topk", "quant", "lowrank"} {
			for _, ratio := range []float64{0.05, 0.3} {
				p := defParams
				p.Ratio = ratio
				want, wr, _ := gridOf(t, alone, method, p, nil)
				got, gr, parts := gridOf(t, e, method, p, nil)
				if wr.Grid.NA != "" || gr.Grid.NA != "" {
					if gr.Grid.NA != wr.Grid.NA || len(got) != 0 || parts != 1 {
						t.Errorf("%d helpers, %s %v: NA %q in %d parts, alone %q", n, method, ratio, gr.Grid.NA, parts, wr.Grid.NA)
					}
					continue
				}
				sameCells(t, "helpers", got, want, float64(gr.Grid.MeanErr), float64(wr.Grid.MeanErr))
				if !gr.Done || gr.Progress != 1 || parts != 4 || gr.Grid.Workers != min(n+1, 4) {
					t.Errorf("%d helpers, %s %v: %d parts, last %+v", n, method, ratio, parts, gr)
				}
			}
		}
		for i, h := range *started {
			// KV head g goes to worker g mod (1 + n): helper i has some
			// of the 4 when i+1 < 4.
			if ops := h.ops(); ops[0] != wire.OpLoad || !slices.Contains(ops, wire.OpGrid) {
				t.Errorf("%d helpers: helper %d was sent %v", n, i, ops)
			}
		}
	}
}

// TestGridHelperFails: a helper that fails its share leaves it to the
// worker, with the same bits, and is not asked again until the next load.
func TestGridHelperFails(t *testing.T) {
	data := groupedSafetensors(t)
	alone := &Engine{}
	loadFile(t, alone, data)
	pool, started := inProcPool(t, 2, 1)
	e := &Engine{Pool: pool}
	loadFile(t, e, data)
	for _, ratio := range []float64{0.2, 0.3} {
		p := defParams
		p.Ratio = ratio
		want, wr, _ := gridOf(t, alone, "hae-ols", p, nil)
		got, gr, _ := gridOf(t, e, "hae-ols", p, nil)
		sameCells(t, "a helper failing", got, want, float64(gr.Grid.MeanErr), float64(wr.Grid.MeanErr))
	}
	grids := 0
	for _, op := range (*started)[1].ops() {
		if op == wire.OpGrid {
			grids++
		}
	}
	if grids != 1 {
		t.Errorf("the failing helper was asked for %d grids, want 1", grids)
	}
	if u := pool.usable(e.model.Sample); !slices.Equal(u, []int{0}) {
		t.Errorf("usable helpers %v, want [0]", u)
	}
	loadFile(t, e, data)
	if u := pool.usable(e.model.Sample); !slices.Equal(u, []int{0, 1}) {
		t.Errorf("after a new load: usable helpers %v, want [0 1]", u)
	}
}

// TestGridHelpersStopped: a grid that a newer request supersedes tells its
// helpers to stop.
func TestGridHelpersStopped(t *testing.T) {
	pool, started := inProcPool(t, 1)
	e := &Engine{Pool: pool}
	loadFile(t, e, groupedSafetensors(t))
	// A helper still on its share when the grid is superseded after its
	// first KV head: that part, and no final answer.
	h := (*started)[0]
	h.mu.Lock()
	h.holdGrids = true
	h.mu.Unlock()
	_, last, parts := gridOf(t, e, "hae-ols", defParams, func() bool { return true })
	if last.Done || parts != 1 {
		t.Errorf("a superseded grid answered %d parts, the last %+v", parts, last)
	}
	if ops := h.ops(); !slices.Equal(ops, []string{wire.OpLoad, wire.OpGrid, wire.OpStop}) {
		t.Errorf("the helper was sent %v, want load, grid, stop", ops)
	}
}

// TestPoolShares: small files and presets are not shared; a preset
// after a shared file ends the helpers.
func TestPoolShares(t *testing.T) {
	data := groupedSafetensors(t)
	pool, started := inProcPool(t, 2)
	// Handed comes once per share, with the file, once it was posted to
	// every helper.
	var handed []string
	pool.Handed = func(b []byte) {
		posted := 0
		for _, h := range *started {
			if slices.Contains(h.ops(), wire.OpLoad) {
				posted++
			}
		}
		handed = append(handed, fmt.Sprintf("%t after %d posts", &b[0] == &data[0] && len(b) == len(data), posted))
	}
	pool.MinBytes = len(data) + 1
	e := &Engine{Pool: pool}
	loadFile(t, e, data)
	if len(*started) != 0 || pool.usable(e.model.Sample) != nil {
		t.Fatalf("a file under MinBytes started %d helpers", len(*started))
	}
	pool.MinBytes = len(data)
	loadFile(t, e, data)
	if len(*started) != 2 || len(pool.usable(e.model.Sample)) != 2 {
		t.Fatalf("a file of MinBytes started %d helpers", len(*started))
	}
	if want := []string{"true after 0 posts", "true after 2 posts"}; !slices.Equal(handed, want) {
		t.Errorf("Handed: %q, want %q", handed, want)
	}
	rc := loadPresetEnds(t, e, *started)
	if pool.usable(e.model.Sample) != nil {
		t.Error("helpers usable after a preset was loaded")
	}
	// A file that fails to decode leaves the helpers unused.
	pool.MinBytes = 1
	loadFile(t, e, data)
	rc.out = nil
	e.Handle(wire.Request{ID: 3, Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "broken.safetensors"}},
		map[string][]byte{"file": data[:len(data)/2]}, rc.emit, nil)
	if rc.last().Error == "" {
		t.Fatal("a broken file loaded")
	}
	if u := pool.usable(e.model.Sample); u != nil {
		t.Errorf("after a failed load: usable helpers %v, want none", u)
	}
}

// TestPoolStartFor: helpers started for a file's declared size before it
// arrives are the ones it is shared with; a file too small starts none,
// and a load that is not shared ends them.
func TestPoolStartFor(t *testing.T) {
	data := groupedSafetensors(t)
	pool, started := inProcPool(t, 2)
	pool.MinBytes = len(data)
	pool.StartFor(len(data) - 1)
	if len(*started) != 0 {
		t.Fatalf("a declared size under MinBytes started %d helpers", len(*started))
	}
	pool.StartFor(len(data))
	if len(*started) != 2 {
		t.Fatalf("a declared size of MinBytes started %d helpers, want 2", len(*started))
	}
	for i, h := range *started {
		if ops := h.ops(); len(ops) != 0 {
			t.Errorf("helper %d was sent %v before the file came", i, ops)
		}
	}
	e := &Engine{Pool: pool}
	loadFile(t, e, data)
	if len(*started) != 2 || len(pool.usable(e.model.Sample)) != 2 {
		t.Fatalf("after the load: %d helpers started, %d usable; want the 2 started before", len(*started), len(pool.usable(e.model.Sample)))
	}
	for i, h := range *started {
		if ops := h.ops(); !slices.Equal(ops, []string{wire.OpLoad}) {
			t.Errorf("helper %d was sent %v, want one load", i, ops)
		}
	}
	pool.StartFor(len(data))
	if len(*started) != 2 {
		t.Errorf("StartFor with the helpers running started %d more", len(*started)-2)
	}
	loadPresetEnds(t, e, *started)
	// Told of a file after a load that ended the helpers (the file
	// dropped): nothing starts.
	pool.StartFor(len(data))
	if len(*started) != 2 {
		t.Errorf("StartFor after a load that was not shared started %d helpers", len(*started)-2)
	}
}

// loadPresetEnds loads a preset into e, which is not shared, and checks
// that it ended every helper; it returns the load's recorder.
func loadPresetEnds(t *testing.T, e *Engine, helpers []*inProc) *recorder {
	t.Helper()
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 2, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "tiny"}}, nil, rc.emit, nil)
	for i, h := range helpers {
		h.mu.Lock()
		if !h.closed {
			t.Errorf("helper %d still runs after a preset was loaded", i)
		}
		h.mu.Unlock()
	}
	return rc
}

// lateConn is a helper that starts running after a while.
type lateConn struct {
	started chan struct{}
	posted  int
}

func (c *lateConn) Post(wire.Request, map[string][]byte) { c.posted++ }
func (c *lateConn) Started() <-chan struct{}             { return c.started }
func (c *lateConn) Close()                               {}

// TestShareWaitsForStart: a share returns once its helpers run (in a
// browser the worker's event loop must turn for them to start), and at
// most helperStartWait later when one never does.
func TestShareWaitsForStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration // -1: never
		least time.Duration
	}{
		{"at once", 0, 0},
		{"after 50 ms", 50 * time.Millisecond, 50 * time.Millisecond},
		{"never", -1, helperStartWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &lateConn{started: make(chan struct{})}
			switch {
			case tc.after == 0:
				close(c.started)
			case tc.after > 0:
				time.AfterFunc(tc.after, func() { close(c.started) })
			}
			p := &Pool{N: 1, MinBytes: 1, Start: func(int, func(wire.Response)) (Conn, error) { return c, nil }}
			t0 := time.Now()
			p.share("x.safetensors", []byte{1, 2, 3})
			if d := time.Since(t0); d < tc.least {
				t.Errorf("share returned after %v, before its helper ran (%v)", d, tc.least)
			}
			if c.posted != 1 {
				t.Errorf("the helper was posted %d requests, want its load", c.posted)
			}
		})
	}
}

// TestGridPrestart: the grid queued behind the first head request after a
// load goes out to the helpers before the worker answers the head, also
// when it arrives while the worker lets its host deliver messages just
// after it took the head, and the grid takes those shares over; a grid
// that asks for something else stops them and hands out its own.
func TestGridPrestart(t *testing.T) {
	data := groupedSafetensors(t)
	alone := &Engine{}
	loadFile(t, alone, data)
	want, wr, _ := gridOf(t, alone, "hae-ols", defParams, nil)

	for _, during := range []bool{false, true} {
		pool, started := inProcPool(t, 1)
		e := &Engine{Pool: pool}
		loadFile(t, e, data)
		h := (*started)[0]
		out := make(chan wire.Response, 64)
		var atHead []string
		w := &Worker{E: e, Q: NewQueue(), Emit: func(r wire.Response, _ map[string][]byte) {
			if r.Op == wire.OpHead && r.Done {
				atHead = h.ops()
			}
			out <- r
		}}
		grid := wire.Request{ID: 3, Op: wire.OpGrid, Method: "hae-ols", Params: defParams}
		w.Q.Push(wire.Request{ID: 2, Op: wire.OpHead, Method: "hae-ols", Params: defParams}, nil)
		if during {
			var once sync.Once
			w.Yield = func() { once.Do(func() { w.Q.Push(grid, nil) }) }
		} else {
			w.Q.Push(grid, nil)
		}
		go w.Loop()
		got := map[core.HeadRef]core.Metrics{}
		var last wire.Response
		for r := range out {
			if r.Op != wire.OpGrid {
				continue
			}
			if r.Error != "" {
				t.Fatalf("grid (sent during the yield: %v): %s", during, r.Error)
			}
			for _, c := range r.Grid.Cells {
				got[core.HeadRef{Layer: c.Layer, Head: c.Head}] = c
			}
			if last = r; r.Done {
				break
			}
		}
		if !slices.Contains(atHead, wire.OpGrid) {
			t.Errorf("grid sent during the yield %v: when the head was answered the helper had %v, want its grid share", during, atHead)
		}
		if ops := h.ops(); !slices.Equal(ops, []string{wire.OpLoad, wire.OpGrid}) {
			t.Errorf("grid sent during the yield %v: the helper was sent %v, want one load and one grid", during, ops)
		}
		sameCells(t, "prestarted", got, want, float64(last.Grid.MeanErr), float64(wr.Grid.MeanErr))
		if last.Grid.Workers != 2 {
			t.Errorf("%d workers, want 2", last.Grid.Workers)
		}
	}

	pool, started := inProcPool(t, 1)
	// Handed out for 0.3, asked at 0.2: stopped and handed out again.
	e2 := &Engine{Pool: pool}
	loadFile(t, e2, data)
	h2 := (*started)[0]
	before := len(h2.ops())
	e2.Prestart(wire.Request{Op: wire.OpGrid, Method: "hae-ols", Params: defParams})
	p := defParams
	p.Ratio = 0.2
	want2, wr2, _ := gridOf(t, alone, "hae-ols", p, nil)
	got2, gr2, _ := gridOf(t, e2, "hae-ols", p, nil)
	sameCells(t, "after a stale start", got2, want2, float64(gr2.Grid.MeanErr), float64(wr2.Grid.MeanErr))
	if ops := h2.ops()[before:]; !slices.Equal(ops, []string{wire.OpGrid, wire.OpStop, wire.OpGrid}) {
		t.Errorf("the helper was sent %v, want grid, stop, grid", ops)
	}
}

func TestHelpersFor(t *testing.T) {
	for _, tc := range []struct{ n, size, least, want int }{
		{1, 50 << 20, ShareMinBytes, 1},
		{7, 50 << 20, ShareMinBytes, MaxHelpers},
		{3, ShareMinBytes - 1, ShareMinBytes, 0},
		{3, ShareMinBytes, ShareMinBytes, 3},
		{3, ShareMaxBytes / 2, ShareMinBytes, 2},
		{3, ShareMaxBytes, ShareMinBytes, 1},
		{3, ShareMaxBytes + 1, ShareMinBytes, 0},
		{0, 50 << 20, ShareMinBytes, 0},
		{-1, 50 << 20, ShareMinBytes, 0},
		{2, 0, 0, 0},
	} {
		if got := helpersFor(tc.n, tc.size, tc.least); got != tc.want {
			t.Errorf("helpersFor(%d, %d, %d) = %d, want %d", tc.n, tc.size, tc.least, got, tc.want)
		}
	}
}

func TestHelpersForCores(t *testing.T) {
	for cores, want := range map[int]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 3, 16: MaxHelpers} {
		if got := HelpersFor(cores); got != want {
			t.Errorf("HelpersFor(%d) = %d, want %d", cores, got, want)
		}
	}
}

// TestPrefetchLimit: web/worker.js reads a prefetched file (a sample the
// page's link names) only up to the same size the worker opens.
func TestPrefetchLimit(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "web", "worker.js"))
	if err != nil {
		t.Fatal(err)
	}
	if MaxFileBytes&(MaxFileBytes-1) != 0 {
		t.Fatalf("MaxFileBytes %d is not a power of two: write it in worker.js as it is", MaxFileBytes)
	}
	want := fmt.Sprintf("const prefetchMaxBytes = 1 << %d;", bits.TrailingZeros64(uint64(MaxFileBytes)))
	if !strings.Contains(string(src), want) {
		t.Errorf("web/worker.js lacks %q (MaxFileBytes = %d)", want, int64(MaxFileBytes))
	}
}
