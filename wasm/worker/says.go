//go:build !nomodel

package worker

import (
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/core/model/tokenizer"
	"github.com/haeols/haeols/core/model/transformer"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

// What the model says with a compressed cache (HAE-OLS.md §8): a model (a
// llama2.c checkpoint, a GGUF file or a Hugging Face folder) runs a prompt
// with the full cache (eval.Prepare), that run is the loaded sample (its
// per-head views show the heads of this very run), and OpEval measures
// methods end to end against it.
//
// This is the model runner: the site's runner.wasm has it, app.wasm (built
// with the tag nomodel, says_nomodel.go) leaves it out so that the first
// load stays small, and the page moves to a runner.wasm worker when it
// first opens a model (wire.Request.NeedsModel).

// maxEvalResults bounds the end-to-end results kept for reuse.
const maxEvalResults = 256

// lmState is the model of the latest "llama" or "checkpoint" load and its
// prompt's run.
type lmState struct {
	name  string
	lm    eval.LM
	codec eval.Codec // nil: the model has no tokenizer (ids)
	ref   *eval.Reference
	key   string // the prompt's task key, or copied passage
	info  *wire.EvalInfo
	// results are kept per method and parameters, oldest first out.
	results map[evalKey]*wire.EvalResult
	order   []evalKey
}

type evalKey struct {
	method string
	params core.Params
}

// loadLlama decodes a llama2.c checkpoint (and its tokenizer, when the
// source has one) and runs the source's prompt.
func (e *Engine) loadLlama(req wire.Request, bufs map[string][]byte, progress func(float64)) (string, error) {
	src := req.Source
	name := src.Name
	var data []byte
	var err error
	if src.URL != "" {
		if data, name, err = e.fetchLocal(src.URL); err != nil {
			return "", err
		}
	} else if data, err = fileBuffer(src, bufs); err != nil {
		return "", err
	}
	m, err := llama.Decode(name, data)
	if err != nil {
		return "", err
	}
	var tok *llama.Tokenizer
	var tdata []byte
	tname := src.Tokenizer
	switch b, ok := bufs["tokenizer"]; {
	case src.TokenizerURL != "":
		if tdata, tname, err = e.fetchLocal(src.TokenizerURL); err != nil {
			return "", err
		}
	case ok:
		if tname == "" {
			tname = "tokenizer"
		}
		if len(b) > MaxFileBytes {
			return "", fmt.Errorf("load %s: %d MiB is more than the %d MiB the browser app reads", tname, len(b)>>20, MaxFileBytes>>20)
		}
		tdata = b
	}
	if tdata != nil {
		if tok, err = llama.DecodeTokenizer(tname, tdata, m.Config().Vocab); err != nil {
			return "", err
		}
	}
	progress(0.05)
	st := &lmState{name: name, lm: m.Decoder()}
	if tok != nil {
		st.codec = tok
	}
	return name, e.runSource(st, src, progress)
}

// runSource runs the source's prompt (or its capture length) on the model
// of a load.
func (e *Engine) runSource(st *lmState, src *wire.Source, progress func(float64)) error {
	p := wire.Prompt{}
	if src.Prompt != nil {
		p = *src.Prompt
	} else if src.Tokens > 0 {
		p.Tokens = min(src.Tokens, st.lm.Context())
	}
	return e.runPrompt(st, p, progress)
}

// loadCheckpoint decodes a GGUF file (one of the app's own, src.URL, or
// the person's) or the files of a Hugging Face folder (core/model.Decode:
// the weights stay in their quant type, aliasing the files' bytes) with
// the tokenizer they carry, as `haeols eval` opens them, and runs the
// source's prompt.
func (e *Engine) loadCheckpoint(req wire.Request, bufs map[string][]byte, progress func(float64)) (string, error) {
	src := req.Source
	var files map[string][]byte
	var name string
	if src.URL != "" {
		data, n, err := e.fetchLocal(src.URL)
		if err != nil {
			return "", err
		}
		if len(data) > MaxFileBytes {
			return "", fmt.Errorf("load %s: %w", src.URL, fileTooLarge(int64(len(data))))
		}
		files, name = map[string][]byte{n: data}, n
	} else {
		var err error
		if files, err = checkpointFiles(src, bufs); err != nil {
			return "", err
		}
		if name = src.Name; name == "" {
			name = src.Files[0]
		}
	}
	ck, err := model.Decode(files)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", name, err)
	}
	tm, err := transformer.New(ck)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", name, err)
	}
	progress(0.05)
	st := &lmState{name: name, lm: tm.Decoder(name)}
	if ck.Tokenizer != nil {
		st.codec = ck.Tokenizer
	}
	return name, e.runSource(st, src, progress)
}

// checkpointFiles are the files of a "checkpoint" source by name: each
// named once, a base name, in a buffer of its own, not empty, within
// MaxFileBytes alone and all together. A tokenizer_config.json needs its
// tokenizer.json.
func checkpointFiles(src *wire.Source, bufs map[string][]byte) (map[string][]byte, error) {
	if len(src.Files) == 0 {
		return nil, errors.New("load checkpoint: no files given")
	}
	files := make(map[string][]byte, len(src.Files))
	var total int64
	for _, n := range src.Files {
		b, ok := bufs[n]
		switch _, dup := files[n]; {
		case n == "" || n != path.Base(n) || strings.ContainsAny(n, `/\`) || n == "." || n == "..":
			return nil, fmt.Errorf("load checkpoint: %q is not a file name", n)
		case dup:
			return nil, fmt.Errorf("load checkpoint: %s given twice", n)
		case !ok:
			return nil, fmt.Errorf("load %s: the message carries no buffer for it", n)
		case len(b) == 0:
			return nil, fmt.Errorf("load %s: the file is empty", n)
		case len(b) > MaxFileBytes:
			return nil, fmt.Errorf("load %s: %w", n, fileTooLarge(int64(len(b))))
		}
		total += int64(len(b))
		files[n] = b
	}
	if total > MaxFileBytes {
		return nil, fmt.Errorf("load %s: %d files of %d MiB in all, more than the %d MiB the browser app reads", strings.Join(src.Files, ", "), len(src.Files), total>>20, MaxFileBytes>>20)
	}
	_, conf := files[hf.TokenizerConfigFile]
	_, tok := files[hf.TokenizerFile]
	if _, spm := files[hf.TokenizerModelFile]; conf && !tok && !spm {
		return nil, fmt.Errorf("load checkpoint: %s is missing (%s came without it)", hf.TokenizerFile, hf.TokenizerConfigFile)
	}
	return files, nil
}

// fetchLocal fetches one of the app's own files.
func (e *Engine) fetchLocal(u string) ([]byte, string, error) {
	if err := checkLocalURL(u); err != nil {
		return nil, "", err
	}
	if e.Fetch == nil {
		return nil, "", fmt.Errorf("load %s: fetching is not available here", u)
	}
	name := path.Base(strings.SplitN(u, "?", 2)[0])
	data, err := e.Fetch(u)
	if err != nil {
		return nil, "", fmt.Errorf("load %s: %w", u, err)
	}
	e.Pool.keep(data)
	if len(data) == 0 {
		return nil, "", fmt.Errorf("load %s: the file is empty", u)
	}
	return data, name, nil
}

// prompt answers OpPrompt: a new prompt on the model of the latest llama
// load; on error the loaded sample stays.
func (e *Engine) prompt(req wire.Request, emit Emit) error {
	if e.lm == nil {
		return errors.New("prompt: no model loaded (open a checkpoint first)")
	}
	if req.Prompt == nil {
		return errors.New("prompt: no prompt given")
	}
	progress := func(p float64) { emit(wire.Response{ID: req.ID, Op: req.Op, Progress: p}, nil) }
	st := &lmState{name: e.lm.name, lm: e.lm.lm, codec: e.lm.codec}
	if err := e.runPrompt(st, *req.Prompt, progress); err != nil {
		return err
	}
	emit(wire.Response{ID: req.ID, Op: req.Op, Info: e.info, Progress: 1, Done: true}, nil)
	return nil
}

// runPrompt builds the prompt's sequence, runs it with the full cache and
// makes the run the loaded sample (st the model's state).
func (e *Engine) runPrompt(st *lmState, p wire.Prompt, progress func(float64)) error {
	lm := st.lm
	b, p, err := promptSequence(lm, st.codec, p)
	if err != nil {
		return fmt.Errorf("prompt to %s: %w", st.name, err)
	}
	sh := lm.Shape()
	n := len(b.Tokens)
	if bytes := 4 * int64(sh.Layers) * int64(n) * int64(sh.HeadSize) * int64(sh.Heads+2*sh.KVHeads); bytes > MaxCaptureBytes {
		return fmt.Errorf("prompt to %s: %d positions need %d MiB, more than the %d MiB the browser app allows; ask for fewer tokens", st.name, n, bytes>>20, MaxCaptureBytes>>20)
	}
	last := 0.0
	// The reference run on the CPU kernels: its numbers are those of
	// `haeols eval`, bit for bit.
	ref, err := eval.PrepareProgress(lm, b.Sequence, core.Options{}, func(done, total int) {
		if f := 0.05 + 0.9*float64(done)/float64(total); f-last >= 0.02 || done == total {
			last = f
			progress(f)
		}
	})
	if err != nil {
		return err
	}
	s := ref.Sample
	s.Meta.Tokens = make([]string, n)
	for i, t := range ref.Seq.Tokens {
		s.Meta.Tokens[i] = st.label(t)
	}
	needles := needlesOf(b, ref.Seq)
	if p.Task == "passkey" {
		// The pass key's tokens in the cache, and the queries that must
		// find them (those predicting the answer): the heatmaps mark
		// them, and the grid's needle error is theirs.
		s.Meta.Needles = needles
		for _, a := range ref.Seq.Answers {
			for q := a.Start - 1; q < a.End-1; q++ {
				s.Meta.NeedleProbes = append(s.Meta.NeedleProbes, q-ref.Seq.Prefix)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("prompt to %s: %w", st.name, err)
	}
	model := ref.Model
	if e.accel != nil {
		// The per-head views on the chosen device; the end-to-end numbers
		// stay on the CPU's analyses (those of the CLI).
		if model, err = core.NewModel(s, core.Options{Accel: e.accel}); err != nil {
			return fmt.Errorf("prompt to %s: %w", st.name, err)
		}
	}
	st.ref, st.key = ref, b.Key
	st.info = evalInfoOf(st, p, needles)
	e.lm = st
	e.setModel(model)
	e.info = infoOf(st.name, s)
	e.info.Eval = st.info
	e.caches, e.order, e.focus = nil, nil, nil
	return nil
}

// promptSequence builds the sequence of a prompt with eval.Spec, as
// `haeols eval` does for the same flags (-text or -prompt, -task, -tokens,
// -prefix, -gen, -seed, one -depths value), and returns the prompt with its
// defaults filled in.
func promptSequence(lm eval.LM, codec eval.Codec, p wire.Prompt) (*eval.Built, wire.Prompt, error) {
	ctx := lm.Context()
	switch {
	case p.Tokens < 0 || p.Prefix < 0 || p.Gen < 0:
		return nil, p, fmt.Errorf("tokens %d, prefix %d, gen %d: want >= 0", p.Tokens, p.Prefix, p.Gen)
	case p.Tokens > ctx:
		return nil, p, fmt.Errorf("%d tokens exceed the model's context of %d", p.Tokens, ctx)
	case len(p.Text) > wire.MaxPromptText:
		return nil, p, fmt.Errorf("a prompt of %d bytes: at most %d", len(p.Text), wire.MaxPromptText)
	case p.Text != "" && codec == nil:
		return nil, p, errors.New("a text prompt needs the model's tokenizer (open it with the checkpoint)")
	case !(p.Depth >= 0 && p.Depth <= 1):
		return nil, p, fmt.Errorf("pass-key depth %v outside [0, 1]", p.Depth)
	}
	if p.Gen == 0 {
		p.Gen = wire.PromptGen
	}
	if p.Seed == 0 {
		p.Seed = 1
	}
	spec := eval.Spec{Task: p.Task, Tokens: p.Tokens, Prefix: p.Prefix, Depth: p.Depth, Seed: p.Seed, Gen: p.Gen}
	if spec.Tokens == 0 {
		spec.Tokens, spec.Grow = min(wire.PromptTokens, ctx), true
		if p.Task != "" {
			spec.Tokens = min(wire.TaskTokens, ctx)
		}
	}
	switch p.Task {
	case "passkey":
		p.Text, p.IDs = "", nil
	case "copy":
		p.Text, p.IDs, p.Depth = "", nil, 0
		spec.Depth = 0
	case "":
		p.Depth = 0
		spec.Depth = 0
		spec.Text = p.Text
		if len(p.IDs) > 0 {
			spec.IDs = slices.Clone(p.IDs)
		} // else the model's BOS (eval.Start), as `haeols eval` starts
	}
	b, err := spec.Build(lm, codec)
	if err != nil {
		return nil, p, err
	}
	p.Tokens = len(b.Tokens)
	return b, p, nil
}

// needlesOf are the positions of a task's first answer in the prefix: the
// first occurrence of the answer's tokens from where the task planted its
// key (nil without answers).
func needlesOf(b *eval.Built, seq eval.Sequence) []int {
	if len(seq.Answers) == 0 {
		return nil
	}
	a := seq.Answers[0]
	want := seq.Tokens[a.Start:a.End]
	for i := b.At; i+len(want) <= seq.Prefix; i++ {
		if slices.Equal(seq.Tokens[i:i+len(want)], want) {
			out := make([]int, len(want))
			for k := range out {
				out[k] = i + k
			}
			return out
		}
	}
	return nil
}

// texts are the display texts of ids, each decoded after the one before
// (the first after prev); a model without a tokenizer shows the ids.
func (st *lmState) texts(prev int, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if st.codec == nil {
			out[i] = strconv.Itoa(id)
		} else {
			out[i] = st.codec.DecodeToken(prev, id)
		}
		prev = id
	}
	return out
}

// label is token id's label in the per-head views (the sample's token
// strings): a llama2.c tokenizer's piece, a checkpoint tokenizer's bytes
// (control tokens by name), valid UTF-8; the id without a tokenizer.
func (st *lmState) label(id int) string {
	switch t := st.codec.(type) {
	case *llama.Tokenizer:
		return t.Piece(id)
	case *tokenizer.Tokenizer:
		return strings.ToValidUTF8(string(t.TokenBytes(id)), "\uFFFD")
	case nil:
		return strconv.Itoa(id)
	}
	return strings.ToValidUTF8(st.codec.DecodeToken(0, id), "\uFFFD")
}

func evalInfoOf(st *lmState, p wire.Prompt, needles []int) *wire.EvalInfo {
	ref := st.ref
	seq := ref.Seq
	in := &wire.EvalInfo{
		Model: st.name, Tokenizer: st.codec != nil, Vocab: ref.LM.Vocab(), Context: ref.LM.Context(),
		Prompt: p, Key: st.key, IDs: seq.Tokens, Prefix: seq.Prefix, Answers: []wire.Span{}, Needles: needles,
		Top: ref.Top, Free: ref.Free,
	}
	// The sequence's text as `haeols eval` prints it: BOS shows as nothing.
	if b := eval.Start(st.codec); len(b) > 0 && len(seq.Tokens) > 0 && seq.Tokens[0] == b[0] {
		in.Text = append([]string{""}, st.texts(b[0], seq.Tokens[1:])...)
	} else {
		in.Text = st.texts(0, seq.Tokens)
	}
	last := seq.Tokens[seq.Prefix-1]
	in.FreeText = st.texts(last, ref.Free)
	for _, a := range seq.Answers {
		in.Answers = append(in.Answers, wire.Span{Start: a.Start, End: a.End})
		ok := true
		for q := a.Start; q < a.End; q++ {
			if ref.Top[q-seq.Prefix] != seq.Tokens[q] {
				ok = false
				break
			}
		}
		in.Found = append(in.Found, ok)
	}
	in.NeedleAcc = result.Num(math.NaN())
	if len(in.Found) > 0 {
		f := 0
		for _, ok := range in.Found {
			if ok {
				f++
			}
		}
		in.NeedleAcc = result.Num(float64(f) / float64(len(in.Found)))
	}
	if in.Found == nil {
		in.Found = []bool{}
	}
	return in
}

// evalOp answers OpEval: each method in order, one answer each (kept
// results at once), checking between methods whether a newer request
// supersedes this one.
func (e *Engine) evalOp(req wire.Request, emit Emit, check Check) error {
	if e.lm == nil || e.lm.ref == nil {
		return errors.New("eval: this sample is not a model's run (open a checkpoint)")
	}
	if len(req.Methods) == 0 {
		return errors.New("eval: give at least one method")
	}
	p := coreParams(req.Params)
	p.Recompress = req.Recompress
	if err := p.Validate(); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	for _, m := range req.Methods {
		if _, err := core.Lookup(m); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	for i, m := range req.Methods {
		done := i == len(req.Methods)-1
		if i == 0 {
			// The primary method's numbers first: the continuation's
			// metrics cost half of what they cost with the free run.
			r, err := e.lm.result(m, p, req.Params, true, nil)
			if err != nil {
				return err
			}
			if r.FreePending {
				emit(wire.Response{ID: req.ID, Op: req.Op, Eval: r, Progress: 0.5 / float64(len(req.Methods))}, nil)
				if check() {
					return nil
				}
			}
		}
		// The free run checks before each token, so a slider move's
		// numbers wait for one forward pass, not for a whole free run.
		r, err := e.lm.result(m, p, req.Params, false, check)
		if errors.Is(err, eval.ErrStopped) {
			return nil // superseded
		}
		if err != nil {
			return err
		}
		emit(wire.Response{ID: req.ID, Op: req.Op, Eval: r, Progress: float64(i+1) / float64(len(req.Methods)), Done: done}, nil)
		if !done && check() {
			return nil
		}
	}
	return nil
}

// result is the method at p end to end, kept for reuse; with forcedOnly,
// a kept result or one without its free run (FreePending). The free run
// calls stop before each token and gives up with eval.ErrStopped when it
// says so (the teacher-forced numbers stay kept).
func (st *lmState) result(method string, p core.Params, pp wire.Params, forcedOnly bool, stop func() bool) (*wire.EvalResult, error) {
	k := evalKey{method, p}
	r, ok := st.results[k]
	if !ok {
		res, err := st.ref.EvaluateForced(method, p)
		if err != nil {
			return nil, err
		}
		r = resultOf(res, pp)
		r.Recompress = p.Recompress
		if st.results == nil {
			st.results = map[evalKey]*wire.EvalResult{}
		}
		if len(st.order) >= maxEvalResults {
			delete(st.results, st.order[0])
			st.order = st.order[1:]
		}
		st.results[k] = r
		st.order = append(st.order, k)
	}
	if forcedOnly || !r.FreePending {
		return r, nil
	}
	free, div, err := st.ref.FreeRun(method, p, stop)
	if err != nil {
		return nil, err
	}
	whole := *r
	whole.Free, whole.Diverge, whole.FreePending = free, result.Num(div), false
	whole.FreeText = st.texts(st.ref.Seq.Tokens[st.ref.Seq.Prefix-1], free)
	st.results[k] = &whole
	return &whole, nil
}

// resultOf is the wire form of a teacher-forced result
// (eval.EvaluateForced); its free run follows (lmState.result).
func resultOf(res *eval.Result, pp wire.Params) *wire.EvalResult {
	r := &wire.EvalResult{Params: pp, Eval: res.Plain()}
	r.FreePending = res.NA == ""
	return r
}
