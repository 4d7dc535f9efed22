package core

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/sample"
)

var update = flag.Bool("update", false, "rewrite the golden regression results under testdata/golden")

// goldenRatios are the ratios of the regression results.
var goldenRatios = []float64{0.1, 0.3, 0.5}

// goldenRow is one head's metrics for one method and ratio. Floats are
// written with the shortest exact representation, so the file pins bits.
type goldenRow struct {
	Method string  `json:"method"`
	Asked  float64 `json:"asked"`
	Layer  int     `json:"layer"`
	Head   int     `json:"head"`
	NA     bool    `json:"na,omitempty"`
	Ratio  float64 `json:"ratio"`
	Err    float64 `json:"err"`
	ErrMax float64 `json:"err_max"`
	ErrP95 float64 `json:"err_p95"`
	ErrCal float64 `json:"err_cal"`
	Cos    float64 `json:"cos"`
	Needle float64 `json:"needle_err"` // -1: no needle probes
}

func goldenRows(t *testing.T, s *sample.Sample) []goldenRow {
	m, err := NewModel(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []goldenRow
	for _, rho := range goldenRatios {
		for _, name := range MethodNames() {
			grid, err := m.Grid(name, DefaultParams(rho), 1)
			if errors.Is(err, ErrDoesNotFit) {
				rows = append(rows, goldenRow{Method: name, Asked: rho, Layer: -1, Head: -1, NA: true})
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range grid {
				ne := g.NeedleErr
				if math.IsNaN(ne) {
					ne = -1
				}
				rows = append(rows, goldenRow{Method: name, Asked: rho, Layer: g.Layer, Head: g.Head,
					Ratio: g.Ratio, Err: g.Err, ErrMax: g.ErrMax, ErrP95: g.ErrP95, ErrCal: g.ErrCal, Cos: g.Cos, Needle: ne})
			}
		}
	}
	return rows
}

// exactPlatform reports whether results must match the golden files bit for
// bit: amd64 and js/wasm, the platforms the golden files were made and are
// tested on. TestNoFusedMultiplyAdd (package fmacheck) keeps the compiler from
// fusing multiply-adds in core's code on every architecture, so others should
// match too, but they are compared at 1e-9 relative since nothing runs the
// test there.
func exactPlatform() bool { return runtime.GOARCH == "amd64" || runtime.GOARCH == "wasm" }

// TestGolden recomputes every method's metrics at ratios 0.1, 0.3 and 0.5 for
// every head of every shipped sample and compares them with
// testdata/golden/NAME.json. The same test runs under GOOS=js GOARCH=wasm,
// which proves the browser computes the same bits as the native tool.
// Regenerate with `go test ./core -run TestGolden -update` and explain the
// change in the commit.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("../samples/*.safetensors")
	if len(files) == 0 {
		t.Fatal("no shipped samples under ../samples: run make samples")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".safetensors")
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "default" {
				t.Skip("-short: default sample only")
			}
			s, err := sample.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenRows(t, s)
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				b, err := json.MarshalIndent(got, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate with go test ./core -run TestGolden -update)", err)
			}
			var want []goldenRow
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d rows, golden has %d", path, len(got), len(want))
			}
			bad := 0
			for i := range got {
				if d := diffRow(got[i], want[i]); d != "" {
					if bad++; bad <= 10 {
						t.Errorf("%s row %d (%s ratio %g layer %d head %d): %s", path, i, want[i].Method, want[i].Asked, want[i].Layer, want[i].Head, d)
					}
				}
			}
			if bad > 10 {
				t.Errorf("... %d rows differ in all", bad)
			}
		})
	}
}

func diffRow(g, w goldenRow) string {
	if g.Method != w.Method || g.Asked != w.Asked || g.Layer != w.Layer || g.Head != w.Head || g.NA != w.NA {
		return fmt.Sprintf("row identity %+v, golden %+v", g, w)
	}
	pairs := []struct {
		name string
		a, b float64
	}{{"ratio", g.Ratio, w.Ratio}, {"err", g.Err, w.Err}, {"err_max", g.ErrMax, w.ErrMax}, {"err_p95", g.ErrP95, w.ErrP95},
		{"err_cal", g.ErrCal, w.ErrCal}, {"cos", g.Cos, w.Cos}, {"needle_err", g.Needle, w.Needle}}
	for _, p := range pairs {
		if exactPlatform() {
			if math.Float64bits(p.a) != math.Float64bits(p.b) {
				return fmt.Sprintf("%s = %v, golden %v (bit-exact on %s)", p.name, p.a, p.b, runtime.GOARCH)
			}
		} else if math.Abs(p.a-p.b) > 1e-9*math.Max(1, math.Abs(p.b)) {
			return fmt.Sprintf("%s = %v, golden %v", p.name, p.a, p.b)
		}
	}
	return ""
}
