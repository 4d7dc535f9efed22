package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/internal/termsafe"
)

// captureSpec is what haeols capture's flags ask of a checkpoint.
type captureSpec struct {
	prompt, text, tokPath string
	tokens, prefix        int
	temperature           float64
	dtype, out            string
	layers, kvHeads       []int // nil: all
}

// captureCheckpoint is haeols capture of a GGUF file or a Hugging Face
// folder: the prompt (ids, or text through the checkpoint's tokenizer) and
// its greedy continuation run with the full cache (core/eval's reference
// run), written as a sample whose metadata says what the model was.
func captureCheckpoint(e *env, path string, sp captureSpec) error {
	if sp.temperature != 0 {
		return usagef("-temperature %v: a checkpoint is captured greedily (sampling is for llama2.c checkpoints)", sp.temperature)
	}
	if sp.tokens < 0 || sp.prefix < 0 {
		return usagef("-tokens and -prefix must be >= 0")
	}
	out := sp.out
	if out == "" {
		out = strings.TrimSuffix(displayName(path), ".gguf") + ".safetensors"
	}
	ins := []string{path}
	if err := checkOutputs(ins, [2]string{"o", out}); err != nil {
		return err
	}
	lm, codec, ck, err := openLM(path, sp.tokPath)
	if err != nil {
		return err
	}
	if err := checkSelection(sp.layers, sp.kvHeads, ck.Config.Layers, ck.Config.KVHeads, path); err != nil {
		return err
	}
	ids := eval.Start(codec)
	if sp.prompt != "" {
		ids = ids[:0]
		for _, f := range strings.Split(sp.prompt, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return usagef("-prompt: %q is not a token id", f)
			}
			if id < 0 || id >= lm.Vocab() {
				return usagef("-prompt: token id %d outside the vocabulary [0, %d) of %s", id, lm.Vocab(), quotePath(path))
			}
			ids = append(ids, id)
		}
	}
	if sp.text != "" {
		if codec == nil {
			return fmt.Errorf("-text: the checkpoint %s carries no tokenizer", quotePath(path))
		}
		t, err := codec.EncodeText(sp.text)
		if err != nil {
			return fmt.Errorf("-text: %w", err)
		}
		ids = append(ids, t...)
	}
	ctx := min(lm.Context(), 1<<16)
	n := sp.tokens
	if n == 0 {
		n = min(ctx, 512)
	}
	if lo := max(len(ids), 3); n < lo || n > ctx {
		return usagef("-tokens %d outside [%d, %d]: at least the prompt and 3 positions (a prefix of 2 and a probe), at most the model's context", n, lo, ctx)
	}
	if sp.prefix != 0 && (sp.prefix < 2 || sp.prefix > n-1) {
		return usagef("-prefix %d outside [2, %d]: the cache needs 2 positions and at least one of the -tokens %d must be a probe", sp.prefix, n-1, n)
	}
	seq := eval.Sequence{Tokens: eval.Continue(lm, ids, n), Prefix: sp.prefix}
	ref, err := eval.Prepare(lm, seq, core.Options{})
	if err != nil {
		return err
	}
	s := ref.Sample
	describeCheckpoint(s, displayName(path), ck, codec, seq.Tokens, len(ids))
	if s, err = selectCapture(s, sp.layers, sp.kvHeads); err != nil {
		return err
	}
	if err := checkActivations(s, quotePath(path)); err != nil {
		return err
	}
	err = writeOutput("o", out, e.stdout, ins, func(w io.Writer) error { return sample.WriteSafetensors(w, s, sp.dtype) })
	if err != nil {
		return err
	}
	fmt.Fprintf(e.reportTo(out), "wrote %s: %s, %d layers x %d heads (%d KV), N=%d (prefix %d + %d probes), d=%d, %s\n",
		quotePath(out), termsafe.String(s.Meta.Source), s.L, s.H, s.HKV, s.N, s.Prefix(), s.N-s.Prefix(), s.D, sp.dtype)
	return nil
}

// describeCheckpoint fills the sample's metadata: what the model was (file,
// architecture, the weights' types, the tokenizer), how the run was made,
// one token string per position and the ids.
func describeCheckpoint(s *sample.Sample, name string, ck *model.Checkpoint, codec eval.Codec, tokens []int, prompt int) {
	sum := ck.Summarize()
	var types []string
	for _, t := range sum.Types {
		types = append(types, fmt.Sprintf("%v:%d", t.Type, t.Tensors))
	}
	sort.Strings(types)
	c := ck.Config
	s.Meta.Model = name
	s.Meta.Source = fmt.Sprintf("checkpoint capture %s arch=%s weights=%s tokenizer=%q prompt=%d generate=%d greedy prefix=%d",
		name, c.Arch, strings.Join(types, ","), sum.Tokenizer, prompt, s.N-prompt, s.Prefix())
	s.Meta.Description = fmt.Sprintf("post-RoPE q/k/v of every layer and head of the %s checkpoint %s (width %d, %d layers, %d heads, %d KV heads, head dim %d) over %d positions; the first %d are the cache, the last %d are probe queries",
		c.Arch, name, c.Dim, c.Layers, c.Heads, c.KVHeads, c.HeadDim, s.N, s.Prefix(), s.N-s.Prefix())
	s.Meta.Scale = 1 / math.Sqrt(float64(c.HeadDim))
	strs := make([]string, len(tokens))
	for i, id := range tokens {
		if codec != nil {
			strs[i] = codec.DecodeToken(0, id)
		} else {
			strs[i] = strconv.Itoa(id)
		}
	}
	s.Meta.Tokens = strs
	b, _ := json.Marshal(tokens) // ints cannot fail
	s.Meta.Extra = map[string]string{"token_ids": string(b)}
}
