package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/haeols/haeols/internal/wasmcode"
)

// TestAppWasmSIMD: the app.wasm that make web built (the page, and in its
// Web Worker the core) contains WebAssembly SIMD128 vector arithmetic: the
// archsimd kernels of core/kernel (logits, and the weighted sums of one and
// of two rows) each multiply and add f32x4 vectors, and nothing else in the
// app does. The build strips function names, so the kernels are counted:
// core/kernel's TestWasmKernelsSIMD checks them by name.
func TestAppWasmSIMD(t *testing.T) {
	path := filepath.Join(DistDir(), "app.wasm")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := wasmcode.Funcs(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	vec, total := 0, 0
	for _, f := range funcs {
		total += f.Total()
		if f.SIMD[wasmcode.F32x4Mul] > 0 && f.SIMD[wasmcode.F32x4Add] > 0 && f.SIMD[wasmcode.V128Load] > 0 {
			vec++
		}
	}
	t.Logf("%s: %d functions, %d SIMD128 instructions, %d functions multiply and add f32x4 vectors", path, len(funcs), total, vec)
	if vec < 3 {
		t.Errorf("%s: %d functions multiply and add f32x4 vectors, want the 3 archsimd kernels at least", path, vec)
	}
}
