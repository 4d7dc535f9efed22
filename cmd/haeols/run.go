package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/core/sample"
)

const runUsage = `
Usage: haeols run [-ratio 0.3] [-methods all] [-layer L] [-head H] [-json] [FILE]

Compresses the cache of every head (or the one picked by -layer/-head) at one
ratio with each method and prints, per head and method, the held-out errors:
err (mean relative output error over the probe queries), err_max, err_p95,
err_cal (on the calibration queries), cos, the ratio actually used and
needle_err (err on the probe queries that ask for a needle, "-" when the
sample marks none). Then the mean over the heads per method (the model-level
number is the mean err). A method that cannot fit the ratio at all is shown
as "n/a (needs ratio >= x)". -json prints one JSON document instead:
{sample, params, metric, methods, results: [per head and method], means,
skipped}.

An attention-only sample (attn, no q/k/v) is measured by the lost attention
mass instead (columns lost_mass, lost_max, ...; "metric": "lost-mass" in
JSON): 1 - the attention each query keeps on the prefix tokens kept exactly
and on the suffix. The methods that need keys and values show
"n/a (needs q/k/v)".

Example:
  haeols run -ratio 0.3 -methods hae-ols,topk,snapkv samples/default.safetensors
  haeols run -layer 0 -head 2 -json needle.safetensors
`

func cmdRun(e *env, args []string) error {
	fs := newFlags("run")
	ratio := fs.Float64("ratio", core.DefaultRatio, "compression ratio in (0, 1]: memory kept over full memory")
	methodsFlag := fs.String("methods", "all", methodsHelp())
	layer := fs.Int("layer", -1, "only this layer (-1: all)")
	head := fs.Int("head", -1, "only this query head (-1: all)")
	asJSON := fs.Bool("json", false, "print a JSON document instead of tables")
	workers := fs.Int("workers", 0, "goroutines (0: all CPUs)")
	pf := addParamFlags(fs)
	pos, err := parse(e, fs, args, runUsage, 1)
	if err != nil {
		return err
	}
	if err := checkRatio("ratio", *ratio); err != nil {
		return err
	}
	methods, err := parseMethods(*methodsFlag)
	if err != nil {
		return err
	}
	p, err := pf.params(*ratio)
	if err != nil {
		return err
	}
	s, name, heads, m, err := openModel(e, pos, *layer, *head, *workers, pf)
	if err != nil {
		return err
	}
	cells, err := evaluate(m, name, heads, []float64{*ratio}, methods, pf.params, *workers, nil)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeRunJSON(e.stdout, s, name, p, methods, cells)
	}
	printRunTables(e.stdout, metricOf(s), heads, cells)
	return nil
}

// errColumns are the names of the err, err_max, err_p95, err_cal and
// needle_err columns: lost_* for lost attention mass.
func errColumns(metric string) [5]string {
	if metric == core.MetricLostMass {
		return [5]string{"lost_mass", "lost_max", "lost_p95", "lost_cal", "needle_lost"}
	}
	return [5]string{"err", "err_max", "err_p95", "err_cal", "needle_err"}
}

// printRunTables prints the per-head table and the per-method means.
func printRunTables(w io.Writer, metric string, heads []headID, cells []cell) {
	cn := errColumns(metric)
	if metric == core.MetricLostMass {
		fmt.Fprint(w, lostMassNote+"\n")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "layer\thead\tmethod\t%s\t%s\t%s\t%s\tcos\tratio\t%s\t\n", cn[0], cn[1], cn[2], cn[3], cn[4])
	for i, hd := range heads {
		for _, c := range cells {
			if c.Metrics == nil {
				fmt.Fprintf(tw, "%d\t%d\t%s\tn/a (%s)\t\t\t\t\t\t\t\n", hd.l, hd.h, c.Method, c.NA)
				continue
			}
			mt := c.Metrics[i]
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t\n", hd.l, hd.h, c.Method,
				fmtFloat(mt.Err), fmtFloat(mt.ErrMax), fmtFloat(mt.ErrP95), fmtFloat(mt.ErrCal), fmtFloat(mt.Cos), mt.Ratio, fmtFloat(mt.NeedleErr))
		}
	}
	tw.Flush()
	budget := ""
	if b := cells[0].Params.Budget; !core.IsUniform(b) {
		budget = ", the memory shared among KV heads by -budget " + b + " (each head's share in its ratio column)"
	}
	fmt.Fprintf(w, "\nMean over %d head(s) at ratio %g%s (the model-level number is the mean %s):\n", len(heads), cells[0].Ratio, budget, cn[0])
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "method\t%s\t%s\tworst %s\t%s\tcos\tratio\t%s\t\n", cn[0], cn[1], cn[1], cn[3], cn[4])
	for _, c := range cells {
		if c.Metrics == nil {
			fmt.Fprintf(tw, "%s\tn/a (%s)\t\t\t\t\t\t\t\n", c.Method, c.NA)
			continue
		}
		a := aggregate(c.Metrics)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t\n", c.Method, fmtFloat(a.Err), fmtFloat(a.ErrMax), fmtFloat(a.WorstErrMax),
			fmtFloat(a.ErrCal), fmtFloat(a.Cos), a.Ratio, fmtFloat(a.NeedleErr))
	}
	tw.Flush()
}

// means are per-method aggregates over heads.
type means struct {
	Err         float64 `json:"err"`
	ErrMax      float64 `json:"err_max"`
	WorstErrMax float64 `json:"worst_err_max"`
	ErrP95      float64 `json:"err_p95"`
	ErrCal      float64 `json:"err_cal"`
	Cos         float64 `json:"cos"`
	Ratio       float64 `json:"ratio"`
	NeedleErr   float64 `json:"needle_err"` // NaN when no head has one
}

// aggregate averages the metrics over heads (NeedleErr over the heads that
// have one); WorstErrMax is the largest err_max.
func aggregate(ms []core.Metrics) means {
	var a means
	var nk int
	for _, m := range ms {
		a.Err += m.Err
		a.ErrMax += m.ErrMax
		a.WorstErrMax = max(a.WorstErrMax, m.ErrMax)
		a.ErrP95 += m.ErrP95
		a.ErrCal += m.ErrCal
		a.Cos += m.Cos
		a.Ratio += m.Ratio
		if !math.IsNaN(m.NeedleErr) {
			a.NeedleErr += m.NeedleErr
			nk++
		}
	}
	n := float64(len(ms))
	a.Err /= n
	a.ErrMax /= n
	a.ErrP95 /= n
	a.ErrCal /= n
	a.Cos /= n
	a.Ratio /= n
	if nk == 0 {
		a.NeedleErr = math.NaN()
	} else {
		a.NeedleErr /= float64(nk)
	}
	return a
}

// jsonMeans is means with NaN as null.
type jsonMeans struct {
	means
	Cos       result.Num `json:"cos"`
	NeedleErr result.Num `json:"needle_err"`
}

// sampleInfo describes the sample in JSON output.
type sampleInfo struct {
	Name   string     `json:"name"`
	Model  string     `json:"model,omitempty"`
	Source string     `json:"source,omitempty"`
	L      int        `json:"layers"`
	H      int        `json:"heads"`
	HKV    int        `json:"kv_heads"`
	N      int        `json:"positions"`
	D      int        `json:"dim"`
	Prefix int        `json:"prefix"`
	Probes int        `json:"probes"`
	Scale  result.Num `json:"scale"` // null for an attention-only sample without one
}

func describe(s *sample.Sample, name string) sampleInfo {
	return sampleInfo{Name: name, Model: s.Meta.Model, Source: s.Meta.Source, L: s.L, H: s.H, HKV: s.HKV, N: s.N, D: s.D,
		Prefix: s.Prefix(), Probes: s.N - s.Prefix(), Scale: result.Num(s.Scale())}
}

// jsonParams is core.Params with JSON names.
type jsonParams struct {
	Ratio     float64 `json:"ratio,omitempty"`
	Lambda    float64 `json:"lambda"`
	Phi       float64 `json:"phi"`
	Tau       float64 `json:"tau"`
	Sinks     int     `json:"sinks"`
	Recent    int     `json:"recent"`
	Summaries int     `json:"summaries"`
	Budget    string  `json:"budget"`
}

func toJSONParams(p core.Params) jsonParams {
	b := p.Budget
	if b == "" {
		b = core.BudgetUniform
	}
	return jsonParams{Ratio: p.Ratio, Lambda: p.Lambda, Phi: p.Phi, Tau: p.Tau, Sinks: p.Sinks, Recent: p.Recent, Summaries: p.Summaries, Budget: b}
}

// runDoc is the JSON document of haeols run -json.
type runDoc struct {
	Sample  sampleInfo            `json:"sample"`
	Params  jsonParams            `json:"params"`
	Metric  string                `json:"metric"` // what err measures: "output" or "lost-mass"
	Methods []string              `json:"methods"`
	Results []core.Metrics        `json:"results"`
	Means   map[string]*jsonMeans `json:"means"`   // null for a method that does not fit
	Skipped map[string]string     `json:"skipped"` // method: why it does not fit
}

func writeRunJSON(w io.Writer, s *sample.Sample, name string, p core.Params, methods []string, cells []cell) error {
	doc := runDoc{Sample: describe(s, name), Params: toJSONParams(p), Metric: metricOf(s), Methods: methods,
		Results: []core.Metrics{}, Means: map[string]*jsonMeans{}, Skipped: map[string]string{}}
	for _, c := range cells {
		if c.Metrics == nil {
			doc.Means[c.Method] = nil
			doc.Skipped[c.Method] = c.NA
			continue
		}
		a := aggregate(c.Metrics)
		doc.Means[c.Method] = &jsonMeans{means: a, Cos: result.Num(a.Cos), NeedleErr: result.Num(a.NeedleErr)}
	}
	// Results head-major, methods in order, as in the table.
	for i := range maxMetrics(cells) {
		for _, c := range cells {
			if c.Metrics != nil {
				doc.Results = append(doc.Results, c.Metrics[i])
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("%s: encoding JSON: %w", quotePath(name), err)
	}
	return nil
}

func maxMetrics(cells []cell) int {
	n := 0
	for _, c := range cells {
		n = max(n, len(c.Metrics))
	}
	return n
}
