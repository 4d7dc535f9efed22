package worker

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/induction"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/transformer"
	"github.com/haeols/haeols/internal/bytemodel"
	"github.com/haeols/haeols/wire"
)

// checkpointFilesOf are the byte model m written by the project's writers
// as the files a browser is given: "gguf" (F32), "q8" (GGUF, Q8_0 where
// the rows allow), "hf" (a Hugging Face folder, F32, one file) and
// "shards" (the folder sharded, with its index).
func checkpointFilesOf(t testing.TB, m *llama.Model) map[string]map[string][]byte {
	t.Helper()
	out := map[string]map[string][]byte{}
	f32, err := bytemodel.GGUF(m, model.GGUFOptions{Name: "bytes"})
	if err != nil {
		t.Fatal(err)
	}
	out["gguf"] = map[string][]byte{"bytes.gguf": f32}
	q8 := func(_ string, w *model.Weight) quant.Type {
		if w.Rows == 1 || w.Cols%quant.Q8_0.BlockSize() != 0 {
			return quant.F32
		}
		return quant.Q8_0
	}
	b, err := bytemodel.GGUF(m, model.GGUFOptions{Type: q8})
	if err != nil {
		t.Fatal(err)
	}
	out["q8"] = map[string][]byte{"bytes-q8_0.gguf": b}
	for name, shard := range map[string]int64{"hf": 0, "shards": 1 << 10} {
		dir := filepath.Join(t.TempDir(), name)
		if err := bytemodel.WriteHF(dir, m, "F32", shard); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = map[string][]byte{}
		for _, e := range ents {
			if out[name][e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, ok := out["shards"]["model.safetensors.index.json"]; !ok {
		t.Fatalf("the sharded folder has no index: %v", slices.Sorted(maps.Keys(out["shards"])))
	}
	return out
}

// checkpointSource is the "checkpoint" source of files.
func checkpointSource(name string, files map[string][]byte, p *wire.Prompt) *wire.Source {
	return &wire.Source{Kind: "checkpoint", Name: name, Prompt: p, Files: slices.Sorted(maps.Keys(files))}
}

// corePath is what `haeols eval` computes for files: core/model.Decode,
// the transformer, eval.Spec's sequence and eval.Prepare; and the files'
// tokenizer.
func corePath(t testing.TB, name string, files map[string][]byte, text string, tokens, gen int) (*eval.Reference, eval.Codec) {
	t.Helper()
	ck, err := model.Decode(files)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := transformer.New(ck)
	if err != nil {
		t.Fatal(err)
	}
	lm := tm.Decoder(name)
	b, err := eval.Spec{Text: text, Tokens: tokens, Gen: gen}.Build(lm, ck.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := eval.Prepare(lm, b.Sequence, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ref, ck.Tokenizer
}

// sameBits compares the worker's answer to core/eval's result to the
// last bit.
func sameBits(t *testing.T, what string, got *wire.EvalResult, want *eval.Result) {
	t.Helper()
	if got.NA != want.NA {
		t.Errorf("%s %s: na %q, want %q", what, want.Method, got.NA, want.NA)
		return
	}
	if want.NA != "" {
		return
	}
	if float64(got.KL) != want.KL || float64(got.KLMax) != want.KLMax || float64(got.Agree) != want.Agree || float64(got.PPLRatio) != want.PPLRatio ||
		float64(got.Used) != want.Used || int(got.Diverge) != want.Diverge || !slices.Equal(got.Top, want.Top) || !slices.Equal(got.Free, want.Free) {
		t.Errorf("%s %s: kl %v agree %v ppl %v diverge %d, want %v %v %v %d", what, want.Method, got.KL, got.Agree, got.PPLRatio, int(got.Diverge), want.KL, want.Agree, want.PPLRatio, want.Diverge)
	}
	for k, x := range want.KLs {
		if float64(got.KLs[k]) != x {
			t.Errorf("%s %s: kl at %d = %v, want %v", what, want.Method, k, got.KLs[k], x)
			break
		}
	}
}

// sameInfo reports whether two runs are the same but for the model's
// name: the prompt, sequence, texts, predictions and free runs.
func sameInfo(a, b *wire.EvalInfo) bool {
	c, d := *a, *b
	c.Model = d.Model
	if math.IsNaN(float64(c.NeedleAcc)) && math.IsNaN(float64(d.NeedleAcc)) {
		c.NeedleAcc, d.NeedleAcc = 0, 0 // NaN is no value: equal here
	}
	return reflect.DeepEqual(c, d)
}

// evalAll asks the engine for methods at p and returns the whole answers.
func evalAll(t *testing.T, e *Engine, methods []string, p wire.Params) map[string]*wire.EvalResult {
	t.Helper()
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 2, Op: wire.OpEval, Methods: methods, Params: p}, nil, rc.emit, nil)
	out := map[string]*wire.EvalResult{}
	for _, s := range rc.out {
		if s.r.Error != "" {
			t.Fatalf("eval: %s", s.r.Error)
		}
		if s.r.Eval != nil && !s.r.Eval.FreePending {
			out[s.r.Eval.Method] = s.r.Eval
		}
	}
	if len(out) != len(methods) {
		t.Fatalf("eval: %d whole answers for %d methods", len(out), len(methods))
	}
	return out
}

// loadCheckpoint loads files as a "checkpoint" source into a new engine.
func loadCheckpoint(t *testing.T, name string, files map[string][]byte, p *wire.Prompt) (*Engine, wire.Response) {
	t.Helper()
	e := &Engine{}
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: checkpointSource(name, files, p)}, files, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Info == nil || r.Info.Eval == nil || !r.Done {
		t.Fatalf("load %s: %+v", name, r)
	}
	return e, r
}

// TestLoadCheckpoint loads the random byte model as a GGUF file (F32 and
// Q8_0) and as a Hugging Face folder (one file and sharded) with the byte
// tokenizer they carry, runs a text prompt, and checks the run and every
// method's end-to-end numbers against core/eval on core/model's reading of
// the same files (what `haeols eval` does) to the last bit; the F32 files
// give the llama2.c file's EvalInfo (sequence, texts, predictions, free
// runs) and, within float32 rounding (the transformer sums in another order
// than run.c), its numbers.
func TestLoadCheckpoint(t *testing.T) {
	m, ckpt, tb := byteModel(t)
	const text = "The pass key is 123."
	prompt := &wire.Prompt{Text: text, Tokens: 120, Gen: 12}
	methods := []string{"hae-ols", "topk", "full", "quant"}
	p := wire.Params{Ratio: 0.2, Lambda: core.DefaultLambda, Phi: core.DefaultPhi, Tau: core.DefaultTau}

	bin := &Engine{}
	rc := &recorder{t: t}
	bin.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "bytes.bin", Tokenizer: "bytes.tokenizer.bin", Prompt: prompt}},
		map[string][]byte{"file": ckpt, "tokenizer": tb}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || r.Info.Eval == nil {
		t.Fatalf("load bytes.bin: %+v", r)
	}
	binEv := rc.last().Info.Eval
	binRes := evalAll(t, bin, methods, p)

	all := checkpointFilesOf(t, m)
	for _, kind := range []string{"gguf", "q8", "hf", "shards"} {
		t.Run(kind, func(t *testing.T) {
			files := all[kind]
			e, r := loadCheckpoint(t, kind, files, prompt)
			ev, info := r.Info.Eval, r.Info
			ref, codec := corePath(t, kind, files, text, 120, 12)
			if !slices.Equal(ev.IDs, ref.Seq.Tokens) || ev.Prefix != ref.Seq.Prefix || !slices.Equal(ev.Top, ref.Top) || !slices.Equal(ev.Free, ref.Free) {
				t.Fatalf("the worker's run differs from core/eval's on the same files: prefix %d/%d, free %v/%v", ev.Prefix, ref.Seq.Prefix, ev.Free, ref.Free)
			}
			if !ev.Tokenizer || ev.Model != kind || info.Tokens != 120 || info.Layers != 2 || info.Heads != 4 || info.KVHeads != 2 || info.Dim != 8 {
				t.Errorf("info %+v, eval %+v", info, ev)
			}
			// The text as `haeols eval` prints it: BOS and the space
			// prefix as nothing, then each token's bytes.
			if got := strings.Join(ev.Text, ""); got != text+strings.Join(ev.Text[len(text)+2:], "") || ev.Text[0] != "" || ev.Text[1] != "" {
				t.Errorf("sequence text %q", got)
			}
			if !slices.Equal(e.model.Sample.Meta.Tokens[:4], []string{"<s>", " ", "T", "h"}) {
				t.Errorf("the per-head views' token labels begin %q", e.model.Sample.Meta.Tokens[:4])
			}
			got := evalAll(t, e, methods, p)
			for _, mt := range methods {
				want, err := ref.Evaluate(mt, core.DefaultParams(p.Ratio))
				if err != nil {
					t.Fatal(err)
				}
				sameBits(t, kind, got[mt], want)
				if last := ref.Seq.Tokens[ref.Seq.Prefix-1]; strings.Join(got[mt].FreeText, "") != eval.Decode(codec, last, want.Free) {
					t.Errorf("%s: free text %q", mt, strings.Join(got[mt].FreeText, ""))
				}
			}
			if kind == "q8" {
				return
			}
			// F32: the llama2.c file's sequence and greedy runs, its
			// numbers within float32 rounding.
			if !sameInfo(ev, binEv) {
				t.Errorf("another run than bytes.bin's:\n %+v\n %+v", ev, binEv)
			}
			for _, mt := range methods {
				if got[mt].NA != binRes[mt].NA {
					t.Errorf("%s: na %q, bytes.bin %q", mt, got[mt].NA, binRes[mt].NA)
				}
				if got[mt].NA != "" {
					continue
				}
				a, b := float64(got[mt].KL), float64(binRes[mt].KL)
				if math.Abs(a-b) > 1e-4+0.02*b || got[mt].Used != binRes[mt].Used {
					t.Errorf("%s: kl %v used %v, bytes.bin %v %v", mt, a, got[mt].Used, b, binRes[mt].Used)
				}
			}
			// A new prompt runs on the kept model.
			rc := &recorder{t: t}
			e.Handle(wire.Request{ID: 3, Op: wire.OpPrompt, Prompt: &wire.Prompt{Task: "passkey", Tokens: 300, Depth: 0.5, Gen: 4}}, nil, rc.emit, nil)
			if r := rc.last(); r.Error != "" || r.Info == nil || r.Info.Eval == nil || len(r.Info.Eval.Needles) != 5 {
				t.Errorf("pass-key prompt on %s: %+v", kind, r)
			}
		})
	}
}

// TestLoadCheckpointKJV loads the real byte model kjv3m written as a GGUF
// file and as a Hugging Face folder (F32) and runs the same prompt as
// kjv3m.bin with its llama2.c tokenizer: the same EvalInfo (sequence,
// texts, predictions, free runs), end-to-end numbers within float32
// rounding, and to the last bit those of core/eval on the files. Native
// only (slow under Node).
func TestLoadCheckpointKJV(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("native only: the real model is slow under Node; TestLoadCheckpoint covers wasm")
	}
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "models")
	}
	bin, err := os.ReadFile(filepath.Join(dir, "kjv3m.bin"))
	if err != nil {
		t.Skipf("the real model is absent: %v", err)
	}
	tb, err := os.ReadFile(filepath.Join(dir, "kjv3m.tokenizer.bin"))
	if err != nil {
		t.Skipf("the real model's tokenizer is absent: %v", err)
	}
	m, err := llama.Decode("kjv3m.bin", bin)
	if err != nil {
		t.Fatal(err)
	}
	const text = "In the beginning God created"
	prompt := &wire.Prompt{Text: text, Tokens: 96, Gen: 16}
	methods := []string{"hae-ols", "snapkv"}
	p := wire.Params{Ratio: 0.3, Lambda: core.DefaultLambda, Phi: core.DefaultPhi, Tau: core.DefaultTau}
	e := &Engine{}
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "kjv3m.bin", Tokenizer: "kjv3m.tokenizer.bin", Prompt: prompt}},
		map[string][]byte{"file": bin, "tokenizer": tb}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || r.Info.Eval == nil {
		t.Fatalf("load kjv3m.bin: %+v", r)
	}
	binEv := rc.last().Info.Eval
	binRes := evalAll(t, e, methods, p)
	all := checkpointFilesOf(t, m)
	for _, kind := range []string{"gguf", "hf"} {
		files := all[kind]
		e, r := loadCheckpoint(t, "kjv3m-"+kind, files, prompt)
		ev := r.Info.Eval
		if !sameInfo(ev, binEv) {
			t.Errorf("%s: another run than kjv3m.bin's:\n %q\n %q", kind, strings.Join(ev.Text, ""), strings.Join(binEv.Text, ""))
		}
		ref, _ := corePath(t, kind, files, text, 96, 16)
		got := evalAll(t, e, methods, p)
		for _, mt := range methods {
			want, err := ref.Evaluate(mt, core.DefaultParams(p.Ratio))
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, kind, got[mt], want)
			a, b := float64(got[mt].KL), float64(binRes[mt].KL)
			if math.Abs(a-b) > 1e-4+0.02*b || got[mt].Diverge != binRes[mt].Diverge {
				t.Errorf("%s %s: kl %v diverge %v, kjv3m.bin %v %v", kind, mt, a, got[mt].Diverge, b, binRes[mt].Diverge)
			}
			if a != b {
				t.Logf("%s %s: kl %v, kjv3m.bin %v (float32 rounding)", kind, mt, a, b)
			}
		}
	}
}

// TestLoadCheckpointErrors: files that are missing, extra, lying, truncated
// or too many get an error naming the file, and the loaded sample stays.
func TestLoadCheckpointErrors(t *testing.T) {
	m, _, _ := byteModel(t)
	all := checkpointFilesOf(t, m)
	g := all["gguf"]["bytes.gguf"]
	without := func(kind string, names ...string) map[string][]byte {
		out := map[string][]byte{}
		for n, b := range all[kind] {
			if !slices.Contains(names, n) {
				out[n] = b
			}
		}
		return out
	}
	var shard string
	for n := range all["shards"] {
		if strings.HasPrefix(n, "model-00002") {
			shard = n
		}
	}
	lying := slices.Clone(g)
	lying[8] = 0xff // the tensor count: far more tensors than the file holds
	tests := []struct {
		name  string
		files map[string][]byte
		src   func(*wire.Source)
		want  string
	}{
		{"no files", map[string][]byte{}, nil, "no files"},
		{"truncated gguf", map[string][]byte{"bytes.gguf": g[:len(g)/2]}, nil, "bytes.gguf"},
		{"lying gguf", map[string][]byte{"bytes.gguf": lying}, nil, "bytes.gguf"},
		{"empty gguf", map[string][]byte{"bytes.gguf": {}}, nil, "bytes.gguf: the file is empty"},
		{"gguf among others", map[string][]byte{"bytes.gguf": g, "config.json": all["hf"]["config.json"]}, nil, "give one GGUF file alone"},
		{"no config.json", without("hf", "config.json"), nil, "no config.json"},
		{"a shard missing", without("shards", shard), nil, shard + " is missing"},
		{"no weights", without("hf", "model.safetensors"), nil, "model.safetensors is missing"},
		{"tokenizer.json missing", without("hf", "tokenizer.json"), nil, "tokenizer.json is missing"},
		{"truncated weights", func() map[string][]byte {
			f := without("hf")
			f["model.safetensors"] = f["model.safetensors"][:1000]
			return f
		}(), nil, "model.safetensors"},
		{"not a tokenizer", func() map[string][]byte {
			f := without("hf")
			f["tokenizer.json"] = []byte(`{"model": {"type": "WordPiece"}}`)
			return f
		}(), nil, "WordPiece"},
		{"no buffer", map[string][]byte{}, func(s *wire.Source) { s.Files = []string{"bytes.gguf"} }, "bytes.gguf: the message carries no buffer"},
		{"a path", map[string][]byte{"../bytes.gguf": g}, nil, "not a file name"},
		{"twice", map[string][]byte{"bytes.gguf": g}, func(s *wire.Source) { s.Files = []string{"bytes.gguf", "bytes.gguf"} }, "given twice"},
	}
	e, rc, _ := loaded(t, "tiny")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := checkpointSource("mine", tc.files, nil)
			if tc.src != nil {
				tc.src(src)
			}
			rc.out = nil
			e.Handle(wire.Request{Op: wire.OpLoad, Source: src}, tc.files, rc.emit, nil)
			if r := rc.last(); !strings.Contains(r.Error, tc.want) || !r.Done {
				t.Fatalf("error %q, want it to mention %q", r.Error, tc.want)
			}
			if e.info.Name != "tiny" || e.lm != nil {
				t.Fatalf("a refused load replaced the sample: %+v", e.info)
			}
		})
	}
	if runtime.GOOS == "js" {
		return // 512 MiB is too much for Node's default memory
	}
	// Too many bytes in all, before anything is decoded (the two buffers
	// share one array of zeros).
	big := make([]byte, MaxFileBytes/2+1)
	src := &wire.Source{Kind: "checkpoint", Name: "big", Files: []string{"config.json", "model.safetensors"}}
	rc.out = nil
	e.Handle(wire.Request{Op: wire.OpLoad, Source: src}, map[string][]byte{"config.json": big, "model.safetensors": big}, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "MiB in all") {
		t.Errorf("two files over the limit in all: %q", r.Error)
	}
}

// TestLoadInductionURL loads the constructed induction model the way the
// app opens a bundled GGUF file (a "checkpoint" source with the URL of
// one of its own files, models/induction.gguf) and runs a pass-key
// prompt: the full cache finds the key, streaming at 0.1 loses it.
func TestLoadInductionURL(t *testing.T) {
	if testing.Short() && runtime.GOOS == "js" {
		t.Skip("slow under Node")
	}
	ck, err := induction.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := model.WriteGGUF(&buf, ck, model.GGUFOptions{Name: "induction"}); err != nil {
		t.Fatal(err)
	}
	const url = "models/induction.gguf"
	e := &Engine{Fetch: func(u string) ([]byte, error) {
		if u != url {
			return nil, fmt.Errorf("no file %s", u)
		}
		return buf.Bytes(), nil
	}}
	rc := &recorder{t: t}
	src := &wire.Source{Kind: "checkpoint", URL: url, Prompt: &wire.Prompt{Task: "passkey", Tokens: 400, Depth: 0.3, Gen: 4}}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: src}, nil, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Info == nil || r.Info.Eval == nil || !r.Done {
		t.Fatalf("load %s: %+v", url, r)
	}
	if ev := r.Info.Eval; ev.Model != "induction.gguf" || !ev.Tokenizer || ev.NeedleAcc != 1 || len(ev.Needles) != 5 {
		t.Fatalf("model %q, tokenizer %v, needle_acc %v, needles %v; want induction.gguf, true, 1, five", ev.Model, ev.Tokenizer, ev.NeedleAcc, ev.Needles)
	}
	got := evalAll(t, e, []string{"full", "streaming"}, wire.Params{Ratio: 0.1, Lambda: core.DefaultLambda, Phi: core.DefaultPhi, Tau: core.DefaultTau})
	if got["full"].NeedleAcc != 1 || got["streaming"].NeedleAcc != 0 {
		t.Errorf("needle_acc: full %v, streaming@0.1 %v; want 1 and 0", got["full"].NeedleAcc, got["streaming"].NeedleAcc)
	}
	// Not one of the app's files: refused before any fetch.
	e.Handle(wire.Request{ID: 2, Op: wire.OpLoad, Source: &wire.Source{Kind: "checkpoint", URL: "https://example.com/x.gguf"}}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "only relative urls") {
		t.Errorf("a remote url: %+v", r)
	}
}
