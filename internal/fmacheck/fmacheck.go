// Package fmacheck is a test helper: it compiles a package for every
// architecture on which the Go compiler may fuse x*y+z into one
// fused multiply-add instruction (arm64, riscv64, ppc64le, s390x, and amd64
// with GOAMD64=v3) and fails the test if it finds one. A fused result can
// differ from the separately rounded one in the last bit, which would break
// haeols's promise that every platform, the browser included, computes the
// same bits. Write float64(x*y) + z (an explicit conversion rounds and
// forbids fusion) where the compiler fuses.
package fmacheck

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/haeols/haeols/internal/gotool"
)

// fusedOp matches fused multiply-add instructions in assembly listings
// (arm64 FMADDD, ppc64 FMADD, s390x FMADD, riscv64 FNMSUBD, amd64
// VFMADD231SD, ...), not FMAX or FMIN.
var fusedOp = regexp.MustCompile(`\bV?FN?M(ADD|SUB)[0-9A-Z]*\b`)

// Targets are the GOARCH settings the check compiles for.
var Targets = [][]string{
	{"GOARCH=arm64"}, {"GOARCH=riscv64"}, {"GOARCH=ppc64le"}, {"GOARCH=s390x"},
	{"GOARCH=amd64", "GOAMD64=v3"},
}

// Check compiles the package in dir (usually ".") for each target and
// reports every fused multiply-add in its Go code. It skips itself in short
// mode and where no go command is available (e.g. under js/wasm).
func Check(t *testing.T, dir string) {
	t.Helper()
	goTool := gotool.Path(t)
	for _, env := range Targets {
		cmd := exec.Command(goTool, "build", "-gcflags=-S", "-o", os.DevNull, ".")
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v go build: %v\n%s", env, err, out)
		}
		if len(out) < 1000 {
			t.Fatalf("%v: no assembly listing (%d bytes of output)", env, len(out))
		}
		for _, line := range strings.Split(string(out), "\n") {
			if fusedOp.MatchString(line) {
				t.Errorf("%v: fused multiply-add: %s", env, strings.TrimSpace(line))
			}
		}
	}
}
