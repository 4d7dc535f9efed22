package kernel

import (
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
	funcs := wasmcode.TestBinaryFuncs(t)
	const pkg = "github.com_haeols_haeols_core_kernel."
	for _, name := range []string{"logitsT4", "logitsT8", "axpyT4", "axpy2T4", "dot1", "keyBlockT4", "logitsW", "axpyW", "axpy2W", "dots4W", "expW", "xlogxW"} {
		f, ok := funcs[pkg+name]
		if !ok {
			t.Errorf("no function %s", pkg+name)
			continue
		}
		t.Logf("%s: %d SIMD128 instructions (%d f32x4.mul, %d f32x4.add, %d v128.load)", f.Name, f.Total(),
			f.SIMD[wasmcode.F32x4Mul], f.SIMD[wasmcode.F32x4Add], f.SIMD[wasmcode.V128Load])
		for _, op := range []uint32{wasmcode.F32x4Mul, wasmcode.F32x4Add, wasmcode.V128Load} {
			if f.SIMD[op] == 0 {
				t.Errorf("%s has no SIMD128 instruction %#x", f.Name, op)
			}
		}
	}
	// The widening weighted sums: float64 lanes.
	if f, ok := funcs[pkg+"widenW"]; !ok {
		t.Errorf("no function %s", pkg+"widenW")
	} else if f.SIMD[wasmcode.F64x2Mul] == 0 || f.SIMD[wasmcode.F64x2Add] == 0 {
		t.Errorf("%s has no f64x2.mul or f64x2.add", f.Name)
	}
	// The panel packing: a v128 store per column.
	if f, ok := funcs[pkg+"pack4W"]; !ok {
		t.Errorf("no function %s", pkg+"pack4W")
	} else if f.SIMD[wasmcode.V128Store] == 0 {
		t.Errorf("%s has no v128.store", f.Name)
	}
}
