// Package worker is the haeols core in a Web Worker: the same app.wasm
// that renders the page runs Run when web/worker.js starts it in a worker.
// It answers the requests of wire: load a sample, the per-head error
// grid (progressively, one KV head at a time), one head in detail with its
// attention maps, and error vs ratio curves. Head requests overtake a
// running grid or curve; between KV heads the worker yields to the event
// loop so newer requests can arrive, and a newer request of the same op
// supersedes an older one. With a large sample file the worker starts
// helper workers (Pool), the same program on their own copies of the
// sample, and shares each grid's KV heads out to them. Engine, the part
// that answers, is plain Go and tested natively and under Node.
package worker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/half"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/wire"
)

// Limits on what the worker accepts, so that a wrong file gives a message
// instead of exhausting the tab's memory.
const (
	// MaxFileBytes bounds a user's sample or checkpoint file.
	MaxFileBytes = 1 << 30
	// MaxCaptureBytes bounds the q, k and v tensors of a llama capture.
	MaxCaptureBytes = 768 << 20
	// maxCaches bounds the compressed caches kept for reuse.
	maxCaches = 512
)

// Emit sends one response with its named binary buffers to the page.
type Emit func(r wire.Response, buffers map[string][]byte)

// Check is called between units of long work (one KV head of a grid, one
// point of a curve). It may answer more urgent requests meanwhile, and
// returns true when the current request has been superseded and should stop.
type Check func() bool

// Engine is the core behind the worker: the loaded sample's core.Model
// (whose per-KV-head analysis is cached across requests) and the compressed
// caches of recent requests. It is not safe for concurrent use.
type Engine struct {
	// Fetch returns the bytes of a file of the app's own static site, by
	// relative URL (Source kind "url").
	Fetch func(url string) ([]byte, error)
	// OpenGPU opens the GPU runner (in the browser: core/gpu over WebGPU)
	// and describes its adapter; with hardwareOnly it refuses a software
	// adapter before compiling anything. nil means no GPU support in this
	// build.
	OpenGPU func(hardwareOnly bool) (core.Accelerator, wire.Compute, error)

	// accel is the device the analyses run on (nil: the CPU). gpuHW and
	// gpuAny cache the outcome of OpenGPU for "auto" (hardware only) and
	// "gpu" (any adapter), each tried once.
	accel         core.Accelerator
	compute       wire.Compute
	computeID     int // the latest compute request, answered again if the GPU fails
	gpuHW, gpuAny gpuTry
	// probes are OpenGPU calls started ahead of their compute request
	// (Probe), for "auto" ([true]) and "gpu" ([false]).
	probeMu sync.Mutex
	probes  [2]*gpuProbe

	// Maps, when set, takes the maps of head requests that ask for Direct
	// delivery (in the browser: relayed by the app page).
	Maps MapsSink
	// Pool, when set, is the helper workers that grids share out to.
	Pool *Pool
	// started is a grid's helper shares handed out before it ran
	// (Prestart).
	started *gridPlan
	// early is a preset's sample made before its load request came
	// (Preload); any load takes or drops it.
	early *earlySample

	model  *core.Model
	lm     *lmState // the model of the latest llama load and its prompt's run (nil: none)
	gen    int      // counts the models: a head's maps key (mapsKey) names its model
	info   *wire.Info
	caches map[cacheKey]*cacheEntry
	order  []cacheKey
	// focus is the view of the last head asked for (layer, query head,
	// method, parameters, panel), at the slider step focusStep, reached
	// by a move in the direction focusDir (the sign of the last move of
	// the ratio; 0 before any): Climb works on its ladder.
	focus     *wire.Request
	focusKV   int
	focusStep int
	focusDir  int
}

// MapsSink sends a head's attention maps to the heatmap page directly.
type MapsSink interface {
	// Ready reports whether there is a receiver.
	Ready() bool
	// Holds reports whether the receiver holds the unchanging part of the
	// maps named key (see wire): the original map, the token texts and
	// the needles. It is false when there is no receiver.
	Holds(key string) bool
	// HoldsView reports whether the receiver's ladder holds the maps of
	// view (a wire.ViewKey); false when there is no receiver.
	HoldsView(view string) bool
	// LadderFull reports whether the receiver's ladder refused a view of
	// the focus of view (wire.Ladder.Full).
	LadderFull(view string) bool
	// Send posts a maps message with its buffers (without "orig" and with
	// empty TokenText and Needles when the receiver holds key's), which the
	// receiver puts in its ladder, and reports whether it went out: maps
	// of a ladder step (Maps.Ladder) that the ladder refuses do not.
	Send(m wire.Maps, key string, bufs map[string][]byte) bool
}

// setModel replaces the model; the maps keys of the old one no longer
// name anything.
func (e *Engine) setModel(m *core.Model) {
	e.model = m
	e.gen++
}

// mapsKey names the unchanging part of a head's maps.
func (e *Engine) mapsKey(layer, head int) string { return fmt.Sprintf("%d/%d/%d", e.gen, layer, head) }

// gpuTry is the outcome of one OpenGPU call.
type gpuTry struct {
	done bool
	acc  core.Accelerator
	info wire.Compute
	err  error
}

// gpuProbe is an OpenGPU call running in the background: its outcome is
// set before done is closed.
type gpuProbe struct {
	done chan struct{}
	out  gpuTry
}

// Probe starts opening the GPU for the compute device c ("auto" or "gpu";
// anything else does nothing) in the background, once, so that the
// compute request finds it open, or finds it failed, without waiting: in
// the browser the worker calls it as such a request arrives, and the
// loads queued with it run meanwhile. Probe may be called from any
// goroutine.
func (e *Engine) Probe(c string) {
	if (c != "auto" && c != "gpu") || e.OpenGPU == nil {
		return
	}
	i := probeSlot(c == "auto")
	e.probeMu.Lock()
	defer e.probeMu.Unlock()
	if e.probes[i] != nil {
		return
	}
	p := &gpuProbe{done: make(chan struct{})}
	e.probes[i] = p
	go func() {
		defer close(p.done)
		p.out.acc, p.out.info, p.out.err = e.OpenGPU(c == "auto")
		p.out.done = true
	}()
}

// probeSlot is the index in Engine.probes of "auto" (hardwareOnly) or
// "gpu".
func probeSlot(hardwareOnly bool) int {
	if hardwareOnly {
		return 1
	}
	return 0
}

// tryGPU opens the GPU for "auto" (hardwareOnly) or "gpu", once each (or
// takes the outcome of Probe's call), and shares a device between the two
// where it qualifies for both.
func (e *Engine) tryGPU(hardwareOnly bool) *gpuTry {
	t, other := &e.gpuAny, &e.gpuHW
	if hardwareOnly {
		t, other = &e.gpuHW, &e.gpuAny
	}
	if t.done {
		return t
	}
	if other.done && other.err == nil && (!hardwareOnly || !other.info.Software) {
		*t = *other
		return t
	}
	t.done = true
	if e.OpenGPU == nil {
		t.err = errors.New("this build has no GPU runner")
		return t
	}
	e.probeMu.Lock()
	p := e.probes[probeSlot(hardwareOnly)]
	e.probeMu.Unlock()
	if p != nil {
		<-p.done
		*t = p.out
		return t
	}
	t.acc, t.info, t.err = e.OpenGPU(hardwareOnly)
	return t
}

type cacheKey struct {
	layer, kv int
	method    string
	params    core.Params
}

type cacheEntry struct {
	c   *core.Cache
	err error
	// metrics are c's metrics per query head of the group, as evaluate
	// computed them (callers must not modify them).
	metrics map[int]core.Metrics
}

// evaluate is g.Evaluate(c, hi) for the cache c kept under k, computed
// once per query head while the cache is kept: a ladder step's maps, its
// head request and the grid all ask for it.
func (e *Engine) evaluate(k cacheKey, g *core.Group, c *core.Cache, hi int) core.Metrics {
	ce := e.caches[k]
	if ce == nil || ce.c != c {
		return g.Evaluate(c, hi)
	}
	if m, ok := ce.metrics[hi]; ok {
		return m
	}
	m := g.Evaluate(c, hi)
	if ce.metrics == nil {
		ce.metrics = map[int]core.Metrics{}
	}
	ce.metrics[hi] = m
	return m
}

// Info returns the loaded sample's description, or nil before the first
// successful load.
func (e *Engine) Info() *wire.Info { return e.info }

// Handle answers one request, emitting progress and result responses. Heavy
// requests call check between units of work.
func (e *Engine) Handle(req wire.Request, bufs map[string][]byte, emit Emit, check Check) {
	if check == nil {
		check = func() bool { return false }
	}
	fail := func(err error) {
		emit(wire.Response{ID: req.ID, Op: req.Op, Error: err.Error(), Done: true}, nil)
	}
	if req.Op == wire.OpStop {
		return // what it stops saw it in the queue (Queue.Supersedes)
	}
	if req.Op != wire.OpLoad && req.Op != wire.OpCompute && e.model == nil {
		fail(fmt.Errorf("%s: no sample loaded yet (send a %q request first)", req.Op, wire.OpLoad))
		return
	}
	var err error
	switch req.Op {
	case wire.OpLoad:
		err = e.load(req, bufs, emit)
	case wire.OpGrid:
		err = e.grid(req, emit, check)
	case wire.OpHead:
		err = e.head(req, emit, check)
	case wire.OpCurve:
		err = e.curve(req, emit, check)
	case wire.OpCompute:
		err = e.setCompute(req, emit)
	case wire.OpPrompt:
		err = e.prompt(req, emit)
	case wire.OpEval:
		err = e.evalOp(req, emit, check)
	default:
		err = fmt.Errorf("unknown op %q (known: %s, %s, %s, %s, %s, %s, %s)", req.Op, wire.OpLoad, wire.OpGrid, wire.OpHead, wire.OpCurve, wire.OpCompute, wire.OpPrompt, wire.OpEval)
	}
	if err != nil && e.accel != nil && (req.Op == wire.OpGrid || req.Op == wire.OpHead || req.Op == wire.OpCurve) {
		// The GPU failed (a lost device, a shader the driver rejects):
		// carry on with the CPU kernels, say so, and answer on the CPU.
		e.dropGPU(err, emit)
		err = nil
		e.Handle(req, bufs, emit, check)
		return
	}
	if err != nil {
		fail(err)
	}
}

// dropGPU switches to the CPU after the GPU failed with err, and tells the
// page with an answer to its latest compute request.
func (e *Engine) dropGPU(err error, emit Emit) {
	e.accel = nil
	e.gpuHW = gpuTry{done: true, err: err}
	e.gpuAny = e.gpuHW
	if e.model != nil {
		if m, merr := core.NewModel(e.model.Sample, core.Options{}); merr == nil {
			e.setModel(m)
		}
	}
	e.caches, e.order, e.focus = nil, nil, nil
	e.compute = wire.Compute{Device: "cpu", Note: "the GPU failed (" + strings.TrimPrefix(err.Error(), "gpu: ") + "); computing on the CPU."}
	c := e.compute
	emit(wire.Response{ID: e.computeID, Op: wire.OpCompute, Compute: &c, Done: true}, nil)
}

// DefaultParams are the core's default parameters (core.DefaultRatio,
// core.DefaultParams) as the pages know them (Info.Defaults).
func DefaultParams() wire.Params {
	p := core.DefaultParams(core.DefaultRatio)
	return wire.Params{Ratio: p.Ratio, Lambda: p.Lambda, Phi: p.Phi, Tau: p.Tau}
}

// coreParams turns the page's parameters into core.Params (the defaults
// for sinks, recent window and summaries).
func coreParams(p wire.Params) core.Params {
	c := core.DefaultParams(p.Ratio)
	c.Lambda, c.Phi, c.Tau = p.Lambda, p.Phi, p.Tau
	if !core.IsUniform(p.Budget) {
		c.Budget = p.Budget
	}
	return c
}

// load replaces the model with the requested sample; on error the previous
// sample stays loaded.
func (e *Engine) load(req wire.Request, bufs map[string][]byte, emit Emit) error {
	src := req.Source
	if src == nil {
		return errors.New("load: no source given")
	}
	progress := func(p float64) {
		emit(wire.Response{ID: req.ID, Op: req.Op, Progress: p}, nil)
	}
	var (
		s      *sample.Sample
		name   string
		err    error
		shared bool // handed to the helper workers
	)
	defer func() { e.early = nil }()
	switch src.Kind {
	case "preset":
		if early := e.early; early != nil && early.name == presetName(src) && early.seed == src.Seed {
			name, s = early.name, early.s
		} else if name, s, err = presetSample(src); err != nil {
			return err
		}
	case "url":
		if err := checkLocalURL(src.URL); err != nil {
			return err
		}
		if e.Fetch == nil {
			return fmt.Errorf("load %s: fetching is not available here", src.URL)
		}
		name = path.Base(strings.SplitN(src.URL, "?", 2)[0])
		data, err := e.Fetch(src.URL)
		if err != nil {
			return fmt.Errorf("load %s: %w", src.URL, err)
		}
		progress(0.5)
		e.Pool.share(name, data)
		shared = true
		// Lazily: each KV head is widened when an analysis first asks
		// for it, so the first head waits for its own KV head only and
		// each helper widens the KV heads it analyses.
		if s, err = sample.DecodeLazy(name, data); err != nil {
			return err
		}
	case "file":
		name = src.Name
		data, err := fileBuffer(src, bufs)
		if err != nil {
			return err
		}
		e.Pool.share(name, data)
		shared = true
		if s, err = sample.DecodeLazy(name, data); err != nil {
			return err
		}
	case "llama":
		// The model runs its prompt (see says.go); the run is the sample.
		if name, err = e.loadLlama(req, bufs, progress); err != nil {
			return err
		}
		e.Pool.drop()
		emit(wire.Response{ID: req.ID, Op: req.Op, Info: e.info, Progress: 1, Done: true}, nil)
		return nil
	case "checkpoint":
		if _, err = e.loadCheckpoint(req, bufs, progress); err != nil {
			return err
		}
		e.Pool.drop()
		emit(wire.Response{ID: req.ID, Op: req.Op, Info: e.info, Progress: 1, Done: true}, nil)
		return nil
	default:
		return fmt.Errorf("load: unknown source kind %q (known: preset, url, file, llama, checkpoint)", src.Kind)
	}
	m, err := core.NewModel(s, core.Options{Accel: e.accel})
	if err != nil {
		return fmt.Errorf("load %s: %w", name, err)
	}
	e.setModel(m)
	if shared {
		e.Pool.bind(s)
	} else {
		e.Pool.drop()
	}
	e.lm = nil
	e.info = infoOf(name, s)
	e.caches, e.order, e.focus = nil, nil, nil
	emit(wire.Response{ID: req.ID, Op: req.Op, Info: e.info, Progress: 1, Done: true}, nil)
	return nil
}

// PreloadMinCores is the fewest cores (as the page counts them) with
// which the browser's worker preloads the view's preset (Preload). On 2
// cores the page's own start and V8's compiling take both while the page
// starts, and generating the sample then only moves time from the page's
// controls to the worker's first answer (docs/PERFORMANCE.md).
const PreloadMinCores = 3

// earlySample is a preset's sample made by Preload.
type earlySample struct {
	name string
	seed uint64
	s    *sample.Sample
}

// Preload makes the sample of src ahead of its load request when src is a
// preset: the worker knows the view's sample from the page's address
// while the page itself still starts (in the browser a few hundred
// milliseconds before its load request comes), and the load that asks for
// the same preset and seed takes it. Other sources are not preloaded.
func (e *Engine) Preload(src *wire.Source) {
	if src == nil || src.Kind != "preset" {
		return
	}
	if name, s, err := presetSample(src); err == nil {
		e.early = &earlySample{name: name, seed: src.Seed, s: s}
	}
}

// presetName is the preset src names ("default" when none).
func presetName(src *wire.Source) string {
	if src.Preset == "" {
		return "default"
	}
	return src.Preset
}

// presetSample generates the preset sample src names, with its seed when
// set.
func presetSample(src *wire.Source) (string, *sample.Sample, error) {
	name := presetName(src)
	cfg, err := gen.DefaultConfig(name)
	if err != nil {
		return name, nil, fmt.Errorf("load preset: %w", err)
	}
	if src.Seed != 0 {
		cfg.Seed = src.Seed
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		return name, nil, fmt.Errorf("load preset %q: %w", name, err)
	}
	return name, s, nil
}

// Compute is where the engine computes now.
func (e *Engine) Compute() wire.Compute {
	if e.compute.Device == "" {
		return wire.Compute{Device: "cpu"}
	}
	return e.compute
}

// setCompute switches between the CPU kernels and the GPU runner:
// "cpu"; "gpu", any WebGPU adapter; "auto", a hardware GPU when there is
// one, else the CPU (a software adapter such as SwiftShader computes the
// same numbers many times slower than the CPU kernels). Where the GPU is not
// used the answer's Note says why. A loaded sample is analysed again on the
// new device (lazily, head by head, as after a load).
func (e *Engine) setCompute(req wire.Request, emit Emit) error {
	var accel core.Accelerator
	c := wire.Compute{Device: "cpu"}
	switch req.Compute {
	case "cpu":
	case "gpu", "auto":
		t := e.tryGPU(req.Compute == "auto")
		if t.err != nil {
			c.Note = strings.TrimPrefix(t.err.Error(), "gpu: ") + "; computing on the CPU."
		} else {
			accel, c = t.acc, t.info
			c.Device = "gpu"
		}
	default:
		return fmt.Errorf("compute: unknown device %q (known: auto, cpu, gpu)", req.Compute)
	}
	if accel != e.accel && e.model != nil {
		m, err := core.NewModel(e.model.Sample, core.Options{Accel: accel})
		if err != nil {
			return fmt.Errorf("compute: %w", err)
		}
		e.setModel(m)
		e.caches, e.order, e.focus = nil, nil, nil
	}
	e.accel, e.compute, e.computeID = accel, c, req.ID
	emit(wire.Response{ID: req.ID, Op: req.Op, Compute: &c, Done: true}, nil)
	return nil
}

// checkLocalURL refuses URLs that would leave the app's own static files.
func checkLocalURL(u string) error {
	switch {
	case u == "":
		return errors.New("load: empty url")
	case strings.Contains(u, ":") || strings.HasPrefix(u, "/") || strings.HasPrefix(u, "\\"):
		return fmt.Errorf("load %s: only relative urls of the app's own files are fetched (e.g. samples/default.safetensors)", u)
	}
	return nil
}

func fileBuffer(src *wire.Source, bufs map[string][]byte) ([]byte, error) {
	data, ok := bufs["file"]
	switch {
	case src.Name == "":
		return nil, fmt.Errorf("load %s: the file has no name", src.Kind)
	case !ok:
		return nil, fmt.Errorf("load %s: the message carries no buffer \"file\"", src.Name)
	case len(data) == 0:
		return nil, fmt.Errorf("load %s: the file is empty", src.Name)
	case len(data) > MaxFileBytes:
		return nil, fmt.Errorf("load %s: %w", src.Name, fileTooLarge(int64(len(data))))
	}
	return data, nil
}

// fileTooLarge is the error for a file of n bytes over MaxFileBytes.
func fileTooLarge(n int64) error {
	return fmt.Errorf("%d MiB is more than the %d MiB the browser app reads", n>>20, MaxFileBytes>>20)
}

func infoOf(name string, s *sample.Sample) *wire.Info {
	in := &wire.Info{
		Name: name, Model: s.Meta.Model, Source: s.Meta.Source, Description: s.Meta.Description,
		Layers: s.L, Heads: s.H, KVHeads: s.HKV, Tokens: s.N, Prefix: s.Prefix(), Dim: s.D,
		TokenText: s.Meta.Tokens, Needles: s.Meta.Needles, NeedleProbes: s.Meta.NeedleProbes,
		Defaults: DefaultParams(), Sliders: wire.Sliders,
	}
	for _, n := range core.MethodNames() {
		m, _ := core.Lookup(n)
		in.Methods = append(in.Methods, wire.Method{Name: n, Describe: m.Describe()})
	}
	return in
}

// compress returns the (cached) cache of one KV head.
func (e *Engine) compress(l, kv int, method string, p core.Params) (*core.Cache, error) {
	if !core.IsUniform(p.Budget) {
		// The head's share of the model's budget (core.Model.Allocate).
		a, err := e.model.Allocate(method, p)
		if err != nil {
			return nil, err
		}
		p = a.ParamsOf(p, l, kv)
	}
	k := cacheKey{l, kv, method, p}
	if ce, ok := e.caches[k]; ok {
		return ce.c, ce.err
	}
	g, err := e.model.Group(l, kv)
	if err != nil {
		return nil, err
	}
	c, err := g.Compress(method, p)
	if e.caches == nil {
		e.caches = map[cacheKey]*cacheEntry{}
	}
	if len(e.order) >= maxCaches {
		delete(e.caches, e.order[0])
		e.order = e.order[1:]
	}
	e.caches[k] = &cacheEntry{c: c, err: err}
	e.order = append(e.order, k)
	return c, err
}

// sweep runs sw on the model (core.Model.Sweep) one job at a time, with
// the kept caches and their metrics, calling job after each (cell, KV
// head) job but the last and check after each that job returns false
// for; it reports false when check or job stopped it (the request is then
// answered or superseded), and returns the last job.
func (e *Engine) sweep(sw core.Sweep, check Check, job func(core.SweepJob) bool) ([]core.Cell, core.SweepJob, bool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last core.SweepJob
	sw.Workers = 1 // the engine is not safe for concurrent use
	sw.Compress = func(g *core.Group, method string, p core.Params) (*core.Cache, error) {
		return e.compress(g.Layer, g.KV, method, p)
	}
	sw.Evaluate = func(g *core.Group, method string, p core.Params, c *core.Cache, hi int) core.Metrics {
		return e.evaluate(cacheKey{g.Layer, g.KV, method, p}, g, c, hi)
	}
	sw.Progress = func(j core.SweepJob) {
		if last = j; j.Done < j.Total && (!job(j) || check()) {
			cancel()
		}
	}
	cells, err := e.model.Sweep(ctx, sw)
	if ctx.Err() != nil {
		return nil, last, false, nil
	}
	return cells, last, true, err
}

// grid answers with one part per KV head (the cells of its query heads),
// the last one Done with the model's mean error; a method that does not
// fit the ratio, with one part that says why (GridPart.NA). With helper
// workers (Pool) it computes its own share of the KV heads and passes on
// the helpers' parts as they come; the share of a helper that fails is
// computed here. Request.Heads limits the grid to those query heads.
func (e *Engine) grid(req wire.Request, emit Emit, check Check) error {
	pl, err := e.planGrid(req)
	if err != nil {
		return err
	}
	p := coreParams(req.Params)
	heads, groupOf, shares, pos, hs := pl.heads, pl.groupOf, pl.shares, pl.pos, pl.hs
	// The helpers' shares: the ones handed out while the worker answered
	// the head before this grid (Prestart), or handed out now.
	ids := map[int]int{}
	if st := e.started; st != nil {
		e.started = nil
		if st.same(pl) {
			ids = st.ids
		} else {
			st.stop(e.Pool)
		}
	}
	if len(ids) == 0 {
		ids = pl.post(e.Pool)
	}
	pl.ids = ids

	metrics := make([]core.Metrics, len(heads))
	have := make([]bool, len(heads))
	doneGroups := make([]bool, pl.groups)
	left := pl.groups
	answered := false
	helped := map[int]bool{} // the helpers whose cells came
	// arrive takes cells computed here or by a helper: a part, or, with
	// the last KV head, the final answer.
	arrive := func(cells []core.Metrics) {
		gp := &wire.GridPart{Method: req.Method, Ratio: req.Params.Ratio, MeanErr: result.Num(math.NaN()), Cells: []core.Metrics{}}
		for _, m := range cells {
			i, ok := pos[core.HeadRef{Layer: m.Layer, Head: m.Head}]
			if !ok || have[i] {
				continue
			}
			if g := groupOf[i]; !doneGroups[g] {
				doneGroups[g] = true
				left--
			}
			have[i], metrics[i] = true, m
			// A grid cell's numbers only: not its profile and needles.
			m.Profile, m.Needles = nil, nil
			gp.Cells = append(gp.Cells, m)
		}
		if left > 0 {
			emit(wire.Response{ID: req.ID, Op: req.Op, Grid: gp, Progress: float64(pl.groups-left) / float64(pl.groups)}, nil)
			return
		}
		gp.MeanErr = result.Num(core.MeanErr(metrics))
		gp.Workers = 1 + len(helped)
		emit(wire.Response{ID: req.ID, Op: req.Op, Grid: gp, Progress: 1, Done: true}, nil)
		answered = true
	}
	// notFit answers that the method does not fit the ratio.
	notFit := func(why string) {
		emit(wire.Response{ID: req.ID, Op: req.Op, Grid: &wire.GridPart{Method: req.Method, Ratio: req.Params.Ratio,
			MeanErr: result.Num(math.NaN()), Cells: []core.Metrics{}, NA: why}, Progress: 1, Done: true}, nil)
		answered = true
	}
	var orphans []core.HeadRef // the shares of helpers that failed
	// fromHelpers takes the helpers' answers that came.
	fromHelpers := func() {
		for _, rp := range e.Pool.take() {
			if answered {
				return
			}
			r := rp.r
			if r.Error != "" {
				// The helper failed (this grid's share, an earlier
				// request, or itself): its share is computed here.
				e.Pool.fail(rp.from)
				for id, w := range ids {
					if hs[w-1] != rp.from {
						continue
					}
					delete(ids, id)
					for _, hd := range shares[w] {
						if !have[pos[hd]] {
							orphans = append(orphans, hd)
						}
					}
				}
				continue
			}
			if _, ok := ids[r.ID]; !ok {
				continue // an earlier grid's
			}
			switch {
			case r.Grid != nil && r.Grid.NA != "":
				notFit(r.Grid.NA)
			case r.Grid != nil:
				if r.Done {
					delete(ids, r.ID)
				}
				helped[rp.from] = true
				arrive(r.Grid.Cells)
			}
		}
	}
	// local computes heads here; false when it stopped: superseded, or
	// answered (the method does not fit).
	local := func(heads []core.HeadRef) (bool, error) {
		sw := core.Sweep{Heads: heads, Ratios: []float64{req.Params.Ratio}, Methods: []string{req.Method},
			Params: func(float64) (core.Params, error) { return p, nil }}
		cells, last, whole, err := e.sweep(sw, check, func(j core.SweepJob) bool {
			if errors.Is(j.Err, core.ErrDoesNotFit) || errors.Is(j.Err, core.ErrNeedsKV) {
				notFit(j.Err.Error())
				return false
			}
			if j.Err == nil {
				arrive(j.Metrics)
			}
			fromHelpers()
			return !answered
		})
		switch {
		case !whole:
			return false, nil
		case err != nil:
			return false, fmt.Errorf("grid: %w", err)
		case cells[0].NA != "":
			notFit(cells[0].Cause.Error())
			return false, nil
		}
		arrive(last.Metrics)
		return true, nil
	}
	defer pl.stop(e.Pool)
	if ok, err := local(shares[0]); !ok {
		return err
	}
	for !answered {
		fromHelpers()
		if len(orphans) > 0 {
			o := orphans
			orphans = nil
			if ok, err := local(o); !ok {
				return err
			}
			continue
		}
		if answered {
			break
		}
		if len(ids) == 0 {
			// No helper will answer for the heads left: compute them.
			for i, hd := range heads {
				if !have[i] {
					orphans = append(orphans, hd)
				}
			}
			continue
		}
		if check() {
			return nil
		}
		e.Pool.wait(helperPoll)
	}
	return nil
}

// gridPlan is who computes what of a grid: its query heads, the KV head
// (group) of each, and each worker's share: KV head g (in the order of
// their first query head) goes to worker g mod (1 + len(hs)), 0 being
// this worker and i+1 helper hs[i].
type gridPlan struct {
	req     wire.Request
	sample  *sample.Sample
	heads   []core.HeadRef
	groupOf []int // per head
	groups  int
	shares  [][]core.HeadRef
	pos     map[core.HeadRef]int // index into heads
	hs      []int
	ids     map[int]int // a helper's grid request id -> its share (see post)
}

// planGrid checks a grid request and shares it out.
func (e *Engine) planGrid(req wire.Request) (*gridPlan, error) {
	p := coreParams(req.Params)
	if _, err := core.Lookup(req.Method); err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	s := e.model.Sample
	pl := &gridPlan{req: req, sample: s, heads: req.Heads, pos: map[core.HeadRef]int{}}
	if pl.heads != nil && len(pl.heads) == 0 {
		return nil, errors.New("grid: the request asks for no heads")
	}
	if pl.heads == nil {
		for l := 0; l < s.L; l++ {
			for h := 0; h < s.H; h++ {
				pl.heads = append(pl.heads, core.HeadRef{Layer: l, Head: h})
			}
		}
	}
	if e.accel == nil {
		pl.hs = e.Pool.usable(s)
	}
	var err error
	if pl.groupOf, pl.groups, err = e.model.KVGroups(pl.heads); err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	for i, hd := range pl.heads {
		pl.pos[hd] = i
	}
	pl.shares = make([][]core.HeadRef, 1+len(pl.hs))
	for i, hd := range pl.heads {
		w := pl.groupOf[i] % len(pl.shares)
		pl.shares[w] = append(pl.shares[w], hd)
	}
	return pl, nil
}

// post hands the helpers their shares and returns the requests' ids.
func (pl *gridPlan) post(pool *Pool) map[int]int {
	pl.ids = map[int]int{}
	for i, h := range pl.hs {
		if len(pl.shares[i+1]) > 0 {
			r := pl.req
			r.ID, r.Heads, r.SentAt, r.Op = 0, pl.shares[i+1], 0, wire.OpGrid
			pl.ids[pool.post(h, r)] = i + 1
		}
	}
	return pl.ids
}

// stop tells the helpers whose shares are still out to stop.
func (pl *gridPlan) stop(pool *Pool) {
	for id, w := range pl.ids {
		pool.post(pl.hs[w-1], wire.Request{Op: wire.OpStop})
		delete(pl.ids, id)
	}
}

// same reports whether pl, handed out before, is what q asks of the same
// helpers.
func (pl *gridPlan) same(q *gridPlan) bool {
	return pl.sample == q.sample && pl.req.Method == q.req.Method && pl.req.Params == q.req.Params &&
		slices.Equal(pl.req.Heads, q.req.Heads) && slices.Equal(pl.hs, q.hs)
}

// Prestart hands out the helpers' shares of a queued grid before it runs,
// while the worker answers the first head request after a load: the
// helpers then compute while this worker does. The grid takes them over
// when it runs, or stops them when it asks for something else.
func (e *Engine) Prestart(grid wire.Request) {
	if e.model == nil || e.focus != nil || e.started != nil || grid.Op != wire.OpGrid {
		return
	}
	pl, err := e.planGrid(grid)
	if err != nil || len(pl.hs) == 0 {
		return
	}
	pl.post(e.Pool)
	e.started = pl
}

// head answers one head in detail, with the attention maps when asked:
// then the numbers come first in a partial answer (Done false) and the
// final answer repeats them with the maps, or, for maps sent directly, the
// maps go first and the answer follows. Once the head's cache is made
// (and kept), a head request that a newer one superseded (check) stops
// without an answer, or after its numbers: evaluating it and drawing its
// maps would only delay the newer one. The head's view becomes the focus
// of the ladder (see Climb), from its step.
func (e *Engine) head(req wire.Request, emit Emit, check Check) error {
	p := coreParams(req.Params)
	if _, err := core.Lookup(req.Method); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	g, hi, err := e.model.Head(req.Layer, req.Head)
	if err != nil {
		return fmt.Errorf("head: %w", err)
	}
	c, err := e.compress(req.Layer, g.KV, req.Method, p)
	e.setFocus(req, g.KV)
	if errors.Is(err, core.ErrDoesNotFit) {
		hr := &wire.HeadResult{Method: req.Method, NA: err.Error()}
		emit(wire.Response{ID: req.ID, Op: req.Op, Head: hr, Done: true}, nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("head: %w", err)
	}
	if check() {
		return nil
	}
	m := e.evaluate(cacheKey{req.Layer, g.KV, req.Method, p}, g, c, hi)
	if err := m.CheckFinite(); err != nil {
		// No number shown as if whole: the head's view says why instead.
		return fmt.Errorf("head: %w", err)
	}
	hr := &wire.HeadResult{Method: req.Method, Metrics: m, Stages: c.Stages, BudgetBits: c.Budget.Bits(), FullBits: c.Budget.FullBits, Model: e.gen}
	var bufs map[string][]byte
	direct := req.Direct && e.Maps != nil && e.Maps.Ready()
	if req.Maps && !direct {
		// The numbers first: they are ready now, and the maps cost as much
		// again (a partial answer; the final one repeats them with the
		// maps). Direct maps go first instead: they skip the page's
		// thread, which the numbers keep busy rendering for a while, and
		// the numbers come right after them.
		first := *hr
		emit(wire.Response{ID: req.ID, Op: req.Op, Head: &first}, nil)
		if check() {
			return nil
		}
	}
	if req.Maps {
		bufs = e.maps(req, g, c, hi, hr)
	}
	emit(wire.Response{ID: req.ID, Op: req.Op, Head: hr, Done: true}, bufs)
	return nil
}

// maps makes the heatmap page's message of the head's attention maps and
// sends it directly when the request asks for that and a receiver takes
// it (hr.MapsDirect); otherwise it sets hr.Maps and returns the buffers to
// answer with.
func (e *Engine) maps(req wire.Request, g *core.Group, c *core.Cache, hi int, hr *wire.HeadResult) map[string][]byte {
	if req.Direct && req.Shown != "" && e.Maps != nil && e.Maps.HoldsView(req.Shown) && e.Maps.Holds(e.mapsKey(req.Layer, req.Head)) &&
		req.Shown == wire.ViewKey(e.gen, req.Layer, req.Head, req.Method, req.Params, req.Panel) {
		// The heatmap page draws these maps from its ladder.
		hr.MapsDirect = true
		return nil
	}
	m, bufs, am := e.mapsMessage(req, g, c, hi, result.Num(hr.Metrics.Err))
	m.Seq = req.ID
	if req.Direct && e.Maps != nil {
		key := e.mapsKey(req.Layer, req.Head)
		if !e.Maps.Holds(key) {
			withStatic(&m, bufs, am, e.info)
		}
		if e.Maps.Send(m, key, bufs) {
			hr.MapsDirect = true
			return nil
		}
	}
	if _, ok := bufs["orig"]; !ok {
		withStatic(&m, bufs, am, e.info)
	}
	hr.Maps = &m
	return bufs
}

// mapsMessage makes the heatmap page's message of the maps of query head
// hi of g with cache c for the view req asks for (err: the head's error,
// for the title), without the unchanging part (see withStatic) and Seq.
func (e *Engine) mapsMessage(req wire.Request, g *core.Group, c *core.Cache, hi int, err result.Num) (wire.Maps, map[string][]byte, *core.AttentionMaps) {
	am := g.MapsFactored(c, hi)
	panel := req.Panel
	if panel == "" {
		panel = "all"
	}
	m := wire.Maps{
		Title: wire.HeadTitle(req.Layer, req.Head), Method: req.Method, Ratio: req.Params.Ratio, Err: err,
		Rows: am.Rows, Cols: am.Cols, Calib: am.Calib, Panel: panel,
		View: wire.ViewKey(e.gen, req.Layer, req.Head, req.Method, req.Params, req.Panel),
	}
	classes := make([]byte, len(c.Class))
	for i, cl := range c.Class {
		classes[i] = byte(cl)
	}
	segs := make([]byte, 4*len(c.Segment))
	for i, sg := range c.Segment {
		binary.LittleEndian.PutUint32(segs[4*i:], uint32(sg))
	}
	bufs := map[string][]byte{"classes": classes, "segments": segs}
	if f := am.Factored; f != nil {
		// The compressed map in factored form: about 40 kB where the map
		// is 0.8 MB (default sample), which the heatmap page expands with
		// the original map it holds.
		m.Factored, m.Syn = true, f.C
		src := make([]byte, 4*len(f.Source))
		for j, s := range f.Source {
			binary.LittleEndian.PutUint32(src[4*j:], uint32(s))
		}
		bufs["scale"], bufs["inv"], bufs["syn"], bufs["share"], bufs["source"] = float32LE(f.Scale), float32LE(f.Inv), float32LE(f.Syn), float32LE(f.Share), src
	} else {
		bufs["comp"] = float32LE(am.Comp)
	}
	return m, bufs, am
}

// withStatic adds the unchanging part of a head's maps to m and bufs.
func withStatic(m *wire.Maps, bufs map[string][]byte, am *core.AttentionMaps, info *wire.Info) {
	bufs["orig"] = float32LE(am.Orig)
	if info != nil {
		m.TokenText, m.Needles = info.TokenText, info.Needles
	}
}

// float32LE returns x as little-endian float32 bytes: x's own memory on a
// little-endian machine (wasm, amd64, arm64; the bytes then share it, so x
// must not change while they are in use), a converted copy otherwise.
func float32LE(x []float32) []byte {
	if len(x) == 0 {
		return []byte{}
	}
	if half.LittleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
	}
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// curve answers error vs ratio for each method, for one head (Head >= 0)
// or the mean over all heads (Head -1). A point where the method does not
// fit is NaN (null).
func (e *Engine) curve(req wire.Request, emit Emit, check Check) error {
	if len(req.Methods) == 0 || len(req.Ratios) == 0 {
		return errors.New("curve: give at least one method and one ratio")
	}
	for _, m := range req.Methods {
		if _, err := core.Lookup(m); err != nil {
			return fmt.Errorf("curve: %w", err)
		}
	}
	sw := core.Sweep{Ratios: req.Ratios, Methods: req.Methods, Params: func(r float64) (core.Params, error) {
		pp := req.Params
		pp.Ratio = r
		return coreParams(pp), coreParams(pp).Validate()
	}}
	if req.Head != -1 {
		sw.Heads = []core.HeadRef{{Layer: req.Layer, Head: req.Head}}
	}
	cells, _, whole, err := e.sweep(sw, check, func(core.SweepJob) bool { return true })
	switch {
	case !whole:
		return nil
	case err != nil:
		return fmt.Errorf("curve: %w", err)
	}
	cv := &wire.Curve{Layer: req.Layer, Head: req.Head, Methods: req.Methods, Ratios: req.Ratios, Err: make([][]result.Num, len(req.Methods))}
	for mi := range req.Methods {
		cv.Err[mi] = make([]result.Num, len(req.Ratios))
		for ri := range req.Ratios {
			// The cells are ratio-major.
			c := cells[ri*len(req.Methods)+mi]
			cv.Err[mi][ri] = result.Num(math.NaN())
			if c.NA == "" {
				cv.Err[mi][ri] = result.Num(core.MeanErr(c.Metrics))
			}
		}
	}
	emit(wire.Response{ID: req.ID, Op: req.Op, Curve: cv, Progress: 1, Done: true}, nil)
	return nil
}
