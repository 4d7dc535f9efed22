package verify

import (
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/gpu"
	"github.com/haeols/haeols/core/sample"
)

func preset(t testing.TB, name string) *sample.Sample {
	t.Helper()
	c, err := gen.DefaultConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gen.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// device opens a GPU or returns nil (skipping nothing: the CPU half of a
// verification runs without one), unless HAEOLS_REQUIRE_GPU=1.
func device(t testing.TB) *gpu.Device {
	d, err := gpu.Open(gpu.Options{})
	if err != nil {
		if errors.Is(err, gpu.ErrUnavailable) && (os.Getenv("HAEOLS_REQUIRE_GPU") != "1" || runtime.GOOS == "js") {
			t.Logf("no GPU, CPU only: %v", err)
			return nil
		}
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestVerifyDefault(t *testing.T) {
	s := preset(t, "default")
	dev := device(t)
	r, err := Group(s, "default", 1, 0, dev, Options{Methods: []string{"hae-ols", "topk", "full"}, Ratios: []float64{0.3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(r, "", " ")
	if !r.Pass {
		t.Fatalf("verification failed:\n%s", b)
	}
	if testing.Verbose() {
		t.Logf("%s", b)
	}
	if dev != nil && len(r.Metrics) == 0 {
		t.Error("no metrics compared")
	}
	for _, k := range r.Kernels {
		if (dev != nil) != (k.GPUTol != nil) {
			t.Errorf("%s %s: GPU columns present = %v with a device = %v", k.Kernel, k.Output, k.GPUTol != nil, dev != nil)
		}
	}
}

// TestVerifyCatchesWrongKernel feeds a corrupted output through the
// deviation check: a verification that cannot fail proves nothing.
func TestVerifyCatchesWrongKernel(t *testing.T) {
	r := &Report{Pass: true}
	ref := []float64{1, 2, 3}
	r.add("logits", "S", ref, []float32{1, 2, 3.001}, nil, func(int, float64) float64 { return 1e-6 })
	if r.Pass || r.Kernels[0].Pass || r.Kernels[0].CPUTol < 100 {
		t.Errorf("a deviation of 1e-3 at tolerance 1e-6 passed: %+v", r.Kernels[0])
	}
	r = &Report{Pass: true}
	r.add("logits", "S", ref, []float32{1, 2, 3}, []float32{1, 2, 3.5}, func(int, float64) float64 { return 1e-6 })
	if r.Pass {
		t.Error("a GPU deviation of 0.5 passed")
	}
}
