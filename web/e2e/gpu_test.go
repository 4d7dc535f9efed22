package e2e

import (
	"encoding/json"
	"os"
	"runtime"
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
	if !v.Pass || v.Error != "" || len(v.Reports) == 0 {
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
	if !contains(text, "No GPU") {
		t.Errorf("the page does not say there is no GPU: %q", text[:min(300, len(text))])
	}
	b.Screenshot("verify-no-webgpu")
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (len(sub) == 0 || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
