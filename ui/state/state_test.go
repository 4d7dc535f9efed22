package state

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/haeols/haeols/wire"
)

func TestParseGood(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  func(*State)
	}{
		{"empty", "", func(*State) {}},
		{"preset", "sample=needle", func(s *State) { s.Sample = "needle" }},
		{"shipped file", "sample=samples/induction.safetensors", func(s *State) { s.Sample = "samples/induction.safetensors" }},
		{"head", "layer=3&head=2", func(s *State) { s.Layer, s.Head = 3, 2 }},
		{"ratio", "ratio=0.1", func(s *State) { s.Ratio = 0.1 }},
		{"params", "lambda=0&phi=1&tau=0.9", func(s *State) { s.Lambda, s.Phi, s.Tau = 0, 1, 0.9 }},
		{"methods", "methods=snapkv,hae-ols,snapkv&method=snapkv", func(s *State) { s.Methods = []string{"snapkv", "hae-ols"}; s.Method = "snapkv" }},
		{"primary added", "methods=topk&method=quant", func(s *State) { s.Methods = []string{"quant", "topk"}; s.Method = "quant" }},
		{"panel", "panel=diff", func(s *State) { s.Panel = "diff" }},
		{"compute", "compute=gpu", func(s *State) { s.Compute = "gpu" }},
		{"budget", "budget=adakv", func(s *State) { s.Budget = "adakv" }},
		{"recompress", "recompress=16", func(s *State) { s.Recompress = 16 }},
		{"tour step", "tour=3", func(s *State) { s.Tour, s.Panel = 3, "diff" }},
		{"tour step and panel", "tour=2&panel=all", func(s *State) { s.Tour, s.Panel = 2, "all" }},
		{"last value wins", "ratio=0.3&ratio=0.4", func(s *State) { s.Ratio = 0.4 }},
		{"leading ?", "?head=1", func(s *State) { s.Head = 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msgs := ParseQuery(tc.query)
			if len(msgs) != 0 {
				t.Errorf("ParseQuery(%q) messages %q, want none", tc.query, msgs)
			}
			want := Default()
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseQuery(%q) = %+v, want %+v", tc.query, got, want)
			}
		})
	}
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  func(*State)
		msg   string // substring of the only message
	}{
		{"ratio too small", "ratio=0", func(s *State) { s.Ratio = wire.RatioSlider.Min }, "ratio: 0 is outside"},
		{"ratio too large", "ratio=3", func(s *State) { s.Ratio = 1 }, "ratio: 3 is outside"},
		{"ratio NaN", "ratio=NaN", func(*State) {}, `ratio: "NaN" is not a number`},
		{"ratio Inf", "ratio=Inf", func(*State) {}, `ratio: "Inf" is not a number`},
		{"ratio text", "ratio=half", func(*State) {}, `ratio: "half" is not a number`},
		{"lambda negative", "lambda=-1", func(s *State) { s.Lambda = 0 }, "lambda: -1 is outside"},
		{"phi above", "phi=1.5", func(s *State) { s.Phi = 1 }, "phi: 1.5 is outside"},
		{"tau low", "tau=0.1", func(s *State) { s.Tau = 0.5 }, "tau: 0.1 is outside"},
		{"layer text", "layer=x", func(*State) {}, `layer: "x" is not a whole number`},
		{"layer negative", "layer=-2", func(*State) {}, "layer: -2 is negative"},
		{"head huge", "head=999999", func(*State) {}, "head: 999999 is too large"},
		{"sample traversal", "sample=samples/../etc/passwd", func(*State) {}, "sample:"},
		{"sample absolute", "sample=https://evil.example/x.safetensors", func(*State) {}, "sample:"},
		{"sample bad ext", "sample=samples/x.exe", func(*State) {}, "sample:"},
		{"local file", "sample=file:mine.npz", func(*State) {}, "cannot be opened from a link"},
		{"method bad", "method=Hae%20OLS", func(*State) {}, `method: "Hae OLS" is not a method name`},
		{"methods none", "methods=,,", func(*State) {}, "methods: no usable method"},
		{"methods one bad", "methods=hae-ols,<b>", func(s *State) { s.Methods = []string{"hae-ols"} }, `methods: "<b>" is not a method name`},
		{"panel bad", "panel=left", func(*State) {}, `panel: "left" is not one of`},
		{"compute bad", "compute=cuda", func(*State) {}, `compute: "cuda" is not one of auto, cpu, gpu`},
		{"budget bad", "budget=even", func(*State) {}, `budget: "even" is not one of uniform, pyramid, adakv, hae`},
		{"recompress bad", "recompress=5", func(*State) {}, "recompress: \"5\" is not one of [0 4 8 16 32]"},
		{"tour bad", "tour=6", func(*State) {}, "tour: \"6\" is not a step from 1 to 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msgs := ParseQuery(tc.query)
			if len(msgs) != 1 || !strings.Contains(msgs[0], tc.msg) {
				t.Errorf("ParseQuery(%q) messages %q, want one containing %q", tc.query, msgs, tc.msg)
			}
			want := Default()
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseQuery(%q) = %+v, want %+v", tc.query, got, want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	states := []State{
		Default(),
		{Sample: "samples/needle.safetensors", Layer: 1, Head: 3, Methods: []string{"snapkv", "hae-ols", "quant"}, Method: "quant",
			Ratio: 0.07, Lambda: 0.1, Phi: 0.333, Tau: 0.95, Panel: "comp", Compute: "gpu", Budget: "hae"},
		{Sample: "tiny", Methods: []string{"full"}, Method: "full", Ratio: 1, Lambda: 1, Phi: 0, Tau: 1, Panel: "diff", Compute: "cpu", Budget: "uniform"},
		{Sample: "default", Methods: []string{"hae-ols"}, Method: "hae-ols", Ratio: 0.1 + 0.2, Lambda: 0.25, Phi: 0.25, Tau: 0.99, Panel: "orig", Compute: "gpu", Budget: "pyramid"},
	}
	for _, s := range states {
		q := s.Encode()
		got, msgs := ParseQuery(q)
		if len(msgs) != 0 {
			t.Errorf("ParseQuery(Encode(%+v)=%q) messages %q", s, q, msgs)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip of %+v via %q gave %+v", s, q, got)
		}
		if q2 := got.Encode(); q2 != q {
			t.Errorf("Encode not stable: %q then %q", q, q2)
		}
	}
}

func TestLocalFileEncodes(t *testing.T) {
	s := Default()
	s.Sample = FilePrefix + "my model.npz"
	q := s.Encode()
	if !strings.Contains(q, "sample=file%3Amy+model.npz") {
		t.Errorf("Encode = %q, want the local file named", q)
	}
	if s.Source() != nil {
		t.Errorf("Source of a local file = %+v, want nil", s.Source())
	}
	e, _ := url.ParseQuery(s.EmbedQuery())
	if e.Get("sample") != DefaultSample {
		t.Errorf("EmbedQuery sample = %q, want %q", e.Get("sample"), DefaultSample)
	}
}

func TestSource(t *testing.T) {
	tests := []struct {
		sample string
		want   *wire.Source
	}{
		{"default", &wire.Source{Kind: "preset", Preset: "default"}},
		{"samples/needle.safetensors", &wire.Source{Kind: "url", URL: "samples/needle.safetensors"}},
		{"file:x.npy", nil},
	}
	for _, tc := range tests {
		s := Default()
		s.Sample = tc.sample
		if got := s.Source(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Source(%q) = %+v, want %+v", tc.sample, got, tc.want)
		}
	}
}

func TestEmbedQuery(t *testing.T) {
	s := Default()
	s.Layer, s.Head, s.Method, s.Ratio = 2, 1, "snapkv", 0.125
	q, err := url.ParseQuery(s.EmbedQuery())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"sample": "default", "layer": "2", "head": "1", "method": "snapkv", "ratio": "0.125", "tau": "1"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("EmbedQuery %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if q.Has("panel") || q.Has("methods") {
		t.Errorf("EmbedQuery %q carries app-only keys", s.EmbedQuery())
	}
}

func TestFit(t *testing.T) {
	known := []string{"hae-ols", "hae-nosvd", "snapkv", "streaming", "quant"}
	tests := []struct {
		name       string
		in         State
		want       func(*State)
		layers, hs int
		nmsgs      int
	}{
		{"fits", Default(), func(*State) {}, 4, 4, 0},
		{"layer past", State{Layer: 4, Head: 1, Methods: []string{"hae-ols"}, Method: "hae-ols"},
			func(s *State) { s.Layer = 0 }, 4, 4, 1},
		{"head past", State{Layer: 1, Head: 9, Methods: []string{"hae-ols"}, Method: "hae-ols"},
			func(s *State) { s.Head = 0 }, 4, 4, 1},
		{"unknown compared", State{Methods: []string{"hae-ols", "magic"}, Method: "hae-ols"},
			func(s *State) { s.Methods = []string{"hae-ols"} }, 1, 1, 1},
		{"unknown primary", State{Methods: []string{"magic", "snapkv"}, Method: "magic"},
			func(s *State) { s.Methods = []string{"snapkv"}; s.Method = "snapkv" }, 1, 1, 2},
		{"nothing known", State{Methods: []string{"magic"}, Method: "magic"},
			func(s *State) { s.Methods = []string{"hae-ols"}; s.Method = "hae-ols" }, 1, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			msgs := got.Fit(tc.layers, tc.hs, known)
			want := tc.in
			want.Methods = append([]string(nil), tc.in.Methods...)
			tc.want(&want)
			if !reflect.DeepEqual(got, want) || len(msgs) != tc.nmsgs {
				t.Errorf("Fit = %+v %q, want %+v with %d messages", got, msgs, want, tc.nmsgs)
			}
		})
	}
}

func TestToggle(t *testing.T) {
	s := Default()
	s.Toggle("quant")
	if !s.Compared("quant") {
		t.Errorf("Toggle(quant) did not add it: %v", s.Methods)
	}
	s.Toggle("quant")
	if s.Compared("quant") {
		t.Errorf("second Toggle(quant) did not remove it: %v", s.Methods)
	}
	s.Toggle(s.Method)
	if !s.Compared(s.Method) {
		t.Errorf("Toggle removed the primary method: %v", s.Methods)
	}
	s.SetMethod("topk")
	if s.Method != "topk" || !s.Compared("topk") {
		t.Errorf("SetMethod(topk) = %q %v", s.Method, s.Methods)
	}
}

func TestSampleKind(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{"default", "preset", false},
		{"samples/a.npz", "url", false},
		{"samples/a.npy", "url", false},
		{"file:whatever it is.bin", "file", false},
		{"file:", "", true},
		{"models/kjv3m.bin", "model", false},
		{"models/induction.gguf", "model", false},
		{"models/a.safetensors", "", true},
		{"models/../a.gguf", "", true},
		{"models/.gguf", "", true},
		{"samples/", "", true},
		{"samples/sub/a.npz", "", true},
		{"/abs", "", true},
		{"", "", true},
		{"UPPER", "", true},
	}
	for _, tc := range tests {
		got, err := SampleKind(tc.in)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("SampleKind(%q) = %q, %v; want %q, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		s          string
		name, file bool
	}{
		{"hae-ols", true, false},
		{"a", true, false},
		{"x.npy", true, true},
		{"Stories260K.safetensors", false, true},
		{"stories260K.safetensors", false, true},
		{"-x", false, false},
		{".npz", false, false},
		{"a b.npz", false, false},
		{"", false, false},
		{strings.Repeat("a", 64), true, false},
		{strings.Repeat("a", 65), false, false},
		{strings.Repeat("a", 128) + ".npz", false, true},
		{strings.Repeat("a", 129) + ".npz", false, false},
		{"ü", false, false},
	}
	for _, tc := range tests {
		if got := isName(tc.s); got != tc.name {
			t.Errorf("isName(%q) = %v, want %v", tc.s, got, tc.name)
		}
		if got := isFileName(tc.s); got != tc.file {
			t.Errorf("isFileName(%q) = %v, want %v", tc.s, got, tc.file)
		}
	}
}

// TestModelView: a bundled model's view (its prompt, task and depth)
// round-trips through its link, its source asks the worker for the
// prompt's run, and the embed query carries the prompt.
func TestModelView(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  func(*State)
		req   wire.Prompt
	}{
		{"model, own text", "sample=models/kjv3m.bin", func(s *State) { s.Sample = "models/kjv3m.bin" }, wire.Prompt{}},
		{"prompt", "sample=models/kjv3m.bin&prompt=" + url.QueryEscape("  In the beginning\nGod "), func(s *State) {
			s.Sample, s.Prompt = "models/kjv3m.bin", "  In the beginning\nGod "
		}, wire.Prompt{Text: "  In the beginning\nGod "}},
		{"pass key", "sample=models/kjv3m.bin&task=passkey&depth=0.2&prompt=ignored", func(s *State) {
			s.Sample, s.Task, s.Depth, s.Prompt = "models/kjv3m.bin", "passkey", 0.2, "ignored"
		}, wire.Prompt{Task: "passkey", Depth: 0.2}},
		{"copy", "sample=models/stories260K.bin&task=copy", func(s *State) { s.Sample, s.Task = "models/stories260K.bin", "copy" }, wire.Prompt{Task: "copy"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, msgs := ParseQuery(tc.query)
			want := Default()
			tc.want(&want)
			if len(msgs) != 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("ParseQuery(%q) = %+v (%q), want %+v", tc.query, got, msgs, want)
			}
			if !got.IsModel() {
				t.Errorf("%s is not a model view", got.Sample)
			}
			q := got.Values()
			for _, k := range []string{"prompt", "task", "depth"} {
				if _, ok := q[k]; !ok {
					t.Errorf("the link of a model view has no %s: %s", k, got.Encode())
				}
			}
			back, msgs := ParseQuery(got.Encode())
			if len(msgs) != 0 || !reflect.DeepEqual(back, got) {
				t.Errorf("round trip: %+v (%q), want %+v", back, msgs, got)
			}
			src := got.Source()
			if src == nil || src.Kind != "llama" || src.URL != got.Sample || src.Prompt == nil || !reflect.DeepEqual(*src.Prompt, tc.req) {
				t.Errorf("Source() = %+v, want a llama source of %s running %+v", src, got.Sample, tc.req)
			}
			eq, err := url.ParseQuery(got.EmbedQuery())
			if err != nil || eq.Get("sample") != got.Sample || eq.Get("prompt") != got.Prompt || eq.Get("task") != got.Task || eq.Get("depth") != Fmt(got.Depth) {
				t.Errorf("EmbedQuery() = %q: want the sample, prompt, task and depth", got.EmbedQuery())
			}
		})
	}
	// A sample that is no model leaves them out of its links unless set.
	if q := Default().Values(); q.Has("prompt") || q.Has("task") || q.Has("depth") {
		t.Errorf("the default view's link names a prompt: %v", q.Encode())
	}
	if q, _ := url.ParseQuery(Default().EmbedQuery()); q.Has("prompt") {
		t.Errorf("the default view's embed names a prompt")
	}
}

func TestModelViewBad(t *testing.T) {
	tests := []struct {
		query string
		msg   string
		want  func(*State)
	}{
		{"task=sing", `task: "sing" is not passkey or copy`, func(*State) {}},
		{"depth=1.5", "depth: 1.5 is outside", func(s *State) { s.Depth = 1 }},
		{"depth=x", `depth: "x" is not a number`, func(*State) {}},
		{"prompt=a%00b%1bc", "control characters dropped", func(s *State) { s.Prompt = "abc" }},
		{"prompt=a%ffb", "invalid UTF-8 replaced", func(s *State) { s.Prompt = "a\uFFFDb" }},
		{"prompt=" + strings.Repeat("é", wire.MaxPromptText), "cut to", func(s *State) { s.Prompt = strings.Repeat("é", wire.MaxPromptText/2) }},
		{"sample=models/../x.bin", "sample:", func(*State) {}},
		{"sample=models/kjv3m.safetensors", "not a model in models/", func(*State) {}},
	}
	for _, tc := range tests {
		got, msgs := ParseQuery(tc.query)
		want := Default()
		tc.want(&want)
		if len(msgs) != 1 || !strings.Contains(msgs[0], tc.msg) || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseQuery(%.60q) = %+v, %q; want %+v and one message containing %q", tc.query, got, msgs, want, tc.msg)
		}
	}
	for sample, model := range map[string]bool{"file:mine.bin": true, "file:Mine.GGUF": true, "file:SmolLM2-135M/": true, "file:mine.npz": false, "file:model.safetensors": false} {
		if s := (State{Sample: sample}); s.IsModel() != model {
			t.Errorf("%s: IsModel %v, want %v", sample, s.IsModel(), model)
		}
	}
}
