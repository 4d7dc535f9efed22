package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// fusedOp matches fused multiply-add instructions in assembly listings
// (arm64 FMADDD, ppc64 FMADD, s390x FMADD, riscv64 FNMSUBD, amd64 VFMADD231SD,
// ...), not FMAX or FMIN.
var fusedOp = regexp.MustCompile(`\bV?FN?M(ADD|SUB)[0-9A-Z]*\b`)

// TestNoFusedMultiplyAdd compiles this package for the architectures on
// which Go may fuse x*y+z into one instruction and checks that it did not:
// a fused result can differ in the last bit, which would break the promise
// that every platform (the browser included) generates the same sample. The
// hash test cannot see this, since neither amd64 nor wasm fuses by default.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs the go command; skipped in short mode")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	for _, env := range [][]string{
		{"GOARCH=arm64"}, {"GOARCH=riscv64"}, {"GOARCH=ppc64le"}, {"GOARCH=s390x"},
		{"GOARCH=amd64", "GOAMD64=v3"},
	} {
		cmd := exec.Command(goTool, "build", "-gcflags=-S", "-o", os.DevNull, ".")
		cmd.Env = append(append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v go build: %v\n%s", env, err, out)
		}
		if len(out) < 1000 {
			t.Fatalf("%v: no assembly listing (%d bytes of output)", env, len(out))
		}
		for _, line := range regexp.MustCompile(`(?m)^.*$`).FindAllString(string(out), -1) {
			if fusedOp.MatchString(line) {
				t.Errorf("%v: fused multiply-add: %s", env, line)
			}
		}
	}
}
