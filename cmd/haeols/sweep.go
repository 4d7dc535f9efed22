package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/core/sample"
)

const sweepUsage = `
Usage: haeols sweep [-ratios 0.1,0.2,0.3,0.5] [-methods all] [-csv FILE] [-json FILE] [-workers N] [FILE]

Runs every method at every ratio on every head (or those picked by -layer and
-head), on all cores: each KV head is analysed once and shared by all
ratios and methods. Prints a summary table to stdout: per method and ratio,
the mean err over the heads and the largest err of one head ("mean / max";
"*" marks the lowest mean at each ratio, "n/a" a method that cannot fit the
ratio). -csv writes one row per ratio, method, layer and head with every
metric; -json writes {sample, params, metric, ratios, methods, results,
skipped, summary}. The output does not depend on -workers. A progress bar is
drawn on stderr when stderr is a terminal.

On an attention-only sample (attn, no q/k/v) err is the lost attention mass
(the CSV's metric column and the JSON's "metric" say "lost-mass"), and the
methods that need keys and values are n/a ("needs q/k/v").

Example:
  haeols sweep -ratios 0.1,0.2,0.3,0.5 -csv sweep.csv samples/default.safetensors
`

func cmdSweep(e *env, args []string) error {
	fs := newFlags("sweep")
	ratiosFlag := fs.String("ratios", "0.1,0.2,0.3,0.5", "comma-separated compression ratios in (0, 1]")
	methodsFlag := fs.String("methods", "all", methodsHelp())
	csvPath := fs.String("csv", "", "write one CSV row per ratio, method, layer and head to this file")
	jsonPath := fs.String("json", "", "write the results as JSON to this file")
	workers := fs.Int("workers", 0, "goroutines (0: all CPUs)")
	layer := fs.Int("layer", -1, "only this layer (-1: all)")
	head := fs.Int("head", -1, "only this query head (-1: all)")
	pf := addParamFlags(fs)
	pos, err := parse(e, fs, args, sweepUsage, 1)
	if err != nil {
		return err
	}
	ratios, err := parseRatios("ratios", *ratiosFlag)
	if err != nil {
		return err
	}
	methods, err := parseMethods(*methodsFlag)
	if err != nil {
		return err
	}
	if _, err := pf.params(ratios[0]); err != nil {
		return err
	}
	s, name, heads, m, err := openModel(e, pos, *layer, *head, *workers, pf)
	if err != nil {
		return err
	}
	if err := checkOutputs([]string{name}, [2]string{"csv", *csvPath}, [2]string{"json", *jsonPath}); err != nil {
		return err
	}
	prog, endProg := progressBar(e, "sweep")
	cells, err := evaluate(m, name, heads, ratios, methods, pf.params, *workers, prog)
	endProg()
	if err != nil {
		return err
	}
	if *csvPath != "" {
		err := writeOutput("csv", *csvPath, e.stdout, []string{name}, func(w io.Writer) error {
			return writeSweepCSV(w, metricOf(s), heads, cells)
		})
		if err != nil {
			return err
		}
	}
	if *jsonPath != "" {
		p, _ := pf.params(ratios[0])
		err := writeOutput("json", *jsonPath, e.stdout, []string{name}, func(w io.Writer) error {
			return writeSweepJSON(w, s, name, toJSONParams(p), ratios, methods, cells)
		})
		if err != nil {
			return err
		}
	}
	w := e.reportTo(*csvPath, *jsonPath)
	if metricOf(s) == core.MetricLostMass {
		fmt.Fprint(w, lostMassNote)
	}
	fmt.Fprintf(w, "%s: %s over %d head(s), mean / max of one head\n", quotePath(name), errName(metricOf(s)), len(heads))
	printSweepSummary(w, ratios, methods, cells)
	return nil
}

// sweepColumns are the CSV columns.
var sweepColumns = []string{"ratio", "method", "layer", "head", "status", "ratio_used", "err", "err_max", "err_p95", "err_cal", "cos", "needle_err", "row_entropy", "metric"}

// csvFloat formats exactly (shortest round-trip), empty for NaN.
func csvFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// writeSweepCSV writes one row per ratio, method, layer and head; a method
// that does not fit has status "n/a: ..." and empty metrics. The last
// column says what err measures (core.MetricOutput or MetricLostMass).
func writeSweepCSV(w io.Writer, metric string, heads []headID, cells []cell) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(sweepColumns); err != nil {
		return err
	}
	for _, c := range cells {
		for i, hd := range heads {
			row := []string{csvFloat(c.Ratio), c.Method, strconv.Itoa(hd.l), strconv.Itoa(hd.h)}
			if c.Metrics == nil {
				row = append(row, "n/a: "+c.NA, "", "", "", "", "", "", "", "", metric)
			} else {
				m := c.Metrics[i]
				row = append(row, "ok", csvFloat(m.Ratio), csvFloat(m.Err), csvFloat(m.ErrMax), csvFloat(m.ErrP95),
					csvFloat(m.ErrCal), csvFloat(m.Cos), csvFloat(m.NeedleErr), csvFloat(m.RowEntropy), m.Metric)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// sweepDoc is the JSON document of haeols sweep -json.
type sweepDoc struct {
	Sample  sampleInfo     `json:"sample"`
	Params  jsonParams     `json:"params"`
	Metric  string         `json:"metric"` // what err measures: "output" or "lost-mass"
	Ratios  []float64      `json:"ratios"`
	Methods []string       `json:"methods"`
	Results []core.Metrics `json:"results"`
	Skipped []sweepSkipped `json:"skipped"`
	Summary []sweepSummary `json:"summary"`
}

type sweepSkipped struct {
	Ratio  float64 `json:"ratio"`
	Method string  `json:"method"`
	Reason string  `json:"reason"`
}

type sweepSummary struct {
	Ratio   float64    `json:"ratio"`
	Method  string     `json:"method"`
	MeanErr result.Num `json:"mean_err"`
	MaxErr  result.Num `json:"max_err"`
}

func writeSweepJSON(w io.Writer, s *sample.Sample, name string, p jsonParams, ratios []float64, methods []string, cells []cell) error {
	p.Ratio = 0 // per result
	doc := sweepDoc{Sample: describe(s, name), Params: p, Metric: metricOf(s), Ratios: ratios, Methods: methods,
		Results: []core.Metrics{}, Skipped: []sweepSkipped{}}
	for _, c := range cells {
		doc.Summary = append(doc.Summary, sweepSummary{Ratio: c.Ratio, Method: c.Method, MeanErr: result.Num(c.Mean()), MaxErr: result.Num(c.Max())})
		if c.Metrics == nil {
			doc.Skipped = append(doc.Skipped, sweepSkipped{Ratio: c.Ratio, Method: c.Method, Reason: c.NA})
			continue
		}
		doc.Results = append(doc.Results, c.Metrics...)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}

// printSweepSummary prints the method x ratio table of mean / max err.
func printSweepSummary(w io.Writer, ratios []float64, methods []string, cells []cell) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var hdr strings.Builder
	hdr.WriteString("method\t")
	for _, r := range ratios {
		fmt.Fprintf(&hdr, "ratio %g\t", r)
	}
	fmt.Fprintln(tw, hdr.String())
	best := make([]int, len(ratios))
	for ri := range ratios {
		best[ri] = -1
		for mi, name := range methods {
			c := &cells[ri*len(methods)+mi]
			if name == "full" || c.Metrics == nil {
				continue
			}
			if best[ri] < 0 || c.Mean() < cells[ri*len(methods)+best[ri]].Mean() {
				best[ri] = mi
			}
		}
	}
	for mi, name := range methods {
		var row strings.Builder
		row.WriteString(name + "\t")
		for ri := range ratios {
			c := &cells[ri*len(methods)+mi]
			if c.Metrics == nil {
				row.WriteString("n/a\t")
				continue
			}
			mark := " "
			if best[ri] == mi {
				mark = "*"
			}
			fmt.Fprintf(&row, "%s / %s%s\t", fmtFloat(c.Mean()), fmtFloat(c.Max()), mark)
		}
		fmt.Fprintln(tw, row.String())
	}
	tw.Flush()
	for mi, name := range methods {
		var at []string
		reason := ""
		for ri, r := range ratios {
			if c := &cells[ri*len(methods)+mi]; c.Metrics == nil {
				at = append(at, strconv.FormatFloat(r, 'g', -1, 64))
				reason = c.NA
			}
		}
		if len(at) > 0 {
			fmt.Fprintf(w, "n/a: %s at ratio %s: %s\n", name, strings.Join(at, ", "), reason)
		}
	}
}
