package worker

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestDependsOnCoreAndWireOnly: the worker (its browser build) imports
// the core, the messages and the project's internal helpers, none of the
// page's packages (ui/...).
func TestDependsOnCoreAndWireOnly(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command")
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(p, "github.com/haeols/haeols/")
		if !ok {
			continue
		}
		if top, _, _ := strings.Cut(rest, "/"); top != "core" && top != "wire" && top != "internal" && rest != "wasm/worker" {
			t.Errorf("wasm/worker (GOOS=js) imports %s", p)
		}
	}
}

// TestNomodelLeavesOutTheModels: built with the tag nomodel (app.wasm's
// worker), the package links none of the model runner (its checkpoints,
// tokenizers and decoding are runner.wasm's).
func TestNomodelLeavesOutTheModels(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command")
	}
	cmd := exec.Command("go", "list", "-tags", "nomodel", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, m := range []string{"core/model", "core/llama", "core/eval"} {
			if p == "github.com/haeols/haeols/"+m || strings.HasPrefix(p, "github.com/haeols/haeols/"+m+"/") {
				t.Errorf("wasm/worker -tags nomodel (GOOS=js) imports %s", p)
			}
		}
	}
}
