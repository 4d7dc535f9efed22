package solve

import (
	"testing"

	"github.com/haeols/haeols/internal/wasmcode"
)

// TestWasmReflectSIMD checks that the wasm build's Householder reflection
// (reflectW, simd_wasm.s) is WebAssembly SIMD128 code: it multiplies and
// adds f64x2 vectors it loads and stores with v128.load and v128.store.
func TestWasmReflectSIMD(t *testing.T) {
	funcs := wasmcode.TestBinaryFuncs(t)
	const name = "github.com_haeols_haeols_core_solve.reflectW"
	f, ok := funcs[name]
	if !ok {
		t.Fatalf("no function %s", name)
	}
	t.Logf("%s: %d SIMD128 instructions (%d f64x2.mul, %d f64x2.add, %d v128.load, %d v128.store)", f.Name, f.Total(),
		f.SIMD[wasmcode.F64x2Mul], f.SIMD[wasmcode.F64x2Add], f.SIMD[wasmcode.V128Load], f.SIMD[wasmcode.V128Store])
	for _, op := range []uint32{wasmcode.F64x2Mul, wasmcode.F64x2Add, wasmcode.V128Load, wasmcode.V128Store} {
		if f.SIMD[op] == 0 {
			t.Errorf("%s has no SIMD128 instruction %#x", f.Name, op)
		}
	}
}
