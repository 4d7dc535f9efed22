package kernel

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/haeols/haeols/internal/wasmcode"
)

// TestWasmKernelsSIMD builds this package's tests for GOOS=js GOARCH=wasm
// with GOEXPERIMENT=simd (as the Makefile builds the web app) and checks
// that the archsimd kernels and the assembly ones of simd_wasm.s are
// WebAssembly SIMD128 code: each multiplies
// and adds f32x4 vectors loaded with v128.load. (web/e2e checks the built
// app.wasm.) It needs the go command, so it is skipped in short mode and
// under wasm.
func TestWasmKernelsSIMD(t *testing.T) {
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("builds a wasm binary with the go command; skipped in short mode and under wasm")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	out := filepath.Join(t.TempDir(), "kernel.wasm")
	cmd := exec.Command(goTool, "test", "-c", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOEXPERIMENT=simd")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test -c for js/wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := wasmcode.Funcs(b)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	const pkg = "github.com_haeols_haeols_core_kernel."
	want := map[string]bool{pkg + "logitsT4": false, pkg + "logitsT8": false, pkg + "axpyT4": false, pkg + "axpy2T4": false, pkg + "dot1": false, pkg + "keyBlockT4": false,
		pkg + "logitsW": false, pkg + "axpyW": false, pkg + "axpy2W": false, pkg + "dots4W": false}
	for _, f := range funcs {
		if _, ok := want[f.Name]; !ok {
			continue
		}
		want[f.Name] = true
		t.Logf("%s: %d SIMD128 instructions (%d f32x4.mul, %d f32x4.add, %d v128.load)", f.Name, f.Total(),
			f.SIMD[wasmcode.F32x4Mul], f.SIMD[wasmcode.F32x4Add], f.SIMD[wasmcode.V128Load])
		for _, op := range []uint32{wasmcode.F32x4Mul, wasmcode.F32x4Add, wasmcode.V128Load} {
			if f.SIMD[op] == 0 {
				t.Errorf("%s has no SIMD128 instruction %#x", f.Name, op)
			}
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("%s: no function %s", out, name)
		}
	}
	// The panel packing: a v128 store per column.
	packed := false
	for _, f := range funcs {
		if f.Name == pkg+"pack4W" {
			packed = true
			if f.SIMD[wasmcode.V128Store] == 0 {
				t.Errorf("%s has no v128.store", f.Name)
			}
		}
	}
	if !packed {
		t.Errorf("%s: no function %s", out, pkg+"pack4W")
	}
}
