package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/sample"
)

const genUsage = `
Usage: haeols gen [-preset default] [-seed N] [-dtype F16] [-o FILE] [size flags]

Writes a synthetic sample made by a generator preset to a safetensors file
(default PRESET.safetensors). The same preset, seed and sizes give the same
file on every machine. The size flags override the preset's shape.

Presets:
%s
Example:
  haeols gen -preset needle -seed 7 -o needle.safetensors
  haeols gen -preset default -layers 2 -tokens 512 -dtype F32 -o small.safetensors
`

// genFlagOf maps gen.Config field names (as they appear in gen's errors)
// to the flags that set them.
var genFlagOf = map[string]string{
	"Layers": "-layers", "Heads": "-heads", "KVHeads": "-kv-heads", "Tokens": "-tokens",
	"Probes": "-probes", "Dim": "-dim", "Needles": "-needles", "RopeBase": "-rope-base", "Seed": "-seed", "Preset": "-preset",
}

var genField = regexp.MustCompile(`\b(Layers|Heads|KVHeads|Tokens|Probes|Dim|Needles|RopeBase|Seed|Preset)\b`)

func presetList() string {
	var b strings.Builder
	for _, p := range gen.Presets() {
		fmt.Fprintf(&b, "  %-10s %s\n", p.Name, firstSentence(p.Description))
	}
	return b.String()
}

// firstSentence shortens a preset description for the usage text: its
// first sentence (after a leading "Title: "), cut at a comma to stay under
// about 90 characters.
func firstSentence(s string) string {
	if i := strings.Index(s, ": "); i >= 0 && i < 40 {
		s = s[i+2:]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 90 {
		if i := strings.LastIndex(s[:90], ", "); i > 0 {
			s = s[:i] + ", ..."
		}
	}
	return s
}

func cmdGen(e *env, args []string) error {
	fs := newFlags("gen")
	preset := fs.String("preset", "default", "generator preset: "+presetNames())
	seed := fs.Uint64("seed", 1, "random seed")
	dtype := fs.String("dtype", sample.F16, "stored number type: F32, F16 or BF16")
	out := fs.String("o", "", "output file (default PRESET.safetensors; - for standard output)")
	layers := fs.Int("layers", 0, "layers (0: the preset's)")
	heads := fs.Int("heads", 0, "query heads (0: the preset's)")
	kvHeads := fs.Int("kv-heads", 0, "KV heads, dividing -heads (0: the preset's)")
	tokens := fs.Int("tokens", 0, "N, the positions: prefix plus probes (0: the preset's)")
	probes := fs.Int("probes", 0, "probe queries at the end (0: the preset's)")
	dim := fs.Int("dim", 0, "head dimension d, even (0: the preset's)")
	needles := fs.Int("needles", -1, "passkey needles (-1: the preset's)")
	ropeBase := fs.Float64("rope-base", 0, "RoPE base (0: the preset's)")
	if _, err := parse(e, fs, args, fmt.Sprintf(genUsage, presetList()), 0); err != nil {
		return err
	}
	switch *dtype {
	case sample.F32, sample.F16, sample.BF16:
	default:
		return usagef("-dtype %q: want F32, F16 or BF16", *dtype)
	}
	cfg, err := gen.DefaultConfig(*preset)
	if err != nil {
		return usagef("-preset %q: unknown preset (valid: %s)", *preset, presetNames())
	}
	cfg.Seed = *seed
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, o := range []struct {
		name string
		v    int
		dst  *int
	}{{"layers", *layers, &cfg.Layers}, {"heads", *heads, &cfg.Heads}, {"kv-heads", *kvHeads, &cfg.KVHeads},
		{"tokens", *tokens, &cfg.Tokens}, {"probes", *probes, &cfg.Probes}, {"dim", *dim, &cfg.Dim}, {"needles", *needles, &cfg.Needles}} {
		if set[o.name] {
			*o.dst = o.v
		}
	}
	if set["rope-base"] {
		cfg.RopeBase = *ropeBase
	}
	if err := cfg.Validate(); err != nil {
		msg := genField.ReplaceAllStringFunc(err.Error(), func(f string) string { return genFlagOf[f] })
		return usagef("%s", strings.TrimPrefix(msg, "gen: "))
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = cfg.Preset + ".safetensors"
	}
	err = writeOutput("o", path, e.stdout, nil, func(w io.Writer) error {
		return sample.WriteSafetensors(w, s, *dtype)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.reportTo(path), "wrote %s: preset %s seed %d, %d layers x %d heads (%d KV), N=%d (prefix %d + %d probes), d=%d, %s\n",
		quotePath(path), cfg.Preset, cfg.Seed, s.L, s.H, s.HKV, s.N, s.Prefix(), s.N-s.Prefix(), s.D, *dtype)
	return nil
}

func presetNames() string {
	var n []string
	for _, p := range gen.Presets() {
		n = append(n, p.Name)
	}
	return strings.Join(n, ", ")
}
