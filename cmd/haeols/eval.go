package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/transformer"
	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/internal/termsafe"
)

const evalUsage = `Usage: haeols eval [flags] MODEL

MODEL is a llama2.c checkpoint (.bin; its tokenizer with -z), a GGUF file
(llama, qwen2, qwen3) or a Hugging Face model folder (config.json and
safetensors: Llama, Mistral, Qwen2, Qwen3), which carry their tokenizers.

What the model says with a compressed cache (HAE-OLS.md section 8). The
sequence runs once with the full cache (the reference); then, per method and
ratio, every layer's and KV head's prefix cache is compressed, the
continuation is run teacher-forced from the compressed caches (its own
queries, keys and values computed by the compressed run), and -gen tokens
are generated greedily after the prefix. Per ratio, a table gives per method:

  used        memory of the compressed caches over the full prefix cache's
  peak        the most memory the cache held while continuing (compressed
              rows and exact new tokens) over the full prefix cache's
  kl          mean KL(p_full || p_method) in nats over the continuation
  kl_max      the largest
  agree       share of positions whose most likely token is the full cache's
  ppl_ratio   exp(mean nll_method - mean nll_full) on the continuation
  diverge     first token where the free run differs from the full cache's
  needle_acc  answer spans found (every token the most likely prediction)

The sequence is -prompt (ids) or -text (through the -z tokenizer), then
greedy tokens up to -tokens; or a task: -task passkey (filler text, a key
planted at each of -depths, the question at the end; -trials keys per depth,
and a table of needle_acc against depth) or -task copy (a list of words, then
filler, then the list again). Without -z the tasks are built from token ids
(the model's own text as filler). -recompress K re-compresses the whole
cache every K continued or generated tokens into the first compression's
memory (summary tokens carried over, evicted tokens gone for good), so peak
stays within used + K/prefix. -json prints one JSON document instead of
tables; -csv writes one row per sequence, ratio and method; -v prints the
free runs side by side.

Example:
  haeols eval -z kjv3m.tokenizer.bin -task passkey -tokens 1024 kjv3m.bin
  haeols eval -z kjv3m.tokenizer.bin -text "In the beginning" -tokens 512 -ratios 0.3 -v kjv3m.bin
`

func cmdEval(e *env, args []string) error {
	fs := newFlags("eval")
	tokens := fs.Int("tokens", 0, "N, the sequence length (0: 512 or the model's context if smaller; the prompt alone if longer)")
	prefix := fs.Int("prefix", 0, "cached positions n, compressed; the rest are continued (0: N - min(64, N/8); a task's own split)")
	prompt := fs.String("prompt", "", "comma-separated prompt token ids, starting with BOS (1) (default: BOS)")
	text := fs.String("text", "", "prompt text, through the -z tokenizer (after BOS)")
	tokPath := fs.String("z", "", "llama2.c tokenizer.bin: -text, the tasks in text, and readable free runs")
	ratiosFlag := fs.String("ratios", "0.1,0.2,0.3,0.5", "comma-separated compression ratios in (0, 1]")
	methodsFlag := fs.String("methods", "all", methodsHelp())
	gen := fs.Int("gen", eval.DefaultGen, "tokens of the free run (cut to the context)")
	task := fs.String("task", "", "passkey or copy (default: the prompt and its greedy continuation)")
	depthsFlag := fs.String("depths", "0.1,0.3,0.5,0.7,0.9", "passkey: where the key sits in the filler, 0 (start) to 1 (end)")
	trials := fs.Int("trials", 1, "passkey: keys per depth; copy: passages")
	passage := fs.Int("passage", 48, "copy: tokens of one copy, at least 2 and at most half the context")
	seed := fs.Uint64("seed", 1, "task seed: keys and words")
	asJSON := fs.Bool("json", false, "print a JSON document instead of tables")
	csvPath := fs.String("csv", "", "write one CSV row per sequence, ratio and method to this file")
	verbose := fs.Bool("v", false, "print the free runs, full cache and method side by side")
	workers := fs.Int("workers", 0, "goroutines (0: all CPUs)")
	recompress := fs.Int("recompress", 0, "re-compress the whole cache every K continued or generated tokens, within the first compression's memory (0: compress the prefix once)")
	pf := addParamFlags(fs)
	pos, err := parse(e, fs, args, evalUsage, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one MODEL.bin argument")
	}
	ratios, err := parseRatios("ratios", *ratiosFlag)
	if err != nil {
		return err
	}
	methods, err := parseMethods(*methodsFlag)
	if err != nil {
		return err
	}
	for _, r := range ratios {
		if _, err := pf.params(r); err != nil {
			return err
		}
	}
	switch {
	case *tokens < 0:
		return usagef("-tokens %d: want >= 0", *tokens)
	case *prefix < 0:
		return usagef("-prefix %d: want >= 0", *prefix)
	case *gen < 0:
		return usagef("-gen %d: want >= 0", *gen)
	case *workers < 0:
		return usagef("-workers %d: want >= 0", *workers)
	case *recompress < 0 || *recompress > 1<<20:
		return usagef("-recompress %d: want 0 (once) to %d", *recompress, 1<<20)
	case *trials < 1 || *trials > 1000:
		return usagef("-trials %d: want 1 to 1000", *trials)
	case *passage < 2:
		return usagef("-passage %d: want at least 2 tokens", *passage)
	case *prompt != "" && *text != "":
		return usagef("-prompt and -text: give one")
	case *task != "" && (*prompt != "" || *text != ""):
		return usagef("-task %s builds its own sequence: drop -prompt and -text", *task)
	case *text != "" && *tokPath == "" && !isCheckpoint(pos[0]):
		// A checkpoint carries its tokenizer (eval.Spec refuses -text
		// when it has none).
		return usagef("-text needs the model's tokenizer (-z tokenizer.bin)")
	}
	if *task != "" && *task != "passkey" && *task != "copy" {
		return usagef("-task %q: want passkey or copy", *task)
	}
	depths, err := parseFloats("depths", *depthsFlag)
	if err != nil {
		return err
	}
	for _, d := range depths {
		if !(d >= 0 && d <= 1) {
			return usagef("-depths: %v outside [0, 1]", d)
		}
	}

	lm, codec, _, err := openLM(pos[0], *tokPath)
	if err != nil {
		return err
	}
	seqs, err := evalSequences(lm, codec, evalSpec{task: *task, tokens: *tokens, prefix: *prefix, prompt: *prompt, text: *text,
		depths: depths, trials: *trials, passage: *passage, seed: *seed, gen: *gen})
	if err != nil {
		return err
	}

	var jobs []eval.Job
	for _, r := range ratios {
		p, _ := pf.params(r)
		p.Recompress = *recompress
		for _, mt := range methods {
			jobs = append(jobs, eval.Job{Method: mt, Params: p})
		}
	}
	// Progress counts forward steps: the reference's N, then per job the
	// continuation and the free run.
	jobSteps := func(s evalSeq) int {
		prefix := s.Prefix
		if prefix == 0 {
			prefix = sample.DefaultPrefix(len(s.Tokens))
		}
		return max(1, len(s.Tokens)-prefix+min(s.Gen, lm.Context()-prefix))
	}
	total := 0
	for _, s := range seqs {
		total += len(s.Tokens) + len(jobs)*jobSteps(s)
	}
	bar, endBar := progressBar(e, "eval")
	done := 0
	step := func(base, per int) func(d, _ int) {
		if bar == nil {
			return nil
		}
		return func(d, _ int) { bar(base+d*per, total) }
	}
	runs := make([]evalRun, len(seqs))
	for i, s := range seqs {
		ref, err := eval.PrepareProgress(lm, s.Sequence, core.Options{}, step(done, 1))
		if err != nil {
			endBar()
			return err
		}
		done += len(s.Tokens)
		res, err := ref.EvaluateAll(jobs, *workers, step(done, jobSteps(s)))
		if err != nil {
			endBar()
			return err
		}
		done += len(jobs) * jobSteps(s)
		runs[i] = evalRun{seq: s, ref: ref, results: res}
	}
	endBar()

	doc := evalDocument(displayName(pos[0]), codec, runs)
	doc.Budget = *pf.budget
	doc.Recompress = *recompress
	if *csvPath != "" {
		err := writeOutput("csv", *csvPath, e.stdout, []string{pos[0], *tokPath}, func(w io.Writer) error { return writeEvalCSV(w, doc) })
		if err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("encoding JSON: %w", err)
		}
		return nil
	}
	printEvalTables(e.stdout, doc, ratios, methods, *task == "passkey")
	if *verbose {
		printFreeRuns(e.stdout, doc)
	}
	return nil
}

// openLM opens the model at path: a GGUF file or a Hugging Face folder
// (core/model, run by core/model/transformer, with the tokenizer it
// carries), else a llama2.c checkpoint (core/llama) with the llama2.c
// tokenizer tokPath when given. The checkpoint is nil for llama2.c.
func openLM(path, tokPath string) (eval.LM, eval.Codec, *model.Checkpoint, error) {
	if isCheckpoint(path) {
		if tokPath != "" {
			return nil, nil, nil, usagef("-z %s: the checkpoint %s carries its own tokenizer", quotePath(tokPath), quotePath(path))
		}
		ck, err := model.Open(path)
		if err != nil {
			return nil, nil, nil, err
		}
		tm, err := transformer.New(ck)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", quotePath(path), err)
		}
		var codec eval.Codec
		if ck.Tokenizer != nil {
			codec = ck.Tokenizer
		}
		return tm.Decoder(displayName(path)), codec, ck, nil
	}
	m, err := llama.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	lm := m.Decoder()
	if tokPath == "" {
		return lm, nil, nil, nil
	}
	tok, err := llama.LoadTokenizer(tokPath)
	if err != nil {
		return nil, nil, nil, err
	}
	if tok.Vocab() != lm.Vocab() {
		return nil, nil, nil, fmt.Errorf("-z %s: %d tokens, the model %s has %d", quotePath(tokPath), tok.Vocab(), quotePath(path), lm.Vocab())
	}
	return lm, tok, nil, nil
}

// isCheckpoint reports whether path names a GGUF file (by its magic) or a
// Hugging Face folder (a directory with config.json), which core/model
// reads, rather than a llama2.c checkpoint.
func isCheckpoint(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	if fi.IsDir() {
		return true
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	return string(magic[:n]) == gguf.Magic
}

// evalSpec is how the eval command's flags ask for sequences.
type evalSpec struct {
	task                 string
	tokens, prefix       int
	prompt, text         string
	depths               []float64
	trials, passage, gen int
	seed                 uint64
}

// evalSeq is one sequence to evaluate and what it is.
type evalSeq struct {
	eval.Sequence
	Task  string  // "", "passkey" or "copy"
	Depth float64 // passkey: the key's depth
	Key   string  // the planted key or copied passage
}

// evalSequences builds the sequences the flags ask for (eval.Spec, as the
// browser does): one for the prompt, or -trials per -depths value for a
// task. An error of a field names its flag.
func evalSequences(lm eval.LM, codec eval.Codec, sp evalSpec) ([]evalSeq, error) {
	ctx := lm.Context()
	if sp.tokens > ctx {
		return nil, usagef("-tokens %d exceeds the model's context of %d", sp.tokens, ctx)
	}
	base := eval.Spec{Task: sp.task, Text: sp.text, Tokens: sp.tokens, Prefix: sp.prefix, Passage: sp.passage, Gen: sp.gen}
	if base.Tokens == 0 {
		base.Tokens, base.Grow = min(512, ctx), true
	}
	if sp.prompt != "" {
		base.IDs = []int{}
		for _, f := range strings.Split(sp.prompt, ",") {
			id, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, usagef("-prompt: %q is not a token id", f)
			}
			base.IDs = append(base.IDs, id)
		}
	}
	var specs []eval.Spec
	switch sp.task {
	case "passkey":
		for _, d := range sp.depths {
			for k := 0; k < sp.trials; k++ {
				s := base
				s.Depth, s.Seed = d, sp.seed+uint64(k)
				specs = append(specs, s)
			}
		}
	case "copy":
		for k := 0; k < sp.trials; k++ {
			s := base
			s.Seed = sp.seed + uint64(k)
			specs = append(specs, s)
		}
	default:
		specs = append(specs, base)
	}
	var out []evalSeq
	for _, s := range specs {
		b, err := s.Build(lm, codec)
		if fe, ok := errors.AsType[*eval.FieldError](err); ok {
			return nil, usagef("-%v", fe)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, evalSeq{Sequence: b.Sequence, Task: sp.task, Depth: s.Depth, Key: b.Key})
	}
	return out, nil
}

// evalRun is one sequence's reference and results.
type evalRun struct {
	seq     evalSeq
	ref     *eval.Reference
	results []*eval.Result
}

// evalDoc is the JSON document of haeols eval -json.
type evalDoc struct {
	Model     string `json:"model"`
	Tokenizer bool   `json:"tokenizer"`
	Budget    string `json:"budget"` // -budget: the policy sharing each ratio among the KV heads
	// Recompress is -recompress: the cache is re-compressed every so many
	// decoded tokens (0: once).
	Recompress int          `json:"recompress"`
	Sequences  []evalSeqDoc `json:"sequences"`
	Records    []evalRecord `json:"records"`

	codec eval.Codec // nil without a tokenizer
}

// evalSeqDoc describes one sequence and the full cache's run on it.
type evalSeqDoc struct {
	Task      string      `json:"task,omitempty"`
	Depth     *float64    `json:"depth,omitempty"`
	Key       string      `json:"key,omitempty"`
	Tokens    int         `json:"tokens"`
	Prefix    int         `json:"prefix"`
	Continued int         `json:"continued"`
	Gen       int         `json:"gen"`
	Answers   []eval.Span `json:"answers"`
	IDs       []int       `json:"ids"`
	Text      string      `json:"text,omitempty"`
	Full      evalFullDoc `json:"full"`

	last int // the prefix's last token, after which the free runs start
}

// evalFullDoc is the full cache's own run: its predictions, free run and
// answers (a span the full cache misses says nothing about compression).
type evalFullDoc struct {
	Top       []int      `json:"top"`
	Free      []int      `json:"free"`
	FreeText  string     `json:"free_text,omitempty"`
	Found     []bool     `json:"found"`
	NeedleAcc result.Num `json:"needle_acc"`
}

// evalRecord is one method at one ratio on one sequence, with the metric
// names of HAE-OLS.md section 8.
type evalRecord struct {
	Sequence int     `json:"sequence"`
	Ratio    float64 `json:"ratio"`
	result.Eval
	FreeText string `json:"free_text,omitempty"`
}

// evalDocument gathers the runs into the JSON document (which the tables
// and the CSV are printed from).
func evalDocument(model string, codec eval.Codec, runs []evalRun) *evalDoc {
	doc := &evalDoc{Model: model, Tokenizer: codec != nil, Sequences: []evalSeqDoc{}, Records: []evalRecord{}, codec: codec}
	text := func(prev int, ids []int) string {
		if codec == nil {
			return ""
		}
		if b := eval.Start(codec); len(b) > 0 && len(ids) > 0 && ids[0] == b[0] {
			prev, ids = ids[0], ids[1:]
		}
		return eval.Decode(codec, prev, ids)
	}
	for i, r := range runs {
		ref := r.ref
		sd := evalSeqDoc{Task: r.seq.Task, Key: r.seq.Key, Tokens: ref.N, Prefix: ref.Seq.Prefix, Continued: ref.T, Gen: ref.Seq.Gen,
			Answers: ref.Seq.Answers, IDs: ref.Seq.Tokens, Text: text(0, ref.Seq.Tokens)}
		if sd.Answers == nil {
			sd.Answers = []eval.Span{}
		}
		if r.seq.Task == "passkey" {
			d := r.seq.Depth
			sd.Depth = &d
		}
		last := ref.Seq.Tokens[ref.Seq.Prefix-1]
		full := foundOf(ref.Seq, ref.Top)
		sd.last = last
		sd.Full = evalFullDoc{Top: ref.Top, Free: ref.Free, FreeText: text(last, ref.Free), Found: full, NeedleAcc: result.Num(share(full))}
		doc.Sequences = append(doc.Sequences, sd)
		for _, res := range r.results {
			rec := evalRecord{Sequence: i, Ratio: res.Ratio, Eval: res.Plain()}
			if res.NA == "" {
				rec.FreeText = text(last, res.Free)
			}
			doc.Records = append(doc.Records, rec)
		}
	}
	return doc
}

// foundOf says per answer span whether the predictions top (after positions
// Prefix-1 ..) hold every answer token.
func foundOf(s eval.Sequence, top []int) []bool {
	out := make([]bool, len(s.Answers))
	for k, a := range s.Answers {
		out[k] = true
		for p := a.Start; p < a.End; p++ {
			if top[p-s.Prefix] != s.Tokens[p] {
				out[k] = false
				break
			}
		}
	}
	return out
}

// share is the share of true values (NaN for none).
func share(b []bool) float64 {
	if len(b) == 0 {
		return math.NaN()
	}
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// evalAgg is one method at one ratio over the sequences.
type evalAgg struct {
	n, na                             int
	naWhy                             string
	used, peak, kl, klMax, agree, ppl float64
	pplN                              int
	diverge                           float64
	found, spans                      int
	byDepth                           map[float64][2]int // found, spans
}

func (a *evalAgg) add(r *evalRecord, depth float64) {
	if r.NA != "" {
		a.na++
		a.naWhy = r.NA
		return
	}
	a.n++
	a.used += float64(r.Used)
	a.peak = max(a.peak, float64(r.Peak))
	a.kl += float64(r.KL)
	a.klMax = max(a.klMax, float64(r.KLMax))
	a.agree += float64(r.Agree)
	if p := float64(r.PPLRatio); !math.IsNaN(p) {
		a.ppl += p
		a.pplN++
	}
	a.diverge += float64(r.Diverge)
	f := 0
	for _, x := range r.Found {
		if x {
			f++
		}
	}
	a.found += f
	a.spans += len(r.Found)
	if a.byDepth == nil {
		a.byDepth = map[float64][2]int{}
	}
	d := a.byDepth[depth]
	a.byDepth[depth] = [2]int{d[0] + f, d[1] + len(r.Found)}
}

// printEvalTables prints a table per ratio (means over the sequences) and,
// for the pass-key task, needle_acc against depth.
func printEvalTables(w io.Writer, doc *evalDoc, ratios []float64, methods []string, byDepth bool) {
	s0 := doc.Sequences[0]
	what := fmt.Sprintf("%d tokens, prefix %d compressed, %d continued, free run %d", s0.Tokens, s0.Prefix, s0.Continued, s0.Gen)
	if len(doc.Sequences) > 1 {
		what = fmt.Sprintf("%d sequences (%s: %d tokens, prefix %d), means over them", len(doc.Sequences), s0.Task, s0.Tokens, s0.Prefix)
	}
	if !core.IsUniform(doc.Budget) {
		what += "; every ratio's memory shared among the KV heads by -budget " + doc.Budget
	}
	if doc.Recompress > 0 {
		what += fmt.Sprintf("; the cache re-compressed every %d tokens", doc.Recompress)
	}
	fmt.Fprintf(w, "%s: %s\n", termsafe.String(doc.Model), what)
	var fullFound, fullSpans int
	fullDepth := map[float64][2]int{}
	var depths []float64
	for _, s := range doc.Sequences {
		f := 0
		for _, x := range s.Full.Found {
			if x {
				f++
			}
		}
		fullFound += f
		fullSpans += len(s.Full.Found)
		d := 0.0
		if s.Depth != nil {
			d = *s.Depth
		}
		if _, ok := fullDepth[d]; !ok {
			depths = append(depths, d)
		}
		fd := fullDepth[d]
		fullDepth[d] = [2]int{fd[0] + f, fd[1] + len(s.Full.Found)}
	}
	if fullSpans > 0 {
		fmt.Fprintf(w, "full cache: needle_acc %s (%d of %d answer spans found)\n", fmtFloat(float64(fullFound)/float64(fullSpans)), fullFound, fullSpans)
	}
	aggs := map[string]*evalAgg{}
	key := func(ratio float64, m string) string { return strconv.FormatFloat(ratio, 'g', -1, 64) + " " + m }
	for _, r := range doc.Records {
		k := key(r.Ratio, r.Method)
		if aggs[k] == nil {
			aggs[k] = &evalAgg{}
		}
		d := 0.0
		if dp := doc.Sequences[r.Sequence].Depth; dp != nil {
			d = *dp
		}
		aggs[k].add(&r, d)
	}
	for _, ratio := range ratios {
		fmt.Fprintf(w, "\nratio %g:\n", ratio)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "method\tused\tpeak\tkl\tkl_max\tagree\tppl_ratio\tdiverge\tneedle_acc\t\n")
		for _, m := range methods {
			a := aggs[key(ratio, m)]
			if a == nil {
				continue
			}
			if a.n == 0 {
				fmt.Fprintf(tw, "%s\tn/a (%s)\t\t\t\t\t\t\t\t\n", m, a.naWhy)
				continue
			}
			n := float64(a.n)
			ppl := math.NaN()
			if a.pplN > 0 {
				ppl = a.ppl / float64(a.pplN)
			}
			acc := "-"
			if a.spans > 0 {
				acc = fmt.Sprintf("%s (%d/%d)", fmtFloat(float64(a.found)/float64(a.spans)), a.found, a.spans)
			}
			div := strconv.FormatFloat(a.diverge/n, 'f', -1, 64)
			if a.n > 1 {
				div = strconv.FormatFloat(a.diverge/n, 'f', 1, 64)
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%s\t%s\t%.3f\t%s\t%s\t%s\t\n", m, a.used/n, a.peak, fmtFloat(a.kl/n), fmtFloat(a.klMax), a.agree/n, fmtFloat(ppl), div, acc)
		}
		tw.Flush()
		if !byDepth {
			continue
		}
		fmt.Fprintf(w, "\nneedle_acc by depth of the key at ratio %g (spans found / asked):\n", ratio)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "method\t")
		for _, d := range depths {
			fmt.Fprintf(tw, "%g\t", d)
		}
		fmt.Fprint(tw, "\n(full cache)\t")
		for _, d := range depths {
			fmt.Fprintf(tw, "%d/%d\t", fullDepth[d][0], fullDepth[d][1])
		}
		fmt.Fprintln(tw)
		for _, m := range methods {
			a := aggs[key(ratio, m)]
			if a == nil || a.n == 0 || m == "full" {
				continue
			}
			fmt.Fprintf(tw, "%s\t", m)
			for _, d := range depths {
				fmt.Fprintf(tw, "%d/%d\t", a.byDepth[d][0], a.byDepth[d][1])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// evalColumns are the CSV columns of haeols eval -csv.
var evalColumns = []string{"sequence", "task", "depth", "ratio", "method", "status", "used", "kl", "kl_max", "agree", "ppl_ratio", "diverge", "needle_acc", "peak", "rounds"}

// writeEvalCSV writes one row per sequence, ratio and method.
func writeEvalCSV(w io.Writer, doc *evalDoc) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(evalColumns); err != nil {
		return err
	}
	for _, r := range doc.Records {
		s := doc.Sequences[r.Sequence]
		depth := ""
		if s.Depth != nil {
			depth = csvFloat(*s.Depth)
		}
		row := []string{strconv.Itoa(r.Sequence), s.Task, depth, csvFloat(r.Ratio), r.Method}
		if r.NA != "" {
			row = append(row, "n/a: "+r.NA, "", "", "", "", "", "", "", "", "")
		} else {
			row = append(row, "ok", csvFloat(float64(r.Used)), csvFloat(float64(r.KL)), csvFloat(float64(r.KLMax)), csvFloat(float64(r.Agree)),
				csvFloat(float64(r.PPLRatio)), strconv.Itoa(int(r.Diverge)), csvFloat(float64(r.NeedleAcc)),
				csvFloat(float64(r.Peak)), strconv.Itoa(r.Rounds))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// printFreeRuns prints, per sequence, ratio and method, the free run of
// the full cache and of the method side by side, the divergence marked.
func printFreeRuns(w io.Writer, doc *evalDoc) {
	const col = 38
	for i, s := range doc.Sequences {
		for _, r := range doc.Records {
			if r.Sequence != i || r.NA != "" {
				continue
			}
			ref, got := freeText(doc, s.last, s.Full.Free, int(r.Diverge)), freeText(doc, s.last, r.Free, int(r.Diverge))
			fmt.Fprintf(w, "\nsequence %d, %s at ratio %g: diverges at token %d of %d\n", i, r.Method, r.Ratio, int(r.Diverge), len(r.Free))
			left, right := wrapCols(ref, col), wrapCols(got, col)
			fmt.Fprintf(w, "  %-*s | %s\n", col, "full cache", r.Method)
			for k := 0; k < max(len(left), len(right)); k++ {
				var a, b string
				if k < len(left) {
					a = left[k]
				}
				if k < len(right) {
					b = right[k]
				}
				fmt.Fprintf(w, "  %s%s | %s\n", a, strings.Repeat(" ", col-utf8.RuneCountInString(a)), b)
			}
		}
	}
}

// freeText is a free run as printable text, its decoded text with control
// characters escaped (or its ids without a tokenizer), with » before the
// token at index div where the runs part.
func freeText(doc *evalDoc, last int, ids []int, div int) string {
	if !doc.Tokenizer {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.Itoa(id)
			if i == div {
				s[i] = "»" + s[i]
			}
		}
		return strings.Join(s, " ")
	}
	before := termsafe.String(eval.Decode(doc.codec, last, ids[:div]))
	if div >= len(ids) {
		return before
	}
	if div > 0 {
		last = ids[div-1]
	}
	return before + "»" + termsafe.String(eval.Decode(doc.codec, last, ids[div:]))
}

// wrapCols cuts s into lines of at most width runes, after a space where
// one is in the second half of the line.
func wrapCols(s string, width int) []string {
	var out []string
	r := []rune(s)
	for len(r) > width {
		cut := width
		for i := width; i > width/2; i-- {
			if r[i-1] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, string(r[:cut]))
		r = r[cut:]
	}
	return append(out, string(r))
}
