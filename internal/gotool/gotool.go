// Package gotool finds the go command for tests that build code with it
// (the FMA check, the wasm SIMD checks).
package gotool

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Path returns the go command of the running toolchain (or the one on
// PATH). It skips tb in short mode, under wasm and where there is none.
func Path(tb testing.TB) string {
	tb.Helper()
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		tb.Skip("needs the go command; skipped in short mode and under wasm")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			tb.Skip("no go command")
		}
	}
	return goTool
}
