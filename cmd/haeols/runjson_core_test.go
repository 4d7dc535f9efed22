package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/sample"
)

// TestRunJSONEqualsCore: `haeols run --json` prints exactly core's numbers
// (JSON floats round-trip), the same numbers the browser's worker is checked
// against bit for bit in web/e2e (TestWorkerProtocol): CLI, core and browser
// agree.
func TestRunJSONEqualsCore(t *testing.T) {
	path := filepath.Join("..", "..", "samples", "default.safetensors")
	code, out, stderr := cli(t, "run", "-ratio", "0.3", "-methods", "hae-ols,topk", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc runDocT
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := sample.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.NewModel(s, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2*s.L*s.H {
		t.Fatalf("%d results, want %d", len(doc.Results), 2*s.L*s.H)
	}
	for _, r := range doc.Results {
		want, _, err := m.Run(r.Method, core.DefaultParams(0.3), r.Layer, r.Head)
		if err != nil {
			t.Fatal(err)
		}
		if r.Err != want.Err || r.Ratio != want.Ratio {
			t.Errorf("%s L%d H%d: run --json err %v ratio %v, core %v %v", r.Method, r.Layer, r.Head, r.Err, r.Ratio, want.Err, want.Ratio)
		}
	}
}

// TestRunBudgetEqualsCore: `run -budget hae` gives each head the metrics
// of core at its KV head's share of the allocation, and the shares use
// exactly the uniform total.
func TestRunBudgetEqualsCore(t *testing.T) {
	path := filepath.Join("..", "..", "samples", "default.safetensors")
	code, out, stderr := cli(t, "run", "-ratio", "0.3", "-budget", "hae", "-methods", "hae-ols", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc runDocT
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := sample.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.NewModel(s, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := core.DefaultParams(0.3)
	p.Budget = core.BudgetHAE
	a, err := m.Allocate("hae-ols", p)
	if err != nil {
		t.Fatal(err)
	}
	uneven := false
	for _, r := range doc.Results {
		share := a.RatioOf(r.Layer, s.KVHeadOf(r.Head))
		uneven = uneven || share != a.RatioOf(0, 0)
		want, _, err := m.Run(r.Method, a.ParamsOf(p, r.Layer, s.KVHeadOf(r.Head)), r.Layer, r.Head)
		if err != nil {
			t.Fatal(err)
		}
		if r.Err != want.Err || r.Ratio != want.Ratio || want.Asked != share {
			t.Errorf("L%d H%d: run --json err %v ratio %v, core at its share %v: %v %v", r.Layer, r.Head, r.Err, r.Ratio, share, want.Err, want.Ratio)
		}
	}
	if !uneven {
		t.Errorf("hae gave every KV head the same share: %v", a.Slots)
	}
}
