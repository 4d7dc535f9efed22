package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/gpu"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/core/verify"
)

const verifyUsage = `
Usage: haeols verify [-gpu] [-require-gpu] [-sizes 1K,4K] [-all] [-json] [FILE...]

Runs the kernels of HAE-OLS on real inputs through a float64 reference, the
CPU float32 kernels and, when a GPU adapter exists, the WGSL kernels on the
GPU (WebGPU through wgpu-native: Vulkan, Metal, DX12 or GL), and prints per
kernel output the largest absolute and relative deviation from float64 and
the largest deviation in units of its stated tolerance (tol; at most 1
passes; the tolerances are documented in package core/verify). With a GPU it
then analyses the same heads on the CPU and on the GPU and compares err,
err_cal, cos and the used ratio of every method at -ratios, head by head.

Inputs: the FILEs (.safetensors, .npz, .npy samples with q/k/v), and/or
generated samples of prefix length n for each of -sizes (the "default" preset
with one layer and 64 probes; 1K = 1024; 64K, the generator's limit, has
65472 cached tokens); with neither, the shipped samples (samples/*.safetensors
in the working directory) or, without those, the built-in default sample.
Each file is checked on every KV head with -all, else on KV head 0 of its
middle layer; generated sizes on their one KV head.

Without an adapter (or in a binary built with CGO_ENABLED=0) the GPU columns
are absent, the fallback is reported on stderr, and only the CPU is checked;
-require-gpu makes that an error instead. -gpu=false skips the GPU.

Exit codes: 0 every deviation within tolerance; 1 a deviation past its
tolerance, a missing adapter with -require-gpu, or an unreadable file; 2 bad
flags.

Example:
  haeols verify                                 # the shipped samples
  haeols verify samples/default.safetensors samples/needle.safetensors
  haeols verify -require-gpu -sizes 1K,4K,16K,64K -json > verify.json
`

func cmdVerify(e *env, args []string) error {
	fs := newFlags("verify")
	useGPU := fs.Bool("gpu", true, "run the GPU kernels when an adapter exists")
	requireGPU := fs.Bool("require-gpu", false, "fail (exit 1) when no GPU adapter exists")
	backend := fs.String("backend", "", "GPU backend: vulkan, gl, metal or dx12 (default: any)")
	fallback := fs.Bool("fallback", false, "ask for the software (fallback) adapter")
	sizes := fs.String("sizes", "", "generated prefix lengths to check, e.g. 1K,4K,16K,64K")
	all := fs.Bool("all", false, "check every KV head of every layer of a FILE")
	methodsFlag := fs.String("methods", "all", methodsHelp())
	ratiosFlag := fs.String("ratios", "0.1,0.3,1", "ratios at which the CPU and GPU metrics are compared")
	asJSON := fs.Bool("json", false, "print a JSON document instead of tables")
	pos, err := parse(e, fs, args, verifyUsage, -1)
	if err != nil {
		return err
	}
	if !slices.Contains(gpu.Backends, *backend) {
		return usagef("-backend %q: want one of vulkan, gl, metal, dx12", *backend)
	}
	ns, err := parseSizes(*sizes)
	if err != nil {
		return err
	}
	methods, err := parseMethods(*methodsFlag)
	if err != nil {
		return err
	}
	ratios, err := parseRatios("ratios", *ratiosFlag)
	if err != nil {
		return err
	}

	var dev *gpu.Device
	if *useGPU || *requireGPU {
		dev, err = gpu.Open(gpu.Options{Backend: *backend, Fallback: *fallback})
		if err != nil {
			if *requireGPU {
				return fmt.Errorf("-require-gpu: %w", err)
			}
			fmt.Fprintf(e.stderr, "haeols: verify: %v; falling back to the CPU kernels only\n", err)
		} else {
			defer dev.Close()
			fmt.Fprintf(e.stderr, "haeols: verify: GPU adapter: %s\n", dev.Info())
		}
	}

	type job struct {
		name  string
		s     *sample.Sample
		l, kv int
	}
	var jobs []job
	for _, f := range pos {
		s, err := sample.Read(f)
		if err != nil {
			return err
		}
		if !s.HasQKV() {
			return fmt.Errorf("%s: attention-only sample: verify needs q, k and v", f)
		}
		if *all {
			for l := 0; l < s.L; l++ {
				for kv := 0; kv < s.KVHeads(); kv++ {
					jobs = append(jobs, job{f, s, l, kv})
				}
			}
		} else {
			jobs = append(jobs, job{f, s, s.L / 2, 0})
		}
	}
	for _, n := range ns {
		s, err := sizedSample(n)
		if err != nil {
			return err
		}
		jobs = append(jobs, job{fmt.Sprintf("generated n=%d", n), s, 0, 0})
	}
	if len(jobs) == 0 {
		// No input named: the shipped samples when they are here, else
		// the built-in default.
		shipped, _ := filepath.Glob(filepath.Join("samples", "*.safetensors"))
		if len(shipped) > 0 {
			fmt.Fprintf(e.stderr, "haeols: verify: no FILE given; checking the shipped samples %s\n", strings.Join(shipped, ", "))
		}
		for _, f := range shipped {
			s, err := sample.Read(f)
			if err != nil {
				return err
			}
			if s.HasQKV() {
				jobs = append(jobs, job{f, s, s.L / 2, 0})
			}
		}
		if len(jobs) == 0 {
			s, name, err := loadSample(e, nil)
			if err != nil {
				return err
			}
			jobs = append(jobs, job{name, s, s.L / 2, 0})
		}
	}

	type result struct {
		*verify.Report
		Seconds float64 `json:"seconds"`
	}
	var results []result
	pass := true
	for _, j := range jobs {
		t0 := time.Now()
		r, err := verify.Group(j.s, j.name, j.l, j.kv, dev, verify.Options{Methods: methods, Ratios: ratios})
		if err != nil {
			return err
		}
		results = append(results, result{r, time.Since(t0).Seconds()})
		pass = pass && r.Pass
		if !*asJSON {
			printVerify(e.stdout, r)
		}
	}
	if *asJSON {
		doc := struct {
			Adapter   *gpu.Info `json:"adapter"`
			Fallback  bool      `json:"cpu_only"`
			MetricTol float64   `json:"metric_tol"`
			Pass      bool      `json:"pass"`
			Results   []result  `json:"results"`
		}{Fallback: dev == nil, MetricTol: verify.MetricTol, Pass: pass, Results: results}
		if dev != nil {
			info := dev.Info()
			doc.Adapter = &info
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	}
	if !pass {
		return errors.New("verify: deviations past tolerance (rows marked FAIL)")
	}
	return nil
}

// parseSizes reads "1K,4K,1000" (K = 1024).
func parseSizes(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mul := 1
		if strings.HasSuffix(f, "K") || strings.HasSuffix(f, "k") {
			mul, f = 1024, f[:len(f)-1]
		}
		v, err := strconv.Atoi(f)
		if err != nil || v*mul < 128 || v*mul > gen.MaxTokens {
			return nil, usagef("-sizes: %q is not a prefix length in [128, 64K] (e.g. 4K)", f)
		}
		out = append(out, v*mul)
	}
	return out, nil
}

// sizedSample generates the default preset with one layer and a prefix of
// n tokens (n - 64 at the generator's limit of 64K positions, so that
// "64K" is 65472 cached tokens and 64 probes).
func sizedSample(n int) (*sample.Sample, error) {
	c, err := gen.DefaultConfig("default")
	if err != nil {
		return nil, err
	}
	c.Layers = 1
	c.Tokens = min(n+c.Probes, gen.MaxTokens)
	s, err := gen.Generate(c)
	if err != nil {
		return nil, fmt.Errorf("generating n=%d: %w", n, err)
	}
	return s, nil
}

func printVerify(w io.Writer, r *verify.Report) {
	fmt.Fprintf(w, "%s, layer %d, KV head %d: %d query heads, %d calibration rows, n = %d, d = %d, %d probes\n",
		r.Sample, r.Layer, r.KV, r.Heads, r.Rows, r.N, r.D, r.T)
	if r.Adapter != nil {
		fmt.Fprintf(w, "GPU: %s\n", r.Adapter)
	} else {
		fmt.Fprintln(w, "GPU: none (CPU kernels only)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\toutput\tcpu abs\tcpu rel\tcpu tol\tgpu abs\tgpu rel\tgpu tol\t|gpu-cpu|\t\t")
	g := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.2e", *p)
	}
	tol := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	for _, k := range r.Kernels {
		fmt.Fprintf(tw, "%s\t%s\t%.2e\t%.2e\t%.3f\t%s\t%s\t%s\t%s\t%s\t\n", k.Kernel, k.Output, k.CPUAbs, k.CPURel, k.CPUTol,
			g(k.GPUAbs), g(k.GPURel), tol(k.GPUTol), g(k.GPUvsCPU), okFail(k.Pass))
	}
	tw.Flush()
	if len(r.Metrics) > 0 {
		fmt.Fprintf(w, "metrics, analysis on the CPU vs on the GPU (largest per-head |difference|; tolerance %.0e, exactly 0 at ratio 1):\n", verify.MetricTol)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tratio\terr cpu\terr gpu\terr\terr_cal\tcos\tratio used\t\t")
		for i := 0; i+4 <= len(r.Metrics); i += 4 {
			ms := r.Metrics[i : i+4] // err, err_cal, cos, ratio
			ok := ms[0].Pass && ms[1].Pass && ms[2].Pass && ms[3].Pass
			fmt.Fprintf(tw, "%s\t%g\t%.6f\t%.6f\t%.1e\t%.1e\t%.1e\t%.1e\t%s\t\n", ms[0].Method, ms[0].Ratio, ms[0].CPU, ms[0].GPU,
				ms[0].MaxAbs, ms[1].MaxAbs, ms[2].MaxAbs, ms[3].MaxAbs, okFail(ok))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "%s\n\n", map[bool]string{true: "PASS", false: "FAIL"}[r.Pass])
}

func okFail(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}
