package wasmcode

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestBinaryFuncs builds the tests of the package in the current directory
// for GOOS=js GOARCH=wasm with GOEXPERIMENT=simd (as the Makefile builds the
// web app) and returns the functions of that binary, by name. It needs the
// go command, so it skips tb in short mode, under wasm and without one.
func TestBinaryFuncs(tb testing.TB) map[string]Func {
	tb.Helper()
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		tb.Skip("builds a wasm binary with the go command; skipped in short mode and under wasm")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			tb.Skip("no go command")
		}
	}
	out := filepath.Join(tb.TempDir(), "test.wasm")
	cmd := exec.Command(goTool, "test", "-c", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "GOEXPERIMENT=simd")
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
