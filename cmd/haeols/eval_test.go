package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/internal/bytemodel"
)

// byteModel writes a random llama2.c model with byte tokens (vocab 259: 0
// <unk>, 1 BOS, 2 EOS, 3+b the byte b) and its tokenizer file into dir.
func byteModel(t *testing.T) (model, tok string) {
	t.Helper()
	dir := t.TempDir()
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 259, SeqLen: 320, SharedClassifier: true}, 11)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	model = filepath.Join(dir, "bytes.bin")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tb := llama.ByteTokenizerFile()
	tok = filepath.Join(dir, "bytes.tokenizer.bin")
	if err := os.WriteFile(tok, tb, 0o644); err != nil {
		t.Fatal(err)
	}
	return model, tok
}

// evalJSON is the part of haeols eval -json the tests read.
type evalJSON struct {
	Model     string `json:"model"`
	Sequences []struct {
		Task    string   `json:"task"`
		Depth   *float64 `json:"depth"`
		Key     string   `json:"key"`
		Tokens  int      `json:"tokens"`
		Prefix  int      `json:"prefix"`
		Answers []struct {
			Start int `json:"start"`
			End   int `json:"end"`
		} `json:"answers"`
		IDs  []int  `json:"ids"`
		Text string `json:"text"`
		Full struct {
			Free     []int  `json:"free"`
			FreeText string `json:"free_text"`
		} `json:"full"`
	} `json:"sequences"`
	Records []map[string]any `json:"records"`
}

func TestEvalPassKeyJSON(t *testing.T) {
	model, tok := byteModel(t)
	code, out, errOut := cli(t, "eval", "-json", "-z", tok, "-task", "passkey", "-tokens", "300", "-depths", "0.2,0.8", "-ratios", "0.2,0.5", "-methods", "hae-ols,topk,quant,full", "-gen", "12", model)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc evalJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sequences) != 2 || len(doc.Records) != 2*2*4 {
		t.Fatalf("%d sequences and %d records, want 2 and 16", len(doc.Sequences), len(doc.Records))
	}
	for i, s := range doc.Sequences {
		if s.Task != "passkey" || s.Depth == nil || len(s.Answers) != 1 || s.Tokens > 300 || s.Tokens < 250 {
			t.Fatalf("sequence %d: %+v", i, s)
		}
		a := s.Answers[0]
		var digits []byte
		for _, id := range s.IDs[a.Start:a.End] {
			digits = append(digits, byte(id-3))
		}
		if string(digits) != s.Key || len(s.Key) != 5 || a.Start < s.Prefix {
			t.Errorf("sequence %d: answer %q at [%d, %d) after prefix %d, key %q", i, digits, a.Start, a.End, s.Prefix, s.Key)
		}
		if !strings.Contains(s.Text, "The pass key is "+s.Key+". Remember it.") || !strings.HasSuffix(s.Text, "What is the pass key? The pass key is "+s.Key) {
			t.Errorf("sequence %d text: %q", i, s.Text)
		}
		if len(s.Full.Free) != 12 {
			t.Errorf("sequence %d: free run of %d tokens, want 12", i, len(s.Full.Free))
		}
	}
	for _, r := range doc.Records {
		for _, k := range []string{"sequence", "method", "ratio", "used", "kl", "kl_max", "agree", "ppl_ratio", "diverge", "needle_acc"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("record %v lacks %q", r, k)
			}
		}
		switch {
		case r["method"] == "full":
			if r["kl"] != 0.0 || r["agree"] != 1.0 || r["diverge"] != 12.0 {
				t.Errorf("full: %v", r)
			}
		case r["method"] == "quant" && r["ratio"] == 0.2:
			if r["na"] == nil || r["kl"] != nil {
				t.Errorf("quant at 0.2 should not fit: %v", r)
			}
		default:
			if kl, ok := r["kl"].(float64); !ok || kl < 0 || r["used"].(float64) > r["ratio"].(float64)+1e-9 {
				t.Errorf("record %v", r)
			}
		}
	}
}

func TestEvalTablesAndCSV(t *testing.T) {
	model, tok := byteModel(t)
	csvPath := filepath.Join(t.TempDir(), "e.csv")
	code, out, errOut := cli(t, "eval", "-z", tok, "-text", "Hello there", "-tokens", "96", "-ratios", "0.5", "-methods", "topk,full", "-v", "-gen", "8", "-csv", csvPath, model)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"bytes.bin: 96 tokens, prefix 84 compressed, 12 continued, free run 8", "ratio 0.5:", "kl_max", "ppl_ratio", "needle_acc",
		"sequence 0, topk at ratio 0.5: diverges at token", "full cache"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != strings.Join(evalColumns, ",") || rows[2][4] != "full" || rows[2][7] != "0" {
		t.Errorf("csv: %v", rows)
	}
}

// TestEvalRecompress checks -recompress in the JSON and the table: the
// cache re-compressed every 8 tokens holds at most its budget plus 8
// positions, where compressing once lets it grow by the whole continuation.
func TestEvalRecompress(t *testing.T) {
	model, _ := byteModel(t)
	peak := map[string]float64{}
	for _, k := range []string{"0", "8"} {
		code, out, errOut := cli(t, "eval", "-json", "-recompress", k, "-tokens", "160", "-prefix", "96", "-ratios", "0.5", "-methods", "streaming,hae-ols", "-gen", "24", model)
		if code != 0 {
			t.Fatalf("-recompress %s: exit %d: %s", k, code, errOut)
		}
		var doc struct {
			Recompress int              `json:"recompress"`
			Records    []map[string]any `json:"records"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(doc.Recompress) != k || len(doc.Records) != 2 {
			t.Fatalf("-recompress %s: document says %d, %d records", k, doc.Recompress, len(doc.Records))
		}
		for _, r := range doc.Records {
			m := r["method"].(string)
			rounds, p := r["rounds"].(float64), r["peak"].(float64)
			peak[k+m] = p
			want := 0.0
			if k == "8" {
				want = 7 // 64 continued positions, a re-compression before every 8 after the first
			}
			if rounds != want {
				t.Errorf("-recompress %s %s: %v rounds, want %v", k, m, rounds, want)
			}
		}
	}
	for _, m := range []string{"streaming", "hae-ols"} {
		if once, every := peak["0"+m], peak["8"+m]; once < 64.0/96 || every > 0.5+8.0/96+1e-9 {
			t.Errorf("%s: peak %v compressing once, %v re-compressing every 8", m, once, every)
		}
	}
	code, out, errOut := cli(t, "eval", "-recompress", "8", "-tokens", "160", "-prefix", "96", "-ratios", "0.5", "-methods", "streaming", "-gen", "8", model)
	if code != 0 || !strings.Contains(out, "the cache re-compressed every 8 tokens") || !strings.Contains(out, "peak") {
		t.Errorf("table: exit %d %s\n%s", code, errOut, out)
	}
}

// TestEvalWorkers checks that the JSON does not depend on -workers.
func TestEvalWorkers(t *testing.T) {
	model, _ := byteModel(t)
	var outs []string
	for _, w := range []string{"1", "3"} {
		code, out, errOut := cli(t, "eval", "-json", "-workers", w, "-tokens", "80", "-ratios", "0.3,0.6", "-methods", "hae-ols,snapkv,lowrank", "-gen", "6", model)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Error("haeols eval -json differs between -workers 1 and 3")
	}
}

func TestEvalUsage(t *testing.T) {
	model, tok := byteModel(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-text", "hi", model}, "-text needs the model's tokenizer"},
		{[]string{"-task", "haystack", model}, `-task "haystack": want passkey or copy`},
		{[]string{"-task", "passkey", "-text", "x", "-z", tok, model}, "-task passkey builds its own sequence"},
		{[]string{"-depths", "1.5", "-task", "passkey", model}, "-depths: 1.5 outside [0, 1]"},
		{[]string{"-tokens", "400", model}, "-tokens 400 exceeds the model's context of 320"},
		{[]string{"-prompt", "1,x", model}, `-prompt: "x" is not a token id`},
		{[]string{"-prompt", "1,999", model}, "-prompt: token 999 outside the vocabulary [0, 259)"},
		{[]string{"-ratios", "0", model}, "-ratios"},
		{[]string{"-prefix", "100", "-tokens", "80", model}, "-prefix 100: the sequence has 80 tokens"},
		{[]string{"-trials", "0", model}, "-trials 0"},
		{[]string{"-passage", "0", "-task", "copy", model}, "-passage 0: want at least 2"},
		{[]string{"-passage", "-1", "-task", "copy", model}, "-passage -1"},
		{[]string{"-depths", "-0.1", "-task", "passkey", model}, "-depths: -0.1 outside [0, 1]"},
		{[]string{"-depths", "NaN", "-task", "passkey", model}, "-depths"},
		{[]string{"-tokens", "-5", model}, "-tokens"},
		{[]string{"-gen", "-1", model}, "-gen -1: want >= 0"},
		{[]string{"-recompress", "-3", model}, "-recompress -3: want 0 (once)"},
		{[]string{}, "want one MODEL.bin argument"},
	} {
		code, _, errOut := cli(t, append([]string{"eval"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %v: exit %d, %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	// A passage that cannot fit twice is refused before it is built (a
	// billion tokens once took as long as encoding them).
	for _, args := range [][]string{{"-task", "copy", "-passage", "1000000000", model}, {"-task", "copy", "-passage", "1000", "-z", tok, model}} {
		code, _, errOut := cli(t, append([]string{"eval"}, args...)...)
		if code != exitFail || !strings.Contains(errOut, "twice that does not fit the model's context of 320 tokens (at most 159)") {
			t.Errorf("eval %v: exit %d, %q", args, code, errOut)
		}
	}
}

// TestEvalCheckpoints runs haeols eval on the byte model written as a GGUF
// file and as a Hugging Face folder (core/model, core/model/transformer):
// the same sequence and the same numbers as the llama2.c file, within
// float32 rounding.
func TestEvalCheckpoints(t *testing.T) {
	bin, ggufPath, ck := byteGGUF(t)
	dir := filepath.Dir(ggufPath)
	hfDir := filepath.Join(dir, "bytes-hf")
	if err := model.WriteHF(hfDir, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	args := []string{"eval", "-json", "-prompt", "1,40,41,42", "-tokens", "96", "-ratios", "0.3", "-methods", "hae-ols,topk,full", "-gen", "8"}
	var docs []evalJSON
	for _, path := range []string{bin, ggufPath, hfDir} {
		code, out, errOut := cli(t, append(args, path)...)
		if code != 0 {
			t.Fatalf("eval %s: exit %d: %s", path, code, errOut)
		}
		var doc evalJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	for i, doc := range docs[1:] {
		if !slices.Equal(doc.Sequences[0].IDs, docs[0].Sequences[0].IDs) {
			t.Errorf("checkpoint %d: another greedy sequence than the llama2.c file's", i+1)
		}
		for k, r := range doc.Records {
			a, b := r["kl"].(float64), docs[0].Records[k]["kl"].(float64)
			if math.Abs(a-b) > 1e-4+0.02*b {
				t.Errorf("checkpoint %d, %v: kl %g, llama2.c file %g", i+1, r["method"], a, b)
			}
		}
	}
	if code, _, errOut := cli(t, "eval", "-z", "x.bin", ggufPath); code != exitUsage || !strings.Contains(errOut, "carries its own tokenizer") {
		t.Errorf("-z with a GGUF file: exit %d, %s", code, errOut)
	}
}

// TestCaptureAndInfoCheckpoint captures the byte model written as a GGUF
// file (the same q/k/v as from the llama2.c file, within float32 rounding,
// and metadata saying what the model was) and describes it with info.
func TestCaptureAndInfoCheckpoint(t *testing.T) {
	bin, ggufPath, _ := byteGGUF(t)
	dir := filepath.Dir(ggufPath)
	fromBin, fromGGUF := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	if code, _, errOut := cli(t, "capture", "-tokens", "64", "-dtype", "F32", "-o", fromBin, bin); code != 0 {
		t.Fatalf("capture %s: %s", bin, errOut)
	}
	if code, _, errOut := cli(t, "capture", "-tokens", "64", "-dtype", "F32", "-o", fromGGUF, ggufPath); code != 0 {
		t.Fatalf("capture %s: %s", ggufPath, errOut)
	}
	a, err := sample.Read(fromBin)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sample.Read(fromGGUF)
	if err != nil {
		t.Fatal(err)
	}
	if a.N != g.N || a.L != g.L || a.H != g.H || a.Prefix() != g.Prefix() {
		t.Fatalf("shapes differ: %+v vs %+v", a, g)
	}
	// The checkpoint path keeps each head's q and k in the half-split RoPE
	// order (pairs (i, i+d/2)), llama2.c in the interleaved one (pairs (2i,
	// 2i+1)): the same vectors up to that permutation, so the same logits.
	d := a.D
	perm := func(x []float32, j int) float32 {
		h, i := j/d*d, j%d
		if i < d/2 {
			return x[h+2*i]
		}
		return x[h+2*(i-d/2)+1]
	}
	var worst float64
	for j := range g.K {
		worst = max(worst, math.Abs(float64(perm(a.K, j)-g.K[j])), math.Abs(float64(a.V[j]-g.V[j])))
	}
	for j := range g.Q {
		worst = max(worst, math.Abs(float64(perm(a.Q, j)-g.Q[j])))
	}
	if worst > 1e-4 {
		t.Errorf("q/k/v from the GGUF file differ from the llama2.c file's by up to %g", worst)
	}
	if !strings.Contains(g.Meta.Source, "checkpoint capture bytes.gguf arch=llama weights=F32:") || g.Meta.Extra["token_ids"] != a.Meta.Extra["token_ids"] {
		t.Errorf("metadata: source %q, ids %q vs %q", g.Meta.Source, g.Meta.Extra["token_ids"], a.Meta.Extra["token_ids"])
	}
	code, out, errOut := cli(t, "info", ggufPath)
	if code != 0 || !strings.Contains(out, "(checkpoint)") || !strings.Contains(out, "architecture llama: 2 layers, width 32") {
		t.Errorf("info %s: exit %d\n%s%s", ggufPath, code, out, errOut)
	}
}

// byteGGUF writes the byte model (byteModel) as a llama2.c file and as a
// GGUF file beside it, and returns both paths and its checkpoint.
func byteGGUF(t *testing.T) (bin, ggufPath string, ck *model.Checkpoint) {
	t.Helper()
	bin, _ = byteModel(t)
	lm, err := llama.Load(bin)
	if err != nil {
		t.Fatal(err)
	}
	if ck, err = model.FromLlama2C(lm); err != nil {
		t.Fatal(err)
	}
	ggufPath = filepath.Join(t.TempDir(), "bytes.gguf")
	var b bytes.Buffer
	if err := model.WriteGGUF(&b, ck, model.GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ggufPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, ggufPath, ck
}

// TestEvalTextCheckpoint runs -text on the byte model written as a GGUF
// file with the byte tokenizer it carries (no -z): the sequence of the
// llama2.c file with its tokenizer file. Without a tokenizer, -text is
// refused.
func TestEvalTextCheckpoint(t *testing.T) {
	bin, tok := byteModel(t)
	lm, err := llama.Load(bin)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bytemodel.GGUF(lm, model.GGUFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withTok := filepath.Join(t.TempDir(), "bytes-tok.gguf")
	if err := os.WriteFile(withTok, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"eval", "-json", "-text", "In the beginning", "-tokens", "48", "-gen", "4", "-ratios", "0.5", "-methods", "full"}
	var ids [][]int
	for _, a := range [][]string{{"-z", tok, bin}, {withTok}} {
		code, out, errOut := cli(t, append(args, a...)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d: %s", a, code, errOut)
		}
		var doc evalJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, doc.Sequences[0].IDs)
	}
	if !slices.Equal(ids[0], ids[1]) || ids[0][1] != 3+' ' || ids[0][2] != 3+'I' {
		t.Errorf("-text through the GGUF file's tokenizer: %v, through -z: %v", ids[1][:4], ids[0][:4])
	}
	_, noTok, _ := byteGGUF(t)
	if code, _, errOut := cli(t, append(args, noTok)...); code != exitUsage || !strings.Contains(errOut, "needs the model's tokenizer") {
		t.Errorf("-text with a GGUF file without a tokenizer: exit %d, %s", code, errOut)
	}
}
