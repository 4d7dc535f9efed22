package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/sample"
)

const captureUsage = `Usage: haeols capture [flags] MODEL.bin

Run a llama2.c checkpoint (float32, legacy format) on a prompt of token ids,
generate tokens greedily (or with -temperature and -seed), and write the
post-RoPE q, k and v of every layer and head as a haeols sample: the first
-prefix positions are the cache to compress, the rest are probe queries.

Example:
  haeols capture -tokens 512 -o stories260K.safetensors ../shared/models/stories260K.bin
`

func cmdCapture(e *env, args []string) error {
	fs := newFlags("capture")
	tokens := fs.Int("tokens", 0, "N, positions to capture: prompt plus generated (0: the model's context)")
	prefix := fs.Int("prefix", 0, "cached positions n; the rest are probes (0: N - min(64, N/8))")
	prompt := fs.String("prompt", "1", "comma-separated prompt token ids, starting with BOS (1)")
	temp := fs.Float64("temperature", 0, "sampling temperature (0: greedy)")
	seed := fs.Uint64("seed", 1, "sampler seed (with -temperature > 0)")
	tokPath := fs.String("z", "", "llama2.c tokenizer.bin for token strings (default: ids as strings)")
	dtype := fs.String("dtype", sample.F16, "stored number type: F32, F16 or BF16")
	out := fs.String("o", "", "output file (default MODEL.safetensors)")
	pos, err := parse(e, fs, args, captureUsage, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one MODEL.bin argument")
	}
	switch *dtype {
	case sample.F32, sample.F16, sample.BF16:
	default:
		return usagef("-dtype %q: want F32, F16 or BF16", *dtype)
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
	m, err := llama.Load(pos[0])
	if err != nil {
		return err
	}
	n := *tokens
	if n == 0 {
		n = m.Config().SeqLen
	}
	if n < len(ids) || n > m.Config().SeqLen {
		return usagef("-tokens %d outside [%d (the prompt), %d (the model's context)]", n, len(ids), m.Config().SeqLen)
	}
	var tok *llama.Tokenizer
	if *tokPath != "" {
		if tok, err = llama.LoadTokenizer(*tokPath); err != nil {
			return err
		}
	}
	c, err := m.Capture(ids, n-len(ids), llama.Sampler{Temperature: *temp, Seed: *seed})
	if err != nil {
		return err
	}
	s, err := c.Sample(*prefix, tok)
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = strings.TrimSuffix(displayName(pos[0]), ".bin") + ".safetensors"
	}
	if err := sample.WriteFile(path, s, *dtype); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: %s, %d layers x %d heads (%d KV), N=%d (prefix %d + %d probes), d=%d, %s\n",
		path, s.Meta.Source, s.L, s.H, s.HKV, s.N, s.Prefix(), s.N-s.Prefix(), s.D, *dtype)
	return nil
}
