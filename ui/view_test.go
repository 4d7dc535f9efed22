package ui

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

func TestErrScalePos(t *testing.T) {
	tests := []struct {
		x, want float64
	}{
		{0, 0}, {-1, 0}, {1e-3, 0}, {1e-2, 0.25}, {0.1, 0.5}, {1, 0.75}, {10, 1}, {1e6, 1}, {math.Inf(1), 1},
	}
	for _, tc := range tests {
		if got := GridScale.Pos(tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Pos(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	if !math.IsNaN(GridScale.Pos(math.NaN())) {
		t.Errorf("Pos(NaN) is not NaN")
	}
}

func TestCellColorIsViridis(t *testing.T) {
	m, err := assets.Colormap("viridis")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		err result.Num
		pos float64
	}{
		{0, 0}, {1e-3, 0}, {0.1, 0.5}, {10, 1}, {100, 1},
	}
	for _, tc := range tests {
		c := m.At(tc.pos)
		want := strings.ToLower(hex3(c.R, c.G, c.B))
		if got := CellColor(tc.err); got != want {
			t.Errorf("CellColor(%g) = %s, want %s (viridis at %g)", float64(tc.err), got, want, tc.pos)
		}
	}
	if got := CellColor(result.Num(math.NaN())); got != NAColor {
		t.Errorf("CellColor(NaN) = %s, want %s", got, NAColor)
	}
	if CellColor(1e-3) == CellColor(10) {
		t.Errorf("the scale's ends have the same colour")
	}
}

func hex3(r, g, b uint8) string {
	const digits = "0123456789abcdef"
	out := []byte{'#'}
	for _, v := range []uint8{r, g, b} {
		out = append(out, digits[v>>4], digits[v&15])
	}
	return string(out)
}

func TestLegendTicks(t *testing.T) {
	ts := LegendTicks()
	want := []string{"0.001", "0.01", "0.1", "1", "10"}
	if len(ts) != len(want) {
		t.Fatalf("LegendTicks = %v, want labels %v", ts, want)
	}
	for i, tk := range ts {
		if tk.Label != want[i] || math.Abs(tk.Pos-float64(i)/4) > 1e-9 {
			t.Errorf("tick %d = %+v, want %s at %g", i, tk, want[i], float64(i)/4)
		}
	}
	if g := LegendGradient(); !strings.HasPrefix(g, "linear-gradient(to right, "+Hex(0)+" 0.0%") || !strings.HasSuffix(g, Hex(1)+" 100.0%)") {
		t.Errorf("LegendGradient = %s", g)
	}
}

func TestFmt(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{math.NaN(), "n/a"}, {0, "0"}, {0.046651, "0.04665"}, {1.5, "1.5"}, {5.307, "5.307"}, {1e-5, "1.00e-05"}, {12345, "1.23e+04"},
	}
	for _, tc := range tests {
		if got := Fmt(result.Num(tc.x)); got != tc.want {
			t.Errorf("Fmt(%g) = %q, want %q", tc.x, got, tc.want)
		}
	}
	if got := Pct(0.0466); got != "4.7%" {
		t.Errorf("Pct(0.0466) = %q", got)
	}
}

// wellFormed parses s as XML and counts its elements by name.
func wellFormed(t *testing.T, s string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	count := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return count
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, s)
		}
		if se, ok := tok.(xml.StartElement); ok {
			count[se.Name.Local]++
		}
	}
}

func TestProfileSVG(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		profile   []float64
		needles   []int
		rects     int
		triangles int
	}{
		{"empty", nil, nil, 0, 0},
		{"bars", []float64{0.01, 0.2, 0.05}, nil, 3, 0},
		{"nan and zero skipped", []float64{0.01, nan, 0, 0.3}, []int{3}, 2, 1},
		{"needle out of range ignored", []float64{0.01}, []int{-1, 5, 0}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := wellFormed(t, ProfileSVG(tc.profile, tc.needles))
			if c["rect"] != tc.rects || c["path"] != tc.triangles {
				t.Errorf("rects %d, needle marks %d; want %d, %d", c["rect"], c["path"], tc.rects, tc.triangles)
			}
		})
	}
}

func TestCurveSVG(t *testing.T) {
	nan := result.Num(math.NaN())
	cv := &wire.Curve{Methods: []string{"hae-ols", "quant"}, Ratios: []float64{0.1, 0.5, 1},
		Err: [][]result.Num{{0.3, 0.05, 0}, {nan, 0.01, 0}}}
	s := CurveSVG(cv, 0.3, "hae-ols")
	c := wellFormed(t, s)
	if c["path"] != 2 {
		t.Errorf("%d paths, want one per method", c["path"])
	}
	if !strings.Contains(s, `stroke-width="3"`) {
		t.Errorf("the primary method is not drawn thicker")
	}
	if !strings.Contains(s, ">0.30</text>") {
		t.Errorf("the current ratio is not marked")
	}
	// quant has no point at 0.1 (NaN): its path starts at ratio 0.5, x =
	// 48 + 380/2; zero error at ratio 1 is drawn on the bottom edge, so
	// hae-ols has two segments and quant one.
	if !strings.Contains(s, `<path d="M238.0 `) {
		t.Errorf("quant's path does not start at ratio 0.5:\n%s", s)
	}
	if strings.Count(s, "L") != 3 {
		t.Errorf("want three line segments (hae-ols 0.1 to 0.5 to 1, quant 0.5 to 1), got %d:\n%s", strings.Count(s, "L"), s)
	}
	if bottom := fmt.Sprintf(" %s ", f1(padT+plotH)); strings.Count(s, bottom) < 2 {
		t.Errorf("zero error is not on the bottom edge (y %s):\n%s", bottom, s)
	}
	wellFormed(t, CurveSVG(&wire.Curve{Methods: []string{"<x>"}, Ratios: []float64{0.5}, Err: [][]result.Num{{nan}}}, 0.5, ""))
}

func TestExplain(t *testing.T) {
	hae := &wire.HeadResult{Metrics: result.Metrics{Err: 0.047, ErrMax: 0.24, ErrCal: 0.016, Ratio: 0.3}, Method: "hae-ols",
		Stages: result.Stages{Sinks: 4, Recent: 32, Anchors: 231, Bin: 693, Summaries: 36, Dropped: 27, RankK: 17, RankV: 9,
			EnergyK: 0.972, EnergyV: 0.992, ExtraAnchors: 43, ExactBits: 547226, SummaryBits: 41779, FitResidual: 0.016},
		BudgetBits: 72 * 8192, FullBits: 240 * 8192}
	topk := &wire.HeadResult{Metrics: result.Metrics{Err: 0.05, ErrMax: 0.2, ErrCal: 0.04, Ratio: 0.3}, Method: "topk",
		Stages: result.Stages{Sinks: 4, Recent: 32, Anchors: 252, ExactBits: 72 * 8192}, BudgetBits: 72 * 8192, FullBits: 240 * 8192}
	quant := &wire.HeadResult{Metrics: result.Metrics{Err: 0.008, ErrMax: 0.04, ErrCal: 0.1, Ratio: 0.275}, Method: "quant",
		Stages: result.Stages{QuantBits: 4}, BudgetBits: 72 * 8192, FullBits: 240 * 8192}
	tests := []struct {
		name    string
		hr      *wire.HeadResult
		want    []string
		notWant []string
	}{
		{"nil", nil, nil, nil},
		{"n/a", &wire.HeadResult{Method: "quant", NA: "does not fit"}, []string{"quant cannot run at this ratio: does not fit."}, []string{"Selection"}},
		{"hae-ols", hae, []string{
			"Selection: of the 960 cached tokens, 267 tokens are kept exact: the first 4 (attention sinks), the last 32 (the recent window) and 231 anchors",
			"The other 693 tokens went to the recycle bin.",
			"63 summary tokens are fitted", "(about 11 bin tokens each)", "27 of them got zero weight and were dropped, leaving 36.",
			"SVD rank 17 (keeping 97.2% of their energy)", "SVD rank 9 (keeping 99.2% of their energy)", "buy 43 more exact anchors",
			"needs 240.0 KiB; the budget at this ratio is 72.0 KiB", "The ratio actually used is 30.0%.",
			"4.7% on average and 24.0% at worst (calibration queries: 1.6%)",
		}, []string{"Quantization", "Low rank"}},
		{"topk", topk, []string{"288 tokens are kept exact", "252 anchors with the most attention mass.", "72.0 KiB used."}, []string{"Reconstruction", "Compression", "recycle bin", "entropy", "summaries"}},
		{"full rank", &wire.HeadResult{Method: "hae-ols", Metrics: result.Metrics{Ratio: 0.3},
			Stages: result.Stages{Sinks: 4, Recent: 32, Anchors: 10, Bin: 100, Summaries: 41, RankK: 41, RankV: 41, EnergyK: 1, EnergyV: 1}},
			[]string{"Compression: the SVD keeps full rank (41) here, so the summaries are stored without factoring"}, []string{"SVD rank 41 ("}},
		{"quant", quant, []string{"Quantization: older keys and values are stored with 4 bits"}, []string{"Selection", "Reconstruction"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Join(Explain(tc.hr, 960), "\n")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("explanation lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("explanation has %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestFileSource(t *testing.T) {
	tests := []struct {
		name, kind string
		bad        bool
	}{
		{"a.safetensors", "file", false}, {"A.NPZ", "file", false}, {"x.npy", "file", false},
		{"stories15M.bin", "llama", false}, {"SmolLM2.Q4_K_M.gguf", "checkpoint", false}, {"notes.txt", "", true}, {"noext", "", true},
	}
	for _, tc := range tests {
		src, err := fileSource(tc.name)
		if (err != nil) != tc.bad {
			t.Errorf("fileSource(%q) error %v, want bad=%v", tc.name, err, tc.bad)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), tc.name) {
				t.Errorf("fileSource(%q) error %q does not name the file", tc.name, err)
			}
			continue
		}
		if src.Kind != tc.kind || src.Name != tc.name {
			t.Errorf("fileSource(%q) = %+v, want kind %q", tc.name, src, tc.kind)
		}
	}
}

func TestEmbedSnippet(t *testing.T) {
	s := state.Default()
	s.Layer, s.Head = 1, 2
	got := EmbedSnippet("https://example.org/haeols/", s)
	for _, w := range []string{`<iframe src="https://example.org/haeols/embed.html?`, "head=2&amp;", "layer=1&amp;", "method=hae-ols", `title="haeols`} {
		if !strings.Contains(got, w) {
			t.Errorf("EmbedSnippet = %s, lacks %q", got, w)
		}
	}
	if strings.Contains(got, "&l") && !strings.Contains(got, "&amp;l") {
		t.Errorf("EmbedSnippet has an unescaped &: %s", got)
	}
}

func TestShippedSamplesListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "samples", "*.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, "samples/"+filepath.Base(f))
	}
	got := append([]string(nil), ShippedSamples...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ShippedSamples = %v, but the repository's samples/ holds %v", got, want)
	}
	for _, f := range ShippedSamples {
		if kind, err := state.SampleKind(f); err != nil || kind != "url" {
			t.Errorf("shipped sample %q is not a valid sample URL: %v", f, err)
		}
	}
}

// TestChartPatchable checks when the page may change a shown chart in
// place: a new profile of the same shape, or the curve at another ratio,
// where only the current-ratio marker differs.
func TestChartPatchable(t *testing.T) {
	a := profileChart([]float64{0.01, 0.2, 0.05}, []int{1})
	b := profileChart([]float64{0.02, 0.1, 0.04}, []int{1})
	if !b.patchable(a) {
		t.Errorf("a profile of the same shape is not patchable")
	}
	if c := profileChart([]float64{0.02, 0.1}, []int{1}); c.patchable(a) {
		t.Errorf("a profile with fewer bars is patchable")
	}
	if c := profileChart([]float64{0.01, 0.2, 0.05}, nil); c.patchable(a) {
		t.Errorf("a profile without the needle mark is patchable")
	}
	if b.patchable(nil) {
		t.Errorf("patchable over nothing shown")
	}
	cv := &wire.Curve{Methods: []string{"hae-ols", "topk"}, Ratios: []float64{0.1, 0.5, 1}, Err: [][]result.Num{{0.3, 0.05, 0}, {0.4, 0.1, 0}}}
	c3, c5 := curveChart(cv, 0.3, "hae-ols"), curveChart(cv, 0.5, "hae-ols")
	if !c5.patchable(c3) {
		t.Fatalf("the curve at another ratio is not patchable")
	}
	var changed []string
	for i, e := range c5.Elems {
		if !reflect.DeepEqual(e, c3.Elems[i]) {
			changed = append(changed, e.Tag)
		}
	}
	if strings.Join(changed, " ") != "line text" {
		t.Errorf("moving the ratio changes %v, want the marker's line and label only", changed)
	}
	if curveChart(cv, 0.5, "topk").patchable(c3) != true {
		t.Errorf("another primary method (thicker line) is not patchable")
	}
}

// TestFileOptionsShowTheSample: a link to a file of the site's samples/
// that the picker does not list adds it, so that the picker shows the
// sample that is open, not the first option; the shipped files are listed
// once and other samples add nothing.
func TestFileOptionsShowTheSample(t *testing.T) {
	tests := []struct {
		sample string
		extra  string // the option added ("": none)
	}{
		{"samples/mine.safetensors", "samples/mine.safetensors"},
		{"samples/other.npz", "samples/other.npz"},
		{ShippedSamples[1], ""},
		{"default", ""},
		{"models/kjv3m.bin", ""},
		{"file:mine.npz", ""},
	}
	shipped := strings.Join(ShippedSamples, " ")
	for _, tc := range tests {
		c := &Root{}
		c.S = state.Default()
		c.S.Sample = tc.sample
		var got []string
		for _, o := range c.FileOptions() {
			got = append(got, o.Value)
		}
		want := append([]string(nil), ShippedSamples...)
		if tc.extra != "" {
			want = append(want, tc.extra)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("sample %q: options %v, want %v", tc.sample, got, want)
		}
	}
	if got := strings.Join(ShippedSamples, " "); got != shipped {
		t.Errorf("FileOptions changed ShippedSamples from %s to %s", shipped, got)
	}
}
