package main

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cli runs the tool in-process and returns the exit code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var (
	tinyOnce sync.Once
	tinyData []byte
	tinyErr  string
)

// tinyFile writes the "tiny" preset (1 layer, 2 query heads on 1 KV head,
// 56 cached tokens + 8 probes, d = 16) into a fresh temporary directory,
// generating it with the gen subcommand once per test binary.
func tinyFile(t *testing.T) string {
	t.Helper()
	tinyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "haeols-test")
		if err != nil {
			tinyErr = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "tiny.safetensors")
		var out, errOut bytes.Buffer
		if code := run([]string{"gen", "-preset", "tiny", "-o", p}, &out, &errOut); code != 0 {
			tinyErr = fmt.Sprintf("gen: exit %d: %s", code, errOut.String())
			return
		}
		tinyData, err = os.ReadFile(p)
		if err != nil {
			tinyErr = err.Error()
		}
	})
	if tinyErr != "" {
		t.Fatal(tinyErr)
	}
	p := filepath.Join(t.TempDir(), "tiny.safetensors")
	if err := os.WriteFile(p, tinyData, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGenThenInfo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "small.safetensors")
	code, out, stderr := cli(t, "gen", "-preset", "tiny", "-seed", "3", "-layers", "2", "-heads", "4", "-kv-heads", "2", "-dtype", "F32", "-o", p)
	if code != 0 {
		t.Fatalf("gen: exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "wrote "+p) {
		t.Errorf("gen stdout %q does not name the file", out)
	}
	code, out, stderr = cli(t, "info", p)
	if code != 0 {
		t.Fatalf("info: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"small.safetensors", "L=2 layers, H=4 query heads, Hkv=2 KV heads", "N=64", "d=16",
		"n=56 cached positions + 8 probe queries", "F32", "seed=3", "needles", "tokens       64:"} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
}

func TestGenDefaultName(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, stderr := cli(t, "gen", "-preset", "tiny"); code != 0 {
		t.Fatalf("gen: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat("tiny.safetensors"); err != nil {
		t.Errorf("gen without -o: %v", err)
	}
}

// runDocT is the part of run -json that the test reads.
type runDocT struct {
	Sample struct {
		Layers, Heads int
	} `json:"sample"`
	Params struct {
		Ratio float64 `json:"ratio"`
	} `json:"params"`
	Methods []string `json:"methods"`
	Results []struct {
		Method    string   `json:"method"`
		Layer     int      `json:"layer"`
		Head      int      `json:"head"`
		Err       float64  `json:"err"`
		Ratio     float64  `json:"ratio"`
		NeedleErr *float64 `json:"needle_err"`
		Profile   []float64
	} `json:"results"`
	Means   map[string]*struct{ Err float64 } `json:"means"`
	Skipped map[string]string                 `json:"skipped"`
}

func TestRunJSON(t *testing.T) {
	p := tinyFile(t)
	for _, c := range []struct {
		name      string
		args      []string
		methods   []string
		heads     []int
		skipped   []string
		wantRatio float64
	}{
		{"all heads", []string{"-methods", "hae-ols,topk,quant", "--json", p}, []string{"hae-ols", "topk", "quant"}, []int{0, 1}, nil, 0.3},
		{"one head, flags after FILE", []string{p, "-head", "1", "-ratio", "0.5", "-methods", "snapkv,streaming", "-json"}, []string{"snapkv", "streaming"}, []int{1}, nil, 0.5},
		{"quant does not fit", []string{"-ratio", "0.1", "-methods", "quant,topk", "-json", p}, []string{"quant", "topk"}, []int{0, 1}, []string{"quant"}, 0.1},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := cli(t, append([]string{"run"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var doc runDocT
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out)
			}
			if doc.Sample.Layers != 1 || doc.Sample.Heads != 2 || doc.Params.Ratio != c.wantRatio {
				t.Errorf("sample/params = %+v %+v", doc.Sample, doc.Params)
			}
			if strings.Join(doc.Methods, ",") != strings.Join(c.methods, ",") {
				t.Errorf("methods %v, want %v", doc.Methods, c.methods)
			}
			skipped := map[string]bool{}
			for _, m := range c.skipped {
				skipped[m] = true
				if !strings.HasPrefix(doc.Skipped[m], "needs ratio >= ") || doc.Means[m] != nil {
					t.Errorf("%s: skipped %q, means %v; want a needed ratio and null", m, doc.Skipped[m], doc.Means[m])
				}
			}
			got := map[string]bool{}
			for _, r := range doc.Results {
				got[fmt.Sprintf("%s/%d/%d", r.Method, r.Layer, r.Head)] = true
				if r.Err < 0 || math.IsNaN(r.Err) || r.Ratio > c.wantRatio+1e-12 || len(r.Profile) != 8 {
					t.Errorf("%s head %d: err %v ratio %v profile %d", r.Method, r.Head, r.Err, r.Ratio, len(r.Profile))
				}
				if r.NeedleErr == nil {
					t.Errorf("%s head %d: needle_err null on a needle sample", r.Method, r.Head)
				}
			}
			n := 0
			for _, m := range c.methods {
				if skipped[m] {
					continue
				}
				if doc.Means[m] == nil {
					t.Errorf("means[%s] missing", m)
				}
				for _, h := range c.heads {
					n++
					if !got[fmt.Sprintf("%s/0/%d", m, h)] {
						t.Errorf("no result for %s head %d", m, h)
					}
				}
			}
			if len(doc.Results) != n {
				t.Errorf("%d results, want %d", len(doc.Results), n)
			}
		})
	}
}

func TestRunTable(t *testing.T) {
	p := tinyFile(t)
	code, out, stderr := cli(t, "run", "-ratio", "0.1", "-methods", "hae-ols,quant", p)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"layer", "needle_err", "hae-ols", "n/a (needs ratio >= ", "Mean over 2 head(s) at ratio 0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != 1+2*2+3+2 {
		t.Errorf("%d lines, want %d:\n%s", lines, 1+2*2+3+2, out)
	}
}

func TestSweepCSVDoesNotDependOnWorkers(t *testing.T) {
	p := tinyFile(t)
	dir := t.TempDir()
	ratios, methods := []string{"0.1", "0.3", "0.5"}, []string{"hae-ols", "topk", "quant", "lowrank"}
	var csvs [2][]byte
	var outs [2]string
	for i, w := range []string{"1", "2"} {
		csvPath := filepath.Join(dir, "w"+w+".csv")
		jsonPath := filepath.Join(dir, "w"+w+".json")
		code, out, stderr := cli(t, "sweep", "-ratios", strings.Join(ratios, ","), "-methods", strings.Join(methods, ","),
			"-workers", w, "-csv", csvPath, "-json", jsonPath, p)
		if code != 0 {
			t.Fatalf("workers %s: exit %d, stderr %q", w, code, stderr)
		}
		if stderr != "" {
			t.Errorf("workers %s: stderr %q, want nothing (not a terminal)", w, stderr)
		}
		var err error
		if csvs[i], err = os.ReadFile(csvPath); err != nil {
			t.Fatal(err)
		}
		outs[i] = out
		var doc struct {
			Results []json.RawMessage
			Summary []struct {
				Ratio   float64
				Method  string
				MeanErr *float64 `json:"mean_err"`
			}
		}
		data, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("-json file: %v", err)
		}
		if len(doc.Summary) != len(ratios)*len(methods) {
			t.Errorf("JSON summary has %d entries, want %d", len(doc.Summary), len(ratios)*len(methods))
		}
	}
	if !bytes.Equal(csvs[0], csvs[1]) {
		t.Errorf("CSV differs between -workers 1 and 2")
	}
	if outs[0] != outs[1] {
		t.Errorf("summary differs between -workers 1 and 2:\n%s\n%s", outs[0], outs[1])
	}
	rows, err := csv.NewReader(bytes.NewReader(csvs[0])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(ratios)*len(methods)*2; len(rows) != want {
		t.Fatalf("%d CSV rows, want %d (header + ratios x methods x heads)", len(rows), want)
	}
	if strings.Join(rows[0], ",") != strings.Join(sweepColumns, ",") {
		t.Errorf("header %v", rows[0])
	}
	seen := map[string]bool{}
	na := 0
	for _, r := range rows[1:] {
		seen[r[0]+"/"+r[1]+"/"+r[2]+"/"+r[3]] = true
		if strings.HasPrefix(r[4], "n/a") {
			na++
			if r[1] != "quant" || r[6] != "" {
				t.Errorf("unexpected n/a row %v", r)
			}
		} else if r[4] != "ok" || r[6] == "" {
			t.Errorf("bad row %v", r)
		}
	}
	if len(seen) != len(rows)-1 || na == 0 {
		t.Errorf("%d distinct rows of %d, %d n/a (want quant at 0.1 n/a)", len(seen), len(rows)-1, na)
	}
	for _, want := range []string{"ratio 0.1", "ratio 0.5", "n/a: quant at ratio 0.1", "*"} {
		if !strings.Contains(outs[0], want) {
			t.Errorf("summary lacks %q:\n%s", want, outs[0])
		}
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func TestCurve(t *testing.T) {
	p := tinyFile(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, y    string
		wantStderr string
	}{
		{"auto", "auto", ""},
		{"log drops err 0 at ratio 1", "log", "left out of the log axis"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.y+".png")
			code, _, stderr := cli(t, "curve", "-ratios", "0.2,0.5,1", "-methods", "hae-ols,topk,quant", "-y", c.y, "-o", out, p)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if c.wantStderr != "" && !strings.Contains(stderr, c.wantStderr) {
				t.Errorf("stderr %q lacks %q", stderr, c.wantStderr)
			}
			if b := decodePNG(t, out).Bounds(); b.Dx() != 1600 || b.Dy() != 960 {
				t.Errorf("size %v, want 1600x960", b.Size())
			}
		})
	}
}

func TestLogTicks(t *testing.T) {
	ticks := logTicks{}.Ticks(math.Log10(0.003), math.Log10(0.6))
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.005 0.01 0.02 0.05 0.1 0.2 0.5" {
		t.Errorf("labels %q", got)
	}
}

// writeNaNSample writes the tiny sample with its first stored number
// replaced by an F16 NaN.
func writeNaNSample(t *testing.T) string {
	p := tinyFile(t)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	start := 8 + binary.LittleEndian.Uint64(b[:8])
	if !strings.Contains(string(b[8:start]), `"F16"`) {
		t.Fatalf("tiny sample is not F16")
	}
	b[start], b[start+1] = 0x00, 0x7E // F16 NaN, little endian
	q := filepath.Join(filepath.Dir(p), "nan.safetensors")
	if err := os.WriteFile(q, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return q
}

// writeAttnOnly writes an attention-only .npy file ([8, 8] float32).
func writeAttnOnly(t *testing.T) string {
	hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 8), }"
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			v := float32(0)
			if j <= i {
				v = 1 / float32(i+1)
			}
			binary.Write(&b, binary.LittleEndian, v)
		}
	}
	p := filepath.Join(t.TempDir(), "attn.npy")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInput(t *testing.T) {
	p := tinyFile(t)
	dir := filepath.Dir(p)
	trunc := filepath.Join(dir, "trunc.safetensors")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(trunc, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	nanFile := writeNaNSample(t)
	attn := writeAttnOnly(t)
	missing := filepath.Join(dir, "missing.safetensors")
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string // substrings of stderr
	}{
		{"no arguments", nil, exitUsage, []string{"Subcommands:"}},
		{"unknown subcommand", []string{"frobnicate"}, exitUsage, []string{`unknown subcommand "frobnicate"`, "sweep"}},
		{"unknown flag", []string{"run", "-bogus", p}, exitUsage, []string{"haeols: run:", "-bogus"}},
		{"missing file", []string{"run", missing}, exitFail, []string{"haeols: run:", missing}},
		{"missing file info", []string{"info", missing}, exitFail, []string{missing}},
		{"truncated file", []string{"run", trunc}, exitFail, []string{"haeols: run:", trunc}},
		{"NaN in file", []string{"run", nanFile}, exitFail, []string{nanFile, "non-finite"}},
		{"heatmap needs q/k/v", []string{"heatmap", "-method", "hae-ols", "-o", filepath.Join(dir, "a.png"), attn}, exitUsage, []string{"-method hae-ols needs q, k and v", attn, "attention only", "topk"}},
		{"unknown method", []string{"run", "-methods", "topk,nope", p}, exitUsage, []string{"-methods", `"nope"`, "hae-ols", "all"}},
		{"ratio 0", []string{"run", "-ratio", "0", p}, exitUsage, []string{"-ratio 0 outside (0, 1]"}},
		{"ratio 1.5", []string{"run", "-ratio", "1.5", p}, exitUsage, []string{"-ratio 1.5 outside (0, 1]"}},
		{"ratio abc", []string{"run", "-ratio", "abc", p}, exitUsage, []string{"-ratio", `"abc"`}},
		{"lambda 2", []string{"run", "-lambda", "2", p}, exitUsage, []string{"-lambda 2 outside [0, 1]"}},
		{"unknown budget", []string{"run", "-budget", "even", p}, exitUsage, []string{`-budget "even"`, "uniform, pyramid, adakv, hae"}},
		{"sweep unknown budget", []string{"sweep", "-budget", "", p}, exitUsage, []string{`-budget ""`}},
		{"layer out of range", []string{"run", "-layer", "3", p}, exitUsage, []string{"-layer 3", "0..0"}},
		{"head out of range", []string{"run", "-head", "2", p}, exitUsage, []string{"-head 2", "0..1"}},
		{"two files", []string{"run", p, p}, exitUsage, []string{"too many arguments"}},
		{"sweep bad ratios", []string{"sweep", "-ratios", "0.1,x", p}, exitUsage, []string{"-ratios", `"x"`}},
		{"sweep ratio 2", []string{"sweep", "-ratios", "0.1,2", p}, exitUsage, []string{"-ratios 2 outside"}},
		{"sweep unwritable csv", []string{"sweep", "-ratios", "0.5", "-methods", "topk", "-csv", filepath.Join(dir, "no", "a.csv"), p}, exitFail, []string{"-csv", "a.csv"}},
		{"heatmap unknown method", []string{"heatmap", "-method", "nope", p}, exitUsage, []string{"-method", `"nope"`, "topk"}},
		{"heatmap does not fit", []string{"heatmap", "-method", "quant", "-ratio", "0.05", "-o", filepath.Join(dir, "q.png"), p}, exitUsage, []string{"-ratio 0.05", "needs ratio >= "}},
		{"heatmap all heads", []string{"heatmap", "-head", "-1", p}, exitUsage, []string{"-head -1", "one head"}},
		{"heatmap floor", []string{"heatmap", "-floor", "0", p}, exitUsage, []string{"-floor 0"}},
		{"curve y", []string{"curve", "-y", "cubic", p}, exitUsage, []string{`-y "cubic"`}},
		{"gen bad heads", []string{"gen", "-preset", "tiny", "-heads", "3", "-kv-heads", "2", "-o", filepath.Join(dir, "g.safetensors")}, exitUsage, []string{"-heads = 3", "-kv-heads"}},
		{"gen bad preset", []string{"gen", "-preset", "huge"}, exitUsage, []string{`-preset "huge"`, "tiny"}},
		{"gen bad dtype", []string{"gen", "-dtype", "F8"}, exitUsage, []string{`-dtype "F8"`, "BF16"}},
		{"gen unwritable", []string{"gen", "-preset", "tiny", "-o", filepath.Join(dir, "no", "g.safetensors")}, exitFail, []string{"g.safetensors"}},
		{"gen takes no FILE", []string{"gen", "x.safetensors"}, exitUsage, []string{"unexpected argument"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := cli(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if c.code != exitOK && c.args != nil && !strings.HasPrefix(stderr, "haeols: ") {
				t.Errorf("stderr %q not prefixed \"haeols: \"", stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := cli(t, "-h")
	if code != 0 || !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "2  usage error") {
		t.Errorf("haeols -h: exit %d\n%s", code, out)
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{c.name, "-h"}, {"help", c.name}} {
				code, out, stderr := cli(t, args...)
				if code != 0 || stderr != "" {
					t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
				}
				for _, want := range []string{"Usage: haeols " + c.name, "Example:", "haeols " + c.name + " ", "Flags:"} {
					if !strings.Contains(out, want) {
						t.Errorf("%v: usage lacks %q:\n%s", args, want, out)
					}
				}
			}
		})
	}
}

func TestDefaultSample(t *testing.T) {
	p := tinyFile(t)
	t.Run("samples/default.safetensors", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "samples"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p, filepath.Join(dir, "samples", "default.safetensors")); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		code, out, stderr := cli(t, "run", "-methods", "topk")
		if code != 0 || !strings.Contains(stderr, "using "+filepath.Join("samples", "default.safetensors")) || !strings.Contains(out, "topk") {
			t.Errorf("exit %d, stderr %q\n%s", code, stderr, out)
		}
	})
	t.Run("generated", func(t *testing.T) {
		t.Chdir(t.TempDir())
		code, out, stderr := cli(t, "info")
		if code != 0 || !strings.Contains(stderr, `generating preset "default" in memory`) || !strings.Contains(out, "generator default") {
			t.Errorf("exit %d, stderr %q\n%s", code, stderr, out)
		}
	})
}

func TestParseFlagsAndFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		ratio float64
		pos   []string
		err   string
	}{
		{"flags first", []string{"-ratio", "0.5", "f"}, 0.5, []string{"f"}, ""},
		{"flags last", []string{"f", "-ratio", "0.25"}, 0.25, []string{"f"}, ""},
		{"double dash", []string{"--", "-f"}, 0.3, []string{"-f"}, ""},
		{"none", nil, 0.3, nil, ""},
		{"two", []string{"a", "b"}, 0.3, nil, "too many arguments"},
		{"bad value", []string{"-ratio", "x"}, 0.3, nil, `invalid value "x" for flag -ratio`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := newFlags("t")
			ratio := fs.Float64("ratio", 0.3, "")
			pos, err := parse(&env{stdout: &bytes.Buffer{}}, fs, c.args, "usage", 1)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || *ratio != c.ratio || fmt.Sprint(pos) != fmt.Sprint(c.pos) {
				t.Errorf("pos %v ratio %v err %v; want %v %v", pos, *ratio, err, c.pos, c.ratio)
			}
		})
	}
}

func TestParseRatios(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"0.5,0.1,0.5, 1", "[0.1 0.5 1]", ""},
		{"0.3", "[0.3]", ""},
		{"", "", "empty list"},
		{"0.1,0", "", "-r 0 outside (0, 1]"},
		{"0.1,NaN", "", "-r NaN outside"},
		{"0.1;0.2", "", `"0.1;0.2" is not a number`},
	} {
		got, err := parseRatios("r", c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || fmt.Sprint(got) != c.want):
			t.Errorf("%q: %v %v, want %s", c.in, got, err, c.want)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	f, end := progressBar(&env{stderr: &b, progress: true}, "sweep")
	for i := 1; i <= 4; i++ {
		f(i, 4)
	}
	end()
	if s := b.String(); !strings.Contains(s, "100% 4/4") || !strings.HasSuffix(s, "\n") || !strings.Contains(s, "\r") {
		t.Errorf("progress output %q", s)
	}
	f, end = progressBar(&env{stderr: &b, progress: false}, "sweep")
	end()
	if f != nil {
		t.Errorf("progress callback without a terminal")
	}
}
