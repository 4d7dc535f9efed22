// Package state is the haeols web app's view state in one place, with the
// URL query as its serialization: which sample, which head, which methods
// are compared, the ratio and the HAE-OLS parameters, and which heatmap
// panel is shown. Parse reads a query (clamping or rejecting bad values with
// a message a person can read) and Encode writes it back; the two round-trip.
//
// The package is pure Go: it builds natively and for GOOS=js GOARCH=wasm and
// computes nothing the core computes; the defaults of the method
// parameters are the core's, their ranges those of their sliders
// (wire.Sliders).
package state

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/wire"
)

// Defaults of the view; the method parameters' are the core's
// (core.DefaultRatio, core.DefaultParams).
const (
	DefaultSample = wire.DefaultPreset
	DefaultMethod = "hae-ols"
	DefaultPanel  = "all"
	// DefaultCompute is where the core computes: "auto" is a hardware GPU
	// through WebGPU where the browser has one (the WGSL kernels, equal to
	// the CPU's within float32 tolerances), else the CPU kernels (whose
	// numbers match the CLI bit for bit); "cpu" and "gpu" force one ("gpu"
	// also takes a software adapter).
	DefaultCompute = "auto"
	// DefaultDepth is where the pass-key preset plants its key (the
	// middle of the filler).
	DefaultDepth = 0.5
)

// Tasks are the values of State.Task: "" (the prompt and the model's own
// continuation), "passkey" and "copy" (eval.PassKey, eval.Copy).
var Tasks = []string{"", "passkey", "copy"}

// ModelsDir is where the site's bundled models live, relative to the app:
// llama2.c checkpoints (Sample "models/NAME.bin") and GGUF files
// ("models/NAME.gguf", such as the constructed induction model).
const ModelsDir = "models/"

// Computes are the values of State.Compute.
var Computes = []string{"auto", "cpu", "gpu"}

// DefaultMethods are the methods compared when the URL names none:
// HAE-OLS, one ablation and the strongest simple baselines.
var DefaultMethods = []string{"hae-ols", "hae-nosvd", "snapkv", "streaming"}

// Bounds of the other values (the method parameters' are their
// sliders', wire.Sliders).
const (
	// MaxIndex bounds layer and head indices before a sample is known.
	MaxIndex = 4096
	// MaxMethods bounds the compared set.
	MaxMethods = 16
)

// Panels are the heatmap panels (wire.Maps.Panel).
var Panels = []string{"all", "orig", "comp", "diff"}

// TourPanels are the heatmap panels of the guided tour's steps (tour=N
// in a link, 1-based): the attention, what selection keeps, what the fit
// leaves, all three for the SVD stage, and all three beside what the
// model says. A link naming a step and no panel opens the step's.
var TourPanels = []string{"orig", "comp", "diff", "all", "all"}

// FilePrefix marks a sample that is a person's local file (Sample
// "file:NAME"); such a sample cannot be reopened from a link.
const FilePrefix = "file:"

// SamplesDir is where the shipped sample files live, relative to the app.
const SamplesDir = "samples/"

// State is the whole view.
type State struct {
	// Sample is a generator preset name ("default"), a shipped file
	// ("samples/needle.safetensors"), or FilePrefix+name for a local file.
	Sample string
	// Layer and Head select a query head.
	Layer, Head int
	// Methods are the compared methods (no duplicates, in the user's order).
	Methods []string
	// Method is the primary method: the grid's colours, the heatmap.
	Method string
	// Ratio, Lambda, Phi and Tau are the method parameters.
	Ratio, Lambda, Phi, Tau float64
	// Panel is the heatmap panel shown: one of Panels.
	Panel string
	// Compute is where the core computes: one of Computes.
	Compute string
	// Budget is how the ratio's total memory is shared among the KV
	// heads: one of wire.Budgets.
	Budget string
	// Recompress is the end-to-end view's decoding: the cache re-compressed
	// every so many decoded tokens, one of wire.Recompressions (0: once).
	Recompress int
	// Tour is the guided tour's step, 1 to len(TourPanels); 0: no tour.
	Tour int
	// Prompt, Task and Depth are what a model sample (a llama2.c
	// checkpoint, a GGUF file or a Hugging Face folder, IsModel) runs:
	// the prompt's text for a model with a tokenizer
	// ("": the model's own text from BOS), or a task (one of Tasks) and,
	// for "passkey", the key's depth in [0, 1].
	Prompt string
	Task   string
	Depth  float64
}

// Default returns the view a bare URL opens.
func Default() State {
	s := State{
		Sample: DefaultSample, Methods: slices.Clone(DefaultMethods), Method: DefaultMethod,
		Panel: DefaultPanel, Compute: DefaultCompute, Depth: DefaultDepth, Budget: wire.Budgets[0],
	}
	s.SetParams(DefaultParams())
	return s
}

// DefaultParams are the method parameters a bare URL opens with: the
// core's defaults.
func DefaultParams() wire.Params {
	p := core.DefaultParams(core.DefaultRatio)
	return wire.Params{Ratio: p.Ratio, Lambda: p.Lambda, Phi: p.Phi, Tau: p.Tau}
}

// isName reports whether s is a preset or method name: 1 to 64 of
// [a-z0-9_.-], starting with a letter or digit. (Hand-written rather than a
// regexp, which would add to the app's download.)
func isName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !isAlnum(s[0], false) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c, false) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isFileName reports whether s is a shipped sample's file name: 1 to 128 of
// [A-Za-z0-9_.-], starting with a letter or digit, then .safetensors, .npz
// or .npy.
func isFileName(s string) bool {
	base, ok := "", false
	for _, ext := range []string{".safetensors", ".npz", ".npy"} {
		if b, found := strings.CutSuffix(s, ext); found {
			base, ok = b, true
			break
		}
	}
	if !ok || len(base) == 0 || len(base) > 128 || !isAlnum(base[0], true) {
		return false
	}
	for i := 1; i < len(base); i++ {
		if c := base[i]; !isAlnum(c, true) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte, upper bool) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || upper && c >= 'A' && c <= 'Z'
}

// Parse reads a view from a URL query. Values it cannot use are replaced by
// their defaults (or clamped into range) and each such repair is described
// in one message that names the query parameter; the returned State is
// always valid. A local file sample ("file:NAME") cannot be reopened from a
// link: Parse switches to the default sample and says so.
func Parse(q url.Values) (State, []string) {
	s := Default()
	var msgs []string
	warn := func(format string, a ...any) { msgs = append(msgs, fmt.Sprintf(format, a...)) }

	if v, ok := get(q, "sample"); ok {
		switch kind, err := SampleKind(v); {
		case err != nil:
			warn("sample: %v; showing %q", err, DefaultSample)
		case kind == "file":
			warn("sample: %q was a file on the sharer's computer and cannot be opened from a link; showing %q", strings.TrimPrefix(v, FilePrefix), DefaultSample)
		default:
			s.Sample = v
		}
	}
	s.Layer = parseIndex(q, "layer", &msgs)
	s.Head = parseIndex(q, "head", &msgs)
	if v, ok := get(q, "methods"); ok {
		var ms []string
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			switch {
			case m == "":
			case !isName(m):
				warn("methods: %q is not a method name; ignored", m)
			case slices.Contains(ms, m):
			case len(ms) == MaxMethods:
				warn("methods: more than %d methods; %q ignored", MaxMethods, m)
			default:
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			warn("methods: no usable method in %q; comparing the defaults", v)
		} else {
			s.Methods = ms
		}
	}
	if v, ok := get(q, "method"); ok {
		if isName(v) {
			s.Method = v
		} else {
			warn("method: %q is not a method name; using %q", v, DefaultMethod)
		}
	}
	if !slices.Contains(s.Methods, s.Method) {
		s.Methods = append([]string{s.Method}, s.Methods...)
	}
	p := s.Params()
	for _, sl := range wire.Sliders {
		x := sl.Of(&p)
		*x = parseFloat(q, sl.Name, *x, sl.Min, sl.Max, &msgs)
	}
	s.SetParams(p)
	if v, ok := get(q, "panel"); ok {
		if slices.Contains(Panels, v) {
			s.Panel = v
		} else {
			warn("panel: %q is not one of %s; using %q", v, strings.Join(Panels, ", "), DefaultPanel)
		}
	}
	if v, ok := get(q, "tour"); ok {
		if k, err := strconv.Atoi(v); err == nil && k >= 1 && k <= len(TourPanels) {
			s.Tour = k
			if _, given := get(q, "panel"); !given {
				s.Panel = TourPanels[k-1]
			}
		} else {
			warn("tour: %q is not a step from 1 to %d; no tour", v, len(TourPanels))
		}
	}
	if v, ok := get(q, "recompress"); ok {
		if k, err := strconv.Atoi(v); err == nil && slices.Contains(wire.Recompressions, k) {
			s.Recompress = k
		} else {
			warn("recompress: %q is not one of %v; compressing once", v, wire.Recompressions)
		}
	}
	if v, ok := get(q, "budget"); ok {
		if slices.Contains(wire.Budgets, v) {
			s.Budget = v
		} else {
			warn("budget: %q is not one of %s; using %q", v, strings.Join(wire.Budgets, ", "), wire.Budgets[0])
		}
	}
	if v, ok := get(q, "compute"); ok {
		if slices.Contains(Computes, v) {
			s.Compute = v
		} else {
			warn("compute: %q is not one of %s; using %q", v, strings.Join(Computes, ", "), DefaultCompute)
		}
	}
	if v, ok := q["prompt"]; ok && len(v) > 0 {
		// Not trimmed: a prompt's spaces are part of it.
		p, repaired := CleanPrompt(v[len(v)-1])
		if repaired != "" {
			warn("prompt: %s", repaired)
		}
		s.Prompt = p
	}
	if v, ok := get(q, "task"); ok {
		if slices.Contains(Tasks, v) {
			s.Task = v
		} else {
			warn("task: %q is not passkey or copy; running the prompt", v)
		}
	}
	s.Depth = parseFloat(q, "depth", DefaultDepth, 0, 1, &msgs)
	return s, msgs
}

// CleanPrompt makes a prompt text the worker takes: valid UTF-8, no
// control characters but newline and tab, at most wire.MaxPromptText
// bytes (cut at a character). It returns what it repaired ("" when
// nothing).
func CleanPrompt(p string) (string, string) {
	var why []string
	if !utf8.ValidString(p) {
		p = strings.ToValidUTF8(p, "\uFFFD")
		why = append(why, "invalid UTF-8 replaced")
	}
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, p)
	if clean != p {
		why = append(why, "control characters dropped")
		p = clean
	}
	if len(p) > wire.MaxPromptText {
		cut := wire.MaxPromptText
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		p = p[:cut]
		why = append(why, fmt.Sprintf("cut to %d bytes", wire.MaxPromptText))
	}
	return p, strings.Join(why, ", ")
}

// ParseQuery is Parse of a raw query string ("a=1&b=2", with or without a
// leading "?"). A query that does not parse at all gives the default view.
func ParseQuery(raw string) (State, []string) {
	q, err := url.ParseQuery(strings.TrimPrefix(raw, "?"))
	if err != nil {
		s, msgs := Parse(q)
		return s, append([]string{fmt.Sprintf("link: %v", err)}, msgs...)
	}
	return Parse(q)
}

func get(q url.Values, key string) (string, bool) {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return "", false
	}
	return strings.TrimSpace(v[len(v)-1]), true
}

func parseIndex(q url.Values, key string, msgs *[]string) int {
	v, ok := get(q, key)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		*msgs = append(*msgs, fmt.Sprintf("%s: %q is not a whole number; using 0", key, v))
		return 0
	case n < 0:
		*msgs = append(*msgs, fmt.Sprintf("%s: %d is negative; using 0", key, n))
		return 0
	case n > MaxIndex:
		*msgs = append(*msgs, fmt.Sprintf("%s: %d is too large; using 0", key, n))
		return 0
	}
	return n
}

func parseFloat(q url.Values, key string, def, lo, hi float64, msgs *[]string) float64 {
	v, ok := get(q, key)
	if !ok {
		return def
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		*msgs = append(*msgs, fmt.Sprintf("%s: %q is not a number; using %s", key, v, Fmt(def)))
		return def
	}
	if c := min(max(x, lo), hi); c != x {
		*msgs = append(*msgs, fmt.Sprintf("%s: %s is outside [%s, %s]; using %s", key, v, Fmt(lo), Fmt(hi), Fmt(c)))
		return c
	}
	return x
}

// Fmt formats a parameter value the way the URL holds it: the shortest
// decimal that reads back as the same float64.
func Fmt(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// SampleKind classifies a Sample value: "preset", "url" (a shipped file
// under samples/) or "file" (a local file), or says what is wrong with it.
func SampleKind(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, FilePrefix):
		if strings.TrimPrefix(v, FilePrefix) == "" {
			return "", fmt.Errorf("%q names no file", v)
		}
		return "file", nil
	case strings.HasPrefix(v, ModelsDir):
		name := strings.TrimPrefix(v, ModelsDir)
		base, ok := strings.CutSuffix(name, ".bin")
		if !ok {
			base, ok = strings.CutSuffix(name, ".gguf")
		}
		if path.Clean(v) != v || !ok || !isFileName(base+".npy") {
			return "", fmt.Errorf("%q is not a model in %s (want NAME.bin or NAME.gguf)", v, ModelsDir)
		}
		return "model", nil
	case strings.HasPrefix(v, SamplesDir):
		base := strings.TrimPrefix(v, SamplesDir)
		if path.Clean(v) != v || !isFileName(base) {
			return "", fmt.Errorf("%q is not a file in %s (want NAME.safetensors, .npz or .npy)", v, SamplesDir)
		}
		return "url", nil
	case isName(v):
		return "preset", nil
	}
	return "", fmt.Errorf("%q is neither a preset name, %sFILE nor %sNAME.bin or .gguf", v, SamplesDir, ModelsDir)
}

// IsModel reports whether the view's sample is a model (a bundled
// llama2.c checkpoint or GGUF file, a local .bin or .gguf file, or a local Hugging Face
// folder, "file:NAME/"): the sample is then the model's run of Prompt,
// Task and Depth.
func (s State) IsModel() bool {
	kind, _ := SampleKind(s.Sample)
	low := strings.ToLower(s.Sample)
	return kind == "model" || kind == "file" && (strings.HasSuffix(low, ".bin") || strings.HasSuffix(low, ".gguf") || strings.HasSuffix(low, "/"))
}

// PromptRequest is what the view asks a model to run (wire.Prompt; the
// worker fills in the lengths).
func (s State) PromptRequest() *wire.Prompt {
	p := &wire.Prompt{Task: s.Task}
	switch s.Task {
	case "":
		p.Text = s.Prompt
	case "passkey":
		p.Depth = s.Depth
	}
	return p
}

// Values is the query of the view. Every field is written, so a link
// shows the whole view even if the defaults change later.
func (s State) Values() url.Values {
	v := url.Values{
		"sample":  {s.Sample},
		"layer":   {strconv.Itoa(s.Layer)},
		"head":    {strconv.Itoa(s.Head)},
		"methods": {strings.Join(s.Methods, ",")},
		"method":  {s.Method},
		"ratio":   {Fmt(s.Ratio)},
		"lambda":  {Fmt(s.Lambda)},
		"phi":     {Fmt(s.Phi)},
		"tau":     {Fmt(s.Tau)},
		"panel":   {s.Panel},
		"compute": {s.Compute},
		"budget":  {cmp.Or(s.Budget, wire.Budgets[0])},
	}
	if s.Recompress != 0 {
		v.Set("recompress", strconv.Itoa(s.Recompress))
	}
	if s.Tour != 0 {
		v.Set("tour", strconv.Itoa(s.Tour))
	}
	s.promptValues(v)
	return v
}

// promptValues adds the prompt, task and depth to v: all three for a
// model sample, those not at their defaults for another (they change
// nothing it shows).
func (s State) promptValues(v url.Values) {
	model := s.IsModel()
	if model || s.Prompt != "" {
		v.Set("prompt", s.Prompt)
	}
	if model || s.Task != "" {
		v.Set("task", s.Task)
	}
	if model || s.Depth != DefaultDepth {
		v.Set("depth", Fmt(s.Depth))
	}
}

// Encode is the query string of the view (keys sorted, no leading "?").
func (s State) Encode() string { return s.Values().Encode() }

// EmbedQuery is the query string of the embed page for the view's sample,
// head, primary method, ratio and parameters. A local file cannot be
// embedded: its query falls back to the default sample.
func (s State) EmbedQuery() string {
	smp := s.Sample
	if strings.HasPrefix(smp, FilePrefix) {
		smp = DefaultSample
	}
	v := url.Values{
		"sample": {smp},
		"layer":  {strconv.Itoa(s.Layer)},
		"head":   {strconv.Itoa(s.Head)},
		"method": {s.Method},
		"ratio":  {Fmt(s.Ratio)},
		"lambda": {Fmt(s.Lambda)},
		"phi":    {Fmt(s.Phi)},
		"tau":    {Fmt(s.Tau)},
	}
	if kind, _ := SampleKind(smp); kind == "model" {
		// The embed page then shows what the model says: the prompt's
		// continuation with the full cache and with the method.
		s.promptValues(v)
	}
	return v.Encode()
}

// Params are the method parameters of the view.
func (s State) Params() wire.Params {
	p := wire.Params{Ratio: s.Ratio, Lambda: s.Lambda, Phi: s.Phi, Tau: s.Tau}
	if s.Budget != wire.Budgets[0] {
		p.Budget = s.Budget
	}
	return p
}

// SetParams sets the method parameters of the view.
func (s *State) SetParams(p wire.Params) {
	s.Ratio, s.Lambda, s.Phi, s.Tau = p.Ratio, p.Lambda, p.Phi, p.Tau
	if s.Budget = p.Budget; s.Budget == "" {
		s.Budget = wire.Budgets[0]
	}
}

// Source says how the worker gets the view's sample. A local file has no
// Source (nil): its bytes must come from the person's computer.
func (s State) Source() *wire.Source {
	switch kind, err := SampleKind(s.Sample); {
	case err != nil || kind == "file":
		return nil
	case kind == "url":
		return &wire.Source{Kind: "url", URL: s.Sample}
	case kind == "model" && strings.HasSuffix(s.Sample, ".gguf"):
		// A GGUF file carries its tokenizer.
		return &wire.Source{Kind: "checkpoint", URL: s.Sample, Prompt: s.PromptRequest()}
	case kind == "model":
		return &wire.Source{Kind: "llama", URL: s.Sample, Prompt: s.PromptRequest()}
	}
	return &wire.Source{Kind: "preset", Preset: s.Sample}
}

// Fit makes the view valid for a loaded sample of layers x heads with the
// given methods: out-of-range layer or head become 0, unknown methods are
// dropped (and the primary falls back to the first known). Each repair is
// described in one message.
func (s *State) Fit(layers, heads int, methods []string) []string {
	var msgs []string
	if s.Layer >= layers {
		msgs = append(msgs, fmt.Sprintf("layer: %d is past this sample's %d layers; using 0", s.Layer, layers))
		s.Layer = 0
	}
	if s.Head >= heads {
		msgs = append(msgs, fmt.Sprintf("head: %d is past this sample's %d heads; using 0", s.Head, heads))
		s.Head = 0
	}
	if len(methods) == 0 {
		return msgs
	}
	var keep []string
	for _, m := range s.Methods {
		if slices.Contains(methods, m) {
			keep = append(keep, m)
		} else {
			msgs = append(msgs, fmt.Sprintf("methods: unknown method %q dropped", m))
		}
	}
	if !slices.Contains(keep, s.Method) {
		fallback := methods[0]
		if len(keep) > 0 {
			fallback = keep[0]
		}
		if slices.Contains(methods, s.Method) {
			keep = append([]string{s.Method}, keep...)
		} else {
			msgs = append(msgs, fmt.Sprintf("method: unknown method %q; using %q", s.Method, fallback))
			s.Method = fallback
		}
	}
	if len(keep) == 0 {
		keep = []string{s.Method}
	}
	s.Methods = keep
	return msgs
}

// Toggle adds method m to the compared set, or removes it (the primary
// method stays compared).
func (s *State) Toggle(m string) {
	if i := slices.Index(s.Methods, m); i >= 0 {
		if m != s.Method {
			s.Methods = slices.Delete(slices.Clone(s.Methods), i, i+1)
		}
		return
	}
	s.Methods = append(slices.Clone(s.Methods), m)
}

// SetMethod makes m the primary method, comparing it if it was not.
func (s *State) SetMethod(m string) {
	s.Method = m
	if !slices.Contains(s.Methods, m) {
		s.Methods = append(slices.Clone(s.Methods), m)
	}
}

// Compared reports whether m is in the compared set.
func (s State) Compared(m string) bool { return slices.Contains(s.Methods, m) }
