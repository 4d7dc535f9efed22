package e2e

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// gpuRequired is set in CI, where Chromium's SwiftShader gives WebGPU a
// software adapter: there a missing adapter is a failure.
var gpuRequired = os.Getenv("HAEOLS_REQUIRE_GPU") == "1" && runtime.GOOS != "js"

type verifyPage struct {
	Adapter *struct {
		Name     string `json:"name"`
		Software bool   `json:"software"`
	} `json:"adapter"`
	CPUOnly  bool   `json:"cpu_only"`
	Fallback string `json:"fallback"`
	Pass     bool   `json:"pass"`
	Error    string `json:"error"`
	Seconds  float64
	Reports  []struct {
		Sample  string
		Kernels []struct {
			Kernel string   `json:"kernel"`
			Output string   `json:"output"`
			GPUTol *float64 `json:"gpu_tol"`
			Pass   bool     `json:"pass"`
		}
		Metrics []struct {
			Method string
			Pass   bool
		}
	}
}

func runVerifyPage(t *testing.T, b *Browser, site *Site) verifyPage {
	t.Helper()
	b.Navigate(site.URL + "verify.html")
	b.WaitFor("window.haeolsVerify", 4*time.Minute, "document.getElementById('status').textContent")
	var v verifyPage
	if err := json.Unmarshal([]byte(MustEval[string](b, "window.haeolsVerify")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVerifyPageWebGPU runs every WGSL kernel through WebGPU in Chromium
// (verify.html: core/verify on the "default" preset) and requires each
// output to agree with float64 within its tolerance, like `haeols verify`
// natively, and the metrics of an analysis on the GPU to match the CPU's.
func TestVerifyPageWebGPU(t *testing.T) {
	site := StartSite(t)
	b := NewBrowserWebGPU(t)
	v := runVerifyPage(t, b, site)
	b.Screenshot("verify-webgpu")
	if v.CPUOnly {
		if gpuRequired {
			t.Fatalf("no WebGPU adapter in Chromium with --enable-unsafe-webgpu: %s", v.Fallback)
		}
		t.Skipf("no WebGPU adapter: %s", v.Fallback)
	}
	if !v.Pass || v.Error != "" || len(v.Reports) != 2 {
		t.Fatalf("verify page: pass %v, error %q, %d reports", v.Pass, v.Error, len(v.Reports))
	}
	seen := map[string]bool{}
	for _, r := range v.Reports {
		for _, k := range r.Kernels {
			seen[k.Kernel] = true
			if k.GPUTol == nil || !k.Pass {
				t.Errorf("%s %s: gpu tol %v, pass %v", r.Sample, k.Output, k.GPUTol, k.Pass)
			}
		}
		if len(r.Metrics) == 0 {
			t.Errorf("%s: no CPU-vs-GPU metrics", r.Sample)
		}
	}
	for _, k := range []string{"logits", "softmax", "columns", "rowentropy", "weighted", "features", "attend", "errors"} {
		if !seen[k] {
			t.Errorf("kernel %s not checked in the browser", k)
		}
	}
	t.Logf("WebGPU adapter %q (software %v): every kernel within tolerance in %.1f s", v.Adapter.Name, v.Adapter.Software, v.Seconds)
}

// TestVerifyPageWithoutWebGPU: in a browser without a GPU the page checks
// the CPU kernels and says that it fell back.
func TestVerifyPageWithoutWebGPU(t *testing.T) {
	site := StartSite(t)
	b := NewBrowser(t)
	v := runVerifyPage(t, b, site)
	if !v.CPUOnly || v.Fallback == "" || !v.Pass {
		t.Fatalf("without WebGPU: cpu_only %v, fallback %q, pass %v", v.CPUOnly, v.Fallback, v.Pass)
	}
	text := MustEval[string](b, "document.body.innerText")
	if !strings.Contains(text, "No GPU") {
		t.Errorf("the page does not say there is no GPU: %q", text[:min(300, len(text))])
	}
	b.Screenshot("verify-no-webgpu")
}

// TestAppComputeOnGPU opens the app with compute=gpu in Chromium with
// WebGPU: the note names the adapter, the grid is computed on it and shows
// the numbers the CPU shows after switching back with the control.
func TestAppComputeOnGPU(t *testing.T) {
	appSetup(t)
	site := StartSite(t)
	b := NewBrowserWebGPU(t)
	b.Navigate(site.URL + "index.html?compute=gpu")
	b.WaitFor(`document.getElementById("compute-note").textContent.trim() !== "" &&
		!document.getElementById("compute-note").textContent.includes("starting")`, 90*time.Second, `document.getElementById("compute-note").textContent`)
	note := MustEval[string](b, `document.getElementById("compute-note").textContent`)
	if !strings.HasPrefix(note, "on ") {
		if gpuRequired {
			t.Fatalf("compute=gpu: %q", note)
		}
		t.Skipf("no WebGPU adapter: %s", note)
	}
	b.WaitFor(appGridDone, 3*time.Minute, `document.body.innerText.slice(0, 400)`)
	gpuLabels := gridLabels(b)
	b.Screenshot("app-compute-gpu")
	if q := appQuery(t, b); q.Get("compute") != "gpu" {
		t.Errorf("URL compute=%q, want gpu", q.Get("compute"))
	}
	MustEval[bool](b, `(() => { const s = document.getElementById("compute"); s.value = "cpu";
		s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
	b.WaitFor(`document.getElementById("compute-note").textContent.trim() === ""`, 30*time.Second, `document.getElementById("compute-note").textContent`)
	b.WaitFor(appGridDone, 90*time.Second, `document.body.innerText.slice(0, 400)`)
	cpuLabels := gridLabels(b)
	if len(gpuLabels) != 16 || strings.Join(gpuLabels, " ") != strings.Join(cpuLabels, " ") {
		t.Errorf("grid on the GPU %q, on the CPU %q", gpuLabels, cpuLabels)
	}
	if q := appQuery(t, b); q.Get("compute") != "cpu" {
		t.Errorf("URL compute=%q after switching, want cpu", q.Get("compute"))
	}
	t.Logf("%s; grid %v", note, gpuLabels)
}

// TestAppComputeAutoSoftware opens the app with the default compute=auto in
// Chromium whose only WebGPU adapter is SwiftShader (software): the app
// stays on the CPU and says why.
func TestAppComputeAutoSoftware(t *testing.T) {
	appSetup(t)
	site := StartSite(t)
	b := NewBrowserWebGPU(t)
	b.Navigate(site.URL + "index.html")
	b.WaitFor(appGridDone, 90*time.Second, `document.body.innerText.slice(0, 400)`)
	b.WaitFor(`document.getElementById("compute-note").textContent.includes("computing on the CPU")`, 30*time.Second, `document.getElementById("compute-note").textContent`)
	note := MustEval[string](b, `document.getElementById("compute-note").textContent`)
	if !strings.Contains(note, "software adapter") {
		t.Errorf("auto with SwiftShader: note %q, want it to name the software adapter", note)
	}
	if q := appQuery(t, b); q.Get("compute") != "auto" {
		t.Errorf("URL compute=%q, want auto", q.Get("compute"))
	}
	b.Screenshot("app-compute-auto-software")
}

// TestAppComputeFallback asks for the GPU in a browser without one: the app
// computes on the CPU and says why, visibly.
func TestAppComputeFallback(t *testing.T) {
	_, b := openApp(t, "?compute=gpu")
	b.WaitFor(`document.getElementById("compute-note").textContent.includes("computing on the CPU")`, 30*time.Second, `document.getElementById("compute-note").textContent`)
	if cls := MustEval[string](b, `document.getElementById("compute-note").className`); cls != "warn" {
		t.Errorf("fallback note class %q, want warn", cls)
	}
	if n := len(gridLabels(b)); n != 16 {
		t.Errorf("%d grid cells after the fallback", n)
	}
	b.Screenshot("app-compute-fallback")
}
