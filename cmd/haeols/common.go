package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/sample"
)

// defaultSamplePath is the built-in sample used when no FILE is given, if it
// exists relative to the working directory.
var defaultSamplePath = filepath.Join("samples", "default.safetensors")

// loadSample reads the sample named by pos (at most one FILE) or, with no
// FILE, the built-in default, and returns it with its name for messages:
// the path as given, or a description of the built-in sample. Titles use
// displayName of it.
func loadSample(e *env, pos []string) (*sample.Sample, string, error) {
	if len(pos) == 1 {
		s, err := sample.Read(pos[0])
		if err != nil {
			return nil, "", err // a *sample.Error: names the file
		}
		return s, pos[0], nil
	}
	if _, err := os.Stat(defaultSamplePath); err == nil {
		fmt.Fprintf(e.stderr, "haeols: %s: no FILE given; using %s\n", e.cmd, defaultSamplePath)
		s, err := sample.Read(defaultSamplePath)
		if err != nil {
			return nil, "", err
		}
		return s, defaultSamplePath, nil
	}
	fmt.Fprintf(e.stderr, "haeols: %s: no FILE given and no %s; generating preset \"default\" in memory\n", e.cmd, defaultSamplePath)
	cfg, err := gen.DefaultConfig("default")
	if err != nil {
		return nil, "", fmt.Errorf("built-in sample: %w", err)
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("built-in sample: generating preset default: %w", err)
	}
	return s, "preset default (in memory)", nil
}

// displayName is the file name without its directory, for titles.
func displayName(name string) string {
	if strings.HasSuffix(name, "(in memory)") {
		return name
	}
	return filepath.Base(name)
}

// newModel wraps core.NewModel with the file name in the error, and says
// how to raise the limit on the analyses' memory (-max-mem, in MiB; 0 means
// core.DefaultMaxAnalysisBytes of the sample).
func newModel(s *sample.Sample, name string, maxMem int) (*core.Model, error) {
	if maxMem < 0 {
		return nil, usagef("-max-mem %d: want >= 0 (MiB; 0: the default limit)", maxMem)
	}
	opt := core.Options{MaxAnalysisBytes: int64(maxMem) << 20}
	m, err := core.NewModel(s, opt)
	if err == nil {
		// Have the collector hold the heap within what was promised (the
		// sample and the limit), with room for the runtime and the file
		// as read, rather than let it grow to twice the live data.
		if b := core.MemoryBound(s, opt); b > 0 {
			setMemoryLimit(b + runtimeSlack)
		}
	}
	if err != nil {
		if errors.Is(err, core.ErrTooLarge) && strings.Contains(err.Error(), "MaxAnalysisBytes") {
			return nil, fmt.Errorf("%s: %w; raise it with -max-mem MiB if this machine has the memory", quotePath(name), err)
		}
		return nil, fmt.Errorf("%s: %w", quotePath(name), err)
	}
	return m, nil
}

// setMemoryLimit sets the collector's soft memory limit (the tests, which
// run many commands in one process, leave it alone).
var setMemoryLimit = debug.SetMemoryLimit

// runtimeSlack is the memory beside the analyses' bound that the process
// may take: the Go runtime, the binary, the buffers of the file as read.
const runtimeSlack = 64 << 20

// allMethods is every registered method except the reference "full", which
// ignores the ratio; name it explicitly to include it.
func allMethods() []string {
	var out []string
	for _, n := range core.MethodNames() {
		if n != "full" {
			out = append(out, n)
		}
	}
	return out
}

// parseMethods parses the -methods flag: a comma-separated list of method
// names, or "all".
func parseMethods(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		names := []string{f}
		if f == "all" {
			names = allMethods()
		} else if _, err := core.Lookup(f); err != nil {
			return nil, usagef("-methods: unknown method %q (valid: %s, all)", f, strings.Join(core.MethodNames(), ", "))
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return nil, usagef("-methods: empty list (valid: %s, all)", strings.Join(core.MethodNames(), ", "))
	}
	return out, nil
}

// methodsHelp is the -methods flag's help text.
func methodsHelp() string {
	return "comma-separated methods, or all (every method but the reference full): " + strings.Join(core.MethodNames(), ", ")
}

// paramFlags registers the HAE-OLS parameter flags (not the ratio) on fs.
type paramFlags struct {
	lambda, phi, tau      *float64
	sinks, recent, summar *int
	budget                *string
	maxMem                *int // not a parameter: the limit on the analyses' memory, MiB
}

func addParamFlags(fs *flag.FlagSet) *paramFlags {
	d := core.DefaultParams(0.5)
	return &paramFlags{
		lambda: fs.Float64("lambda", d.Lambda, "HAE-OLS entropy weight in [0, 1] (0: attention mass only)"),
		phi:    fs.Float64("phi", d.Phi, "HAE-OLS share of the free budget spent on summaries, [0, 1]"),
		tau:    fs.Float64("tau", d.Tau, "HAE-OLS SVD energy kept, (0, 1] (1: no SVD stage)"),
		sinks:  fs.Int("sinks", d.Sinks, "always-kept first tokens"),
		recent: fs.Int("recent", d.Recent, "always-kept last tokens of the prefix"),
		summar: fs.Int("summaries", d.Summaries, "HAE-OLS summary count; 0 derives it from -phi"),
		budget: fs.String("budget", core.BudgetUniform, "how the ratio's total memory is shared among the KV heads: "+strings.Join(core.Budgets, ", ")+
			" (uniform: each the ratio; pyramid: more for lower layers, as PyramidKV; adakv: by attention mass across a layer's heads, as AdaKV; hae: where the method's calibration error falls fastest per slot)"),
		maxMem: fs.Int("max-mem", 0, fmt.Sprintf("most memory the analyses of all KV heads and the running compressions may take, MiB (0: the larger of %d MiB and %d x the sample's size); a sample over it is refused, and fewer compressions run at once where all would not fit", core.MinAnalysisBytes>>20, core.AnalysisRatio)),
	}
}

// params returns the parameters at ratio, each flag checked by name.
func (f *paramFlags) params(ratio float64) (core.Params, error) {
	p := core.DefaultParams(ratio)
	p.Lambda, p.Phi, p.Tau = *f.lambda, *f.phi, *f.tau
	p.Sinks, p.Recent, p.Summaries = *f.sinks, *f.recent, *f.summar
	if p.Budget = *f.budget; !slices.Contains(core.Budgets, p.Budget) {
		return p, usagef("-budget %q: want one of %s", p.Budget, strings.Join(core.Budgets, ", "))
	}
	in01 := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return usagef("-%s %v outside [0, 1]", name, v)
		}
		return nil
	}
	if err := in01("lambda", p.Lambda); err != nil {
		return p, err
	}
	if err := in01("phi", p.Phi); err != nil {
		return p, err
	}
	if !(p.Tau > 0 && p.Tau <= 1) {
		return p, usagef("-tau %v outside (0, 1]", p.Tau)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"sinks", p.Sinks}, {"recent", p.Recent}, {"summaries", p.Summaries}} {
		if c.v < 0 || c.v > 1<<20 {
			return p, usagef("-%s %d out of range [0, %d]", c.name, c.v, 1<<20)
		}
	}
	if err := checkRatio("ratio", ratio); err != nil {
		return p, err
	}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// headID is one query head.
type headID struct{ l, h int }

// selectHeads returns the heads picked by -layer and -head (-1: all), in
// layer-major order, or a usage error naming the flag.
func selectHeads(s *sample.Sample, layer, head int, file string) ([]headID, error) {
	if layer < -1 || layer >= s.L {
		return nil, usagef("-layer %d out of range for %s: it has layers 0..%d (-1: all)", layer, file, s.L-1)
	}
	if head < -1 || head >= s.H {
		return nil, usagef("-head %d out of range for %s: it has heads 0..%d (-1: all)", head, file, s.H-1)
	}
	var out []headID
	for l := 0; l < s.L; l++ {
		for h := 0; h < s.H; h++ {
			if (layer < 0 || l == layer) && (head < 0 || h == head) {
				out = append(out, headID{l, h})
			}
		}
	}
	return out, nil
}

// cell is the outcome of one method at one ratio on the selected heads
// (core.Cell, Metrics in the order of the heads passed to evaluate).
type cell struct{ core.Cell }

// Mean is the mean err over the heads (NaN when NA).
func (c *cell) Mean() float64 {
	if c.Metrics == nil {
		return nan
	}
	return core.MeanErr(c.Metrics)
}

// Max is the largest err over the heads (NaN when NA).
func (c *cell) Max() float64 {
	if c.Metrics == nil {
		return nan
	}
	mx := c.Metrics[0].Err
	for _, m := range c.Metrics[1:] {
		mx = max(mx, m.Err)
	}
	return mx
}

var nan = func() float64 { var z float64; return z / z }()

// naReason turns a core.ErrDoesNotFit or core.ErrNeedsKV error into a
// short reason.
func naReason(err error) string { return core.NAReason(err) }

// evaluate runs the sweep of the ratios and methods on the selected heads
// (core.Model.Sweep: all cores, the result independent of workers) and
// names the file in its error. progress, if not nil, is called after each
// (cell, KV head) job.
func evaluate(m *core.Model, name string, heads []headID, ratios []float64, methods []string, params func(float64) (core.Params, error), workers int, progress func(done, total int)) ([]cell, error) {
	refs := make([]core.HeadRef, len(heads))
	for i, h := range heads {
		refs[i] = core.HeadRef{Layer: h.l, Head: h.h}
	}
	sw := core.Sweep{Heads: refs, Ratios: ratios, Methods: methods, Params: params, Workers: workers}
	if progress != nil {
		sw.Progress = func(j core.SweepJob) { progress(j.Done, j.Total) }
	}
	cs, err := m.Sweep(context.Background(), sw)
	if err != nil {
		if errors.As(err, new(usageError)) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", quotePath(name), err)
	}
	cells := make([]cell, len(cs))
	for i, c := range cs {
		cells[i] = cell{c}
	}
	return cells, nil
}

// metricOf is what the errors of s measure: core.MetricLostMass for an
// attention-only sample (as core.Analyze decides), else core.MetricOutput.
func metricOf(s *sample.Sample) string {
	if s.HasQKV() {
		return core.MetricOutput
	}
	return core.MetricLostMass
}

// errName is what err means for the metric, for titles and axis labels.
func errName(metric string) string {
	if metric == core.MetricLostMass {
		return "lost attention mass"
	}
	return "err"
}

// lostMassNote explains the errors of an attention-only sample above a table.
const lostMassNote = "Attention-only sample: the errors are lost attention mass, 1 - the attention a query keeps on\n" +
	"the prefix tokens kept exactly and on the suffix; cos is undefined; methods that need q/k/v are n/a.\n"

// progressBar returns a progress callback drawing a bar on e.stderr when it
// is a terminal, else nil.
func progressBar(e *env, what string) (func(done, total int), func()) {
	if !e.progress {
		return nil, func() {}
	}
	var mu sync.Mutex
	last := -1
	f := func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		const width = 30
		pct := 100 * done / total
		if pct == last {
			return
		}
		last = pct
		n := width * done / total
		fmt.Fprintf(e.stderr, "\r%s [%s%s] %3d%% %d/%d", what, strings.Repeat("#", n), strings.Repeat(".", width-n), pct, done, total)
	}
	return f, func() {
		if last >= 0 {
			fmt.Fprintln(e.stderr)
		}
	}
}

// openModel checks -workers, loads the sample named by the positional
// arguments, selects the -layer/-head heads and prepares the model: the
// common start of run, sweep and curve.
func openModel(e *env, pos []string, layer, head, workers int, pf *paramFlags) (*sample.Sample, string, []headID, *core.Model, error) {
	if workers < 0 {
		return nil, "", nil, nil, usagef("-workers %d: want >= 0", workers)
	}
	s, name, err := loadSample(e, pos)
	if err != nil {
		return nil, "", nil, nil, err
	}
	heads, err := selectHeads(s, layer, head, name)
	if err != nil {
		return nil, "", nil, nil, err
	}
	m, err := newModel(s, name, *pf.maxMem)
	if err != nil {
		return nil, "", nil, nil, err
	}
	return s, name, heads, m, nil
}
