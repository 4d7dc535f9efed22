package wasmcode

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/haeols/haeols/internal/gotool"
)

// TestBinaryFuncs builds the tests of the package in the current directory
// for GOOS=js GOARCH=wasm with GOEXPERIMENT=simd,nojsonv2 (as the Makefile builds the
// web app) and returns the functions of that binary, by name. It needs the
// go command, so it skips tb in short mode, under wasm and without one.
func TestBinaryFuncs(tb testing.TB) map[string]Func {
	tb.Helper()
	goTool := gotool.Path(tb)
	out := filepath.Join(tb.TempDir(), "test.wasm")
	cmd := exec.Command(goTool, "test", "-c", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOEXPERIMENT=simd,nojsonv2")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go test -c for js/wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	funcs, err := Funcs(b)
	if err != nil {
		tb.Fatalf("%s: %v", out, err)
	}
	byName := make(map[string]Func, len(funcs))
	for _, f := range funcs {
		byName[f.Name] = f
	}
	return byName
}
