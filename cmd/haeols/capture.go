package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/internal/termsafe"
)

const captureUsage = `Usage: haeols capture [flags] MODEL

Run a model on a prompt of token ids (-prompt) or of text (-text, through
the model's tokenizer), generate tokens greedily (or, for a llama2.c
checkpoint, with -temperature and -seed), and write the post-RoPE q, k and
v of every layer and head as a haeols sample. MODEL is a llama2.c
checkpoint (float32, legacy format; its tokenizer with -z), a GGUF file or
a Hugging Face folder (which carry their tokenizers; the sample's metadata
records the architecture, the weights' types and the tokenizer). The first
-prefix positions are the cache to compress, the rest are probe queries.

-layers and -heads keep a sample of a big model small: lists of indices
and ranges, such as 0,3 or 0-3,7 (counted from 0). -heads names KV heads:
each is kept with the query heads that share it (grouped-query attention),
as the sample format groups them, so a model with 9 query heads and 3 KV
heads gives 3 query heads per KV head kept. The model still runs whole;
the sample's metadata records the original indices ("layers", "kv_heads").

Example:
  haeols capture -tokens 512 -o stories260K.safetensors ../shared/models/stories260K.bin
`

func cmdCapture(e *env, args []string) error {
	fs := newFlags("capture")
	tokens := fs.Int("tokens", 0, "N, positions to capture: prompt plus generated (0: the model's context)")
	prefix := fs.Int("prefix", 0, "cached positions n; the rest are probes (0: N - min(64, N/8))")
	prompt := fs.String("prompt", "", "comma-separated prompt token ids, starting with BOS (default: BOS, 1 for llama2.c)")
	text := fs.String("text", "", "prompt text after BOS, through the model's tokenizer (-z for llama2.c)")
	temp := fs.Float64("temperature", 0, "sampling temperature (0: greedy)")
	seed := fs.Uint64("seed", 1, "sampler seed (with -temperature > 0)")
	tokPath := fs.String("z", "", "llama2.c tokenizer.bin for token strings (default: ids as strings)")
	dtype := fs.String("dtype", sample.F16, "stored number type: F32, F16 or BF16")
	out := fs.String("o", "", "output file (default MODEL.safetensors; - for standard output)")
	layerList := fs.String("layers", "", "layers to keep, e.g. 0,3 or 0-3 (default: all)")
	headList := fs.String("heads", "", "KV heads to keep, each with its query heads, e.g. 0,1 or 0-2 (default: all)")
	pos, err := parse(e, fs, args, captureUsage, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one MODEL argument")
	}
	if *prompt != "" && *text != "" {
		return usagef("-prompt and -text: give one")
	}
	switch *dtype {
	case sample.F32, sample.F16, sample.BF16:
	default:
		return usagef("-dtype %q: want F32, F16 or BF16", *dtype)
	}
	layers, err := parseIndices("layers", *layerList)
	if err != nil {
		return err
	}
	kvHeads, err := parseIndices("heads", *headList)
	if err != nil {
		return err
	}
	if isCheckpoint(pos[0]) {
		return captureCheckpoint(e, pos[0], captureSpec{prompt: *prompt, text: *text, tokPath: *tokPath, tokens: *tokens, prefix: *prefix,
			temperature: *temp, dtype: *dtype, out: *out, layers: layers, kvHeads: kvHeads})
	}
	if *prompt == "" {
		*prompt = strconv.Itoa(llama.BOS)
	}
	var ids []int
	for _, f := range strings.Split(*prompt, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return usagef("-prompt: %q is not a token id", f)
		}
		ids = append(ids, id)
	}
	if *tokens < 0 || *prefix < 0 {
		return usagef("-tokens and -prefix must be >= 0")
	}
	if !(*temp >= 0) || math.IsInf(*temp, 0) {
		return usagef("-temperature %v: want a finite value >= 0 (0: greedy)", *temp)
	}
	path := *out
	if path == "" {
		path = strings.TrimSuffix(displayName(pos[0]), ".bin") + ".safetensors"
	}
	ins := []string{pos[0], *tokPath}
	if err := checkOutputs(ins, [2]string{"o", path}); err != nil {
		return err
	}
	m, err := llama.Load(pos[0])
	if err != nil {
		return err
	}
	if err := checkSelection(layers, kvHeads, m.Config().Layers, m.Config().KVHeads, pos[0]); err != nil {
		return err
	}
	var tok *llama.Tokenizer
	if *tokPath != "" {
		if tok, err = llama.LoadTokenizer(*tokPath); err != nil {
			return err
		}
	}
	if *text != "" {
		if tok == nil {
			return usagef("-text needs the model's tokenizer (-z tokenizer.bin)")
		}
		t, err := tok.EncodeText(*text)
		if err != nil {
			return fmt.Errorf("-text: %w", err)
		}
		ids = append(ids, t...)
	}
	n := *tokens
	if n == 0 {
		n = m.Config().SeqLen
	}
	for _, id := range ids {
		if id < 0 || id >= m.Config().Vocab {
			return usagef("-prompt: token id %d outside the vocabulary [0, %d) of %s", id, m.Config().Vocab, quotePath(pos[0]))
		}
	}
	if lo := max(len(ids), 3); n < lo || n > m.Config().SeqLen {
		return usagef("-tokens %d outside [%d, %d]: at least the prompt and 3 positions (a prefix of 2 and a probe), at most the model's context", n, lo, m.Config().SeqLen)
	}
	if *prefix != 0 && (*prefix < 2 || *prefix > n-1) {
		return usagef("-prefix %d outside [2, %d]: the cache needs 2 positions and at least one of the -tokens %d must be a probe", *prefix, n-1, n)
	}
	c, err := m.Capture(ids, n-len(ids), llama.Sampler{Temperature: *temp, Seed: *seed})
	if err != nil {
		return err
	}
	s, err := c.Sample(*prefix, tok)
	if err != nil {
		return err
	}
	if s, err = selectCapture(s, layers, kvHeads); err != nil {
		return err
	}
	if err := checkActivations(s, quotePath(pos[0])); err != nil {
		return err
	}
	err = writeOutput("o", path, e.stdout, ins, func(w io.Writer) error {
		return sample.WriteSafetensors(w, s, *dtype)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.reportTo(path), "wrote %s: %s, %d layers x %d heads (%d KV), N=%d (prefix %d + %d probes), d=%d, %s\n",
		quotePath(path), termsafe.String(s.Meta.Source), s.L, s.H, s.HKV, s.N, s.Prefix(), s.N-s.Prefix(), s.D, *dtype)
	return nil
}

// parseIndices parses the named flag's list of indices: comma-separated
// non-negative integers and ranges a-b (a <= b, both kept), such as 0,3 or
// 0-3,7; "" is nil (all). An index given twice, or a list of more than
// maxIndices, is a usage error naming the flag.
func parseIndices(flagName, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		a, b, isRange := strings.Cut(f, "-")
		lo, err1 := strconv.Atoi(strings.TrimSpace(a))
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(strings.TrimSpace(b))
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < 0 {
			return nil, usagef("-%s: %q is not an index or a range a-b of indices (counted from 0)", flagName, f)
		}
		if hi < lo {
			return nil, usagef("-%s: range %q runs backwards", flagName, f)
		}
		if hi-lo >= maxIndices || len(out)+hi-lo+1 > maxIndices {
			return nil, usagef("-%s: more than %d indices", flagName, maxIndices)
		}
		for i := lo; i <= hi; i++ {
			if seen[i] {
				return nil, usagef("-%s: index %d given twice", flagName, i)
			}
			seen[i] = true
			out = append(out, i)
		}
	}
	return out, nil
}

// maxIndices bounds an index list (more than any model has layers or
// heads).
const maxIndices = 1 << 16

// checkSelection checks the -layers and -heads indices against the model's
// layers and KV heads: an index out of range is a usage error naming the
// flag and the model's count.
func checkSelection(layers, kvHeads []int, nLayers, nKVHeads int, model string) error {
	for _, c := range []struct {
		flag, what string
		idx        []int
		n          int
	}{{"layers", "layers", layers, nLayers}, {"heads", "KV heads", kvHeads, nKVHeads}} {
		for _, i := range c.idx {
			if i >= c.n {
				return usagef("-%s: index %d out of range: %s has %d %s (0..%d)", c.flag, i, quotePath(model), c.n, c.what, c.n-1)
			}
		}
	}
	return nil
}

// selectCapture keeps the selected layers and KV heads of a capture (nil:
// all), recording them in its metadata (sample.Sample.Select) and saying
// so in its description.
func selectCapture(s *sample.Sample, layers, kvHeads []int) (*sample.Sample, error) {
	if layers == nil && kvHeads == nil {
		return s, nil
	}
	sel, err := s.Select(layers, kvHeads)
	if err != nil {
		return nil, err
	}
	kept := func(key string) string {
		if v, ok := sel.Meta.Extra[key]; ok {
			return v
		}
		return "all"
	}
	sel.Meta.Description += fmt.Sprintf("; this sample keeps layers %s and KV heads %s of them, each KV head with the query heads that share it",
		kept(sample.KeyLayers), kept(sample.KeyKVHeads))
	return sel, nil
}

// checkActivations refuses a capture whose activations overflowed or
// vanished, which a checkpoint with absurd weights gives (the RMS norm of
// an overflowing residual is 0, so every q, k and v becomes 0): a head whose
// q, k or v is all zero, or whose values would overflow the analysis
// (core.CheckMagnitudes), is an error naming the layer, the head and the
// tensor, instead of a file of zeros.
func checkActivations(s *sample.Sample, model string) error {
	zero := func(x []float32) bool {
		for _, v := range x {
			if v != 0 {
				return false
			}
		}
		return true
	}
	for l := 0; l < s.L; l++ {
		for kv := 0; kv < s.HKV; kv++ {
			for _, t := range []struct {
				name string
				x    []float32
			}{{"k", s.KHead(l, kv)}, {"v", s.VHead(l, kv)}} {
				if zero(t.x) {
					return fmt.Errorf("%s: layer %d KV head %d: every %s is 0: the activations vanished or overflowed (are the weights sane?)", model, l, kv, t.name)
				}
			}
		}
		for h := 0; h < s.H; h++ {
			if zero(s.QHead(l, h)) {
				return fmt.Errorf("%s: layer %d head %d: every q is 0: the activations vanished or overflowed (are the weights sane?)", model, l, h)
			}
		}
	}
	if err := core.CheckMagnitudes(s); err != nil {
		return fmt.Errorf("%s: the capture's activations: %w (are the weights sane?)", model, err)
	}
	return nil
}
