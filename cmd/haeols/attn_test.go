package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/xmath"
)

// writeAttnNPY writes an attention-only .npy file [h, n, n] (float32) of
// causal softmax rows with a sink at position 0, a strong key at n/3 and
// pseudo-random logits elsewhere (a fixed LCG, so the file is the same
// every time).
func writeAttnNPY(t *testing.T, h, n int) string {
	t.Helper()
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", h, n, n)
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	state := uint64(7)
	rnd := func() float64 {
		state = state*6364136223846793005 + 1442695040888963407
		return float64(state>>11) / (1 << 53)
	}
	row := make([]float64, n)
	for k := 0; k < h; k++ {
		for i := 0; i < n; i++ {
			var sum float64
			for j := 0; j <= i; j++ {
				x := 3 * rnd()
				switch j {
				case 0:
					x += 4
				case n / 3:
					x += 3 + float64(k)
				}
				row[j] = xmath.Exp(x)
				sum += row[j]
			}
			for j := 0; j < n; j++ {
				v := float32(0)
				if j <= i {
					v = float32(row[j] / sum)
				}
				binary.Write(&b, binary.LittleEndian, v)
			}
		}
	}
	p := filepath.Join(t.TempDir(), "attn.npy")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kvMethods are the methods that need q, k and v.
var kvMethods = []string{"hae-ols", "hae-nosvd", "hae-merge", "lowrank", "quant"}

func TestAttnOnlyRunJSON(t *testing.T) {
	p := writeAttnNPY(t, 2, 96) // prefix 84, 12 probes
	for _, c := range []struct {
		ratio    string
		zeroLoss bool // every kept method keeps every token
	}{{"0.5", false}, {"1", true}} {
		t.Run("ratio "+c.ratio, func(t *testing.T) {
			code, out, stderr := cli(t, "run", "-ratio", c.ratio, "-json", p)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var doc struct {
				Metric  string `json:"metric"`
				Results []struct {
					Method string   `json:"method"`
					Metric string   `json:"metric"`
					Head   int      `json:"head"`
					Err    float64  `json:"err"`
					ErrMax float64  `json:"err_max"`
					ErrCal float64  `json:"err_cal"`
					Cos    *float64 `json:"cos"`
					Ratio  float64  `json:"ratio"`
				} `json:"results"`
				Means   map[string]*struct{ Err float64 } `json:"means"`
				Skipped map[string]string                 `json:"skipped"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out)
			}
			if doc.Metric != "lost-mass" {
				t.Errorf("metric %q, want lost-mass", doc.Metric)
			}
			for _, m := range kvMethods {
				if doc.Skipped[m] != "needs q/k/v" || doc.Means[m] != nil {
					t.Errorf("%s: skipped %q, means %v; want \"needs q/k/v\" and null", m, doc.Skipped[m], doc.Means[m])
				}
			}
			got := map[string]int{}
			for _, r := range doc.Results {
				got[r.Method]++
				if r.Metric != "lost-mass" || r.Cos != nil {
					t.Errorf("%s head %d: metric %q cos %v, want lost-mass and null", r.Method, r.Head, r.Metric, r.Cos)
				}
				if c.zeroLoss && (r.Err != 0 || r.ErrMax != 0 || r.ErrCal != 0) {
					t.Errorf("%s head %d at ratio 1: lost %g max %g cal %g, want 0", r.Method, r.Head, r.Err, r.ErrMax, r.ErrCal)
				}
				if !c.zeroLoss && !(r.Err > 0 && r.ErrMax < 1 && r.Ratio <= 0.5) {
					t.Errorf("%s head %d at ratio 0.5: lost %g max %g ratio %g, want 0 < lost, max < 1, ratio <= 0.5", r.Method, r.Head, r.Err, r.ErrMax, r.Ratio)
				}
			}
			for _, m := range []string{"entropy", "topk", "snapkv", "streaming"} {
				if got[m] != 2 || doc.Means[m] == nil {
					t.Errorf("%s: %d results and means %v, want 2 heads and a mean", m, got[m], doc.Means[m])
				}
			}
		})
	}
}

func TestAttnOnlyTables(t *testing.T) {
	p := writeAttnNPY(t, 2, 96)
	code, out, stderr := cli(t, "run", "-ratio", "0.5", "-methods", "hae-ols,topk", p)
	if code != 0 {
		t.Fatalf("run: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Attention-only sample", "lost_mass", "n/a (needs q/k/v)", "mean lost_mass"} {
		if !strings.Contains(out, want) {
			t.Errorf("run table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "err_max") {
		t.Errorf("run table on attention only names err columns:\n%s", out)
	}

	csvPath := filepath.Join(t.TempDir(), "s.csv")
	code, out, stderr = cli(t, "sweep", "-ratios", "0.3,1", "-methods", "hae-ols,topk,streaming", "-csv", csvPath, p)
	if code != 0 {
		t.Fatalf("sweep: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"lost attention mass over 2 head(s)", "n/a: hae-ols at ratio 0.3, 1: needs q/k/v"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep summary lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*3*2 {
		t.Fatalf("%d CSV rows, want %d", len(rows), 1+2*3*2)
	}
	for _, r := range rows[1:] {
		status, errCol, metric := r[4], r[6], r[len(r)-1]
		switch {
		case metric != "lost-mass":
			t.Errorf("row %v: metric %q, want lost-mass", r, metric)
		case r[1] == "hae-ols" && status != "n/a: needs q/k/v":
			t.Errorf("row %v: hae-ols status %q, want n/a: needs q/k/v", r, status)
		case r[1] != "hae-ols" && r[0] == "1" && errCol != "0":
			t.Errorf("row %v: lost mass at ratio 1 is %q, want 0", r, errCol)
		}
	}

	dir := t.TempDir()
	png := filepath.Join(dir, "h.png")
	code, out, stderr = cli(t, "heatmap", "-method", "topk", "-ratio", "0.5", "-head", "1", "-o", png, p)
	if code != 0 {
		t.Fatalf("heatmap: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "lost attention mass") {
		t.Errorf("heatmap output %q does not name the lost attention mass", out)
	}
	if img := decodePNG(t, png); img.Bounds().Dx() < 600 {
		t.Errorf("heatmap is %v", img.Bounds())
	}
	curve := filepath.Join(dir, "c.png")
	if code, _, stderr := cli(t, "curve", "-methods", "topk,streaming,hae-ols", "-ratios", "0.3,0.6", "-o", curve, p); code != 0 {
		t.Fatalf("curve: exit %d, stderr %q", code, stderr)
	}
	decodePNG(t, curve)
	if code, out, _ := cli(t, "info", p); code != 0 || !strings.Contains(out, "attention only") {
		t.Errorf("info: exit %d:\n%s", code, out)
	}
}
