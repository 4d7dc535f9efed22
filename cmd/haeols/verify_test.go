package main

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
)

// gpuRequired is set in CI, where a software Vulkan adapter exists: there a
// missing adapter fails the GPU tests instead of skipping them.
var gpuRequired = os.Getenv("HAEOLS_REQUIRE_GPU") == "1" && runtime.GOOS != "js"

// TestVerifyShippedSamples runs `haeols verify` on every shipped sample: the
// CPU kernels always, the GPU kernels when an adapter exists (required in
// CI), and requires every deviation to be within tolerance.
func TestVerifyShippedSamples(t *testing.T) {
	args := []string{"verify", "-json", "-methods", "hae-ols,topk,quant,full", "-ratios", "0.3,1",
		"../../samples/default.safetensors", "../../samples/needle.safetensors", "../../samples/stories260K.safetensors"}
	if gpuRequired {
		args = append(args, "-require-gpu")
	}
	code, out, errOut := cli(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	var doc struct {
		Adapter *struct{ Name string }
		CPUOnly bool `json:"cpu_only"`
		Pass    bool
		Results []struct {
			Sample  string
			Kernels []struct {
				Kernel string
				GPUTol *float64 `json:"gpu_tol"`
			}
			Metrics []struct{ Method string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Pass || len(doc.Results) != 3 {
		t.Fatalf("pass %v, %d results", doc.Pass, len(doc.Results))
	}
	if doc.CPUOnly != (doc.Adapter == nil) {
		t.Errorf("cpu_only %v with adapter %v", doc.CPUOnly, doc.Adapter)
	}
	kernels := map[string]bool{}
	for _, r := range doc.Results {
		for _, k := range r.Kernels {
			kernels[k.Kernel] = true
			if (k.GPUTol != nil) == doc.CPUOnly {
				t.Errorf("%s %s: GPU deviation present = %v on a CPU-only run = %v", r.Sample, k.Kernel, k.GPUTol != nil, doc.CPUOnly)
			}
		}
		if !doc.CPUOnly && len(r.Metrics) == 0 {
			t.Errorf("%s: no CPU-vs-GPU metrics", r.Sample)
		}
	}
	for _, k := range []string{"logits", "softmax", "columns", "rowentropy", "weighted", "features", "attend", "errors"} {
		if !kernels[k] {
			t.Errorf("kernel %s not verified", k)
		}
	}
	t.Logf("adapter %+v; %s", doc.Adapter, strings.TrimSpace(errOut))
}

// TestVerifyWithoutAdapter asks for a backend this machine lacks: verify
// falls back to the CPU and says so, or fails with -require-gpu.
func TestVerifyWithoutAdapter(t *testing.T) {
	f := tinyFile(t)
	code, out, errOut := cli(t, "verify", "-backend", "dx12", "-methods", "topk", "-ratios", "0.5", f)
	if code != 0 || !strings.Contains(errOut, "falling back to the CPU kernels only") || !strings.Contains(out, "GPU: none (CPU kernels only)") || !strings.Contains(out, "PASS") {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	code, _, errOut = cli(t, "verify", "-require-gpu", "-backend", "dx12", f)
	if code != exitFail || !strings.Contains(errOut, "-require-gpu") {
		t.Fatalf("-require-gpu without an adapter: exit %d, stderr %s", code, errOut)
	}
}

func TestVerifyBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"verify", "-sizes", "4Q"},
		{"verify", "-sizes", "8"},
		{"verify", "-sizes", "65K"},
		{"verify", "-backend", "cuda"},
		{"verify", "-ratios", "2"},
		{"verify", "-methods", "nope"},
	} {
		if code, _, errOut := cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
	if code, _, errOut := cli(t, "verify", "no-such-file.safetensors"); code != exitFail || !strings.Contains(errOut, "no-such-file") {
		t.Errorf("missing file: exit %d, %s", code, errOut)
	}
	if code, _, errOut := cli(t, "verify", writeAttnOnly(t)); code != exitFail || !strings.Contains(errOut, "attention-only") {
		t.Errorf("attention-only sample: exit %d, %s", code, errOut)
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("1K, 4k,200,64K")
	if err != nil || len(got) != 4 || got[0] != 1024 || got[1] != 4096 || got[2] != 200 || got[3] != 65536 {
		t.Errorf("parseSizes: %v, %v", got, err)
	}
}
