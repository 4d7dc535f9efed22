//go:build js && wasm

// Command verify is `haeols verify` in the browser (verify.html): it runs
// the kernels of HAE-OLS on a generated and a shipped sample through the float64
// reference, the CPU float32 kernels (in WebAssembly) and the WGSL kernels
// on this browser's GPU through WebGPU, and shows per kernel the largest
// deviation and whether it is within the stated tolerance. Without WebGPU it
// checks the CPU kernels and says so. The result is also left in
// window.haeolsVerify as JSON (for tests and for copying).
package main

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"syscall/js"
	"time"

	"github.com/cogentcore/webgpu/jsx"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/gpu"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/core/verify"
)

// result is what the page shows and leaves in window.haeolsVerify.
type result struct {
	Adapter   *gpu.Info        `json:"adapter"`
	CPUOnly   bool             `json:"cpu_only"`
	Fallback  string           `json:"fallback,omitempty"`
	Pass      bool             `json:"pass"`
	Reports   []*verify.Report `json:"reports"`
	Seconds   float64          `json:"seconds"`
	Error     string           `json:"error,omitempty"`
	MetricTol float64          `json:"metric_tol"`
}

func main() {
	doc := js.Global().Get("document")
	out := doc.Call("getElementById", "out")
	status := doc.Call("getElementById", "status")
	say := func(s string) { status.Set("textContent", s) }

	// ?presets=default,needle picks generator presets and
	// ?files=samples/stories260K.safetensors shipped sample files of this
	// site (the default: the "default" preset and the real-model sample).
	presets := []string{"default"}
	files := []string{"samples/stories260K.safetensors"}
	if q, err := url.ParseQuery(strings.TrimPrefix(js.Global().Get("location").Get("search").String(), "?")); err == nil {
		if p, ok := q["presets"]; ok {
			presets = splitList(p[0])
		}
		if f, ok := q["files"]; ok {
			files = splitList(f[0])
		}
	}
	t0 := time.Now()
	res := &result{Pass: true, MetricTol: verify.MetricTol}
	say("Opening WebGPU…")
	dev, err := gpu.Open(gpu.Options{})
	if err != nil {
		res.CPUOnly, res.Fallback = true, strings.TrimPrefix(err.Error(), "gpu: ")
	} else {
		info := dev.Info()
		res.Adapter = &info
		defer dev.Close()
	}
	type input struct {
		name string
		load func() (*sample.Sample, error)
	}
	var inputs []input
	for _, p := range presets {
		inputs = append(inputs, input{"preset " + p, func() (*sample.Sample, error) {
			cfg, err := gen.DefaultConfig(p)
			if err != nil {
				return nil, err
			}
			return gen.Generate(cfg)
		}})
	}
	for _, f := range files {
		inputs = append(inputs, input{f, func() (*sample.Sample, error) {
			if !strings.HasPrefix(f, "samples/") || strings.Contains(f, "..") {
				return nil, fmt.Errorf("%s: only the site's samples/ files", f)
			}
			b, err := fetch(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			return sample.Decode(f, b)
		}})
	}
	for _, in := range inputs {
		say(fmt.Sprintf("Checking %s…", in.name))
		s, err := in.load()
		if err == nil {
			var r *verify.Report
			r, err = verify.Group(s, in.name, s.L/2, 0, dev, verify.Options{Methods: []string{"hae-ols", "topk", "full"}, Ratios: []float64{0.3, 1}})
			if err == nil {
				res.Reports = append(res.Reports, r)
				res.Pass = res.Pass && r.Pass
			}
		}
		if err != nil {
			res.Error, res.Pass = err.Error(), false
			break
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	b, _ := json.Marshal(res)
	js.Global().Set("haeolsVerify", string(b))
	out.Set("innerHTML", render(res))
	verdict := "PASS: every kernel within its tolerance"
	if !res.Pass {
		verdict = "FAIL"
	}
	say(fmt.Sprintf("%s (%.1f s).", verdict, res.Seconds))
	select {}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// fetch gets a file of this site.
func fetch(u string) ([]byte, error) {
	resp, ok := jsx.Await(js.Global().Call("fetch", u))
	if !ok {
		return nil, fmt.Errorf("fetch failed")
	}
	if !resp.Get("ok").Bool() {
		return nil, fmt.Errorf("HTTP %d", resp.Get("status").Int())
	}
	ab, ok := jsx.Await(resp.Call("arrayBuffer"))
	if !ok {
		return nil, fmt.Errorf("reading the body failed")
	}
	u8 := js.Global().Get("Uint8Array").New(ab)
	b := make([]byte, u8.Get("length").Int())
	js.CopyBytesToGo(b, u8)
	return b, nil
}

func render(r *result) string {
	var b strings.Builder
	e := html.EscapeString
	if r.Adapter != nil {
		fmt.Fprintf(&b, "<p>GPU: <b>%s</b>", e(r.Adapter.String()))
		if r.Adapter.Software {
			b.WriteString(" (a software adapter)")
		}
		b.WriteString("</p>")
	} else {
		msg := r.Fallback
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		fmt.Fprintf(&b, "<p class=warn>%s. Only the CPU kernels (WebAssembly) were checked.</p>", e(msg))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "<p class=warn>%s</p>", e(r.Error))
	}
	g := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.2e", *p)
	}
	tol := func(p *float64) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", *p)
	}
	for _, rep := range r.Reports {
		fmt.Fprintf(&b, "<h2>%s, layer %d: %d query heads, n = %d, d = %d</h2>", e(rep.Sample), rep.Layer, rep.Heads, rep.N, rep.D)
		b.WriteString("<table><tr><th>kernel</th><th>output</th><th>CPU max abs dev</th><th>CPU / tol</th><th>GPU max abs dev</th><th>GPU / tol</th><th>|GPU−CPU|</th><th></th></tr>")
		for _, k := range rep.Kernels {
			ok := "ok"
			if !k.Pass {
				ok = "<b class=warn>FAIL</b>"
			}
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%.2e</td><td>%.3f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>",
				e(k.Kernel), e(k.Output), k.CPUAbs, k.CPUTol, g(k.GPUAbs), tol(k.GPUTol), g(k.GPUvsCPU), ok)
		}
		b.WriteString("</table>")
		if len(rep.Metrics) > 0 {
			b.WriteString("<table><tr><th>method</th><th>ratio</th><th>metric</th><th>CPU</th><th>GPU</th><th>max |diff| per head</th><th></th></tr>")
			for _, m := range rep.Metrics {
				ok := "ok"
				if !m.Pass {
					ok = "<b class=warn>FAIL</b>"
				}
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%g</td><td>%s</td><td>%.6f</td><td>%.6f</td><td>%.1e</td><td>%s</td></tr>", e(m.Method), m.Ratio, e(m.Metric), m.CPU, m.GPU, m.MaxAbs, ok)
			}
			b.WriteString("</table>")
		}
	}
	return b.String()
}
