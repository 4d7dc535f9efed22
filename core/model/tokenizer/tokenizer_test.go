package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model/gguf"
)

// spmVocab is a SentencePiece vocabulary: <unk>, <s>, </s>, the 256 byte
// tokens (when bytes), then pieces with scores.
func spmVocab(bytes bool, pieces ...any) (tokens []string, scores []float32, types []int32) {
	tokens = []string{"<unk>", "<s>", "</s>"}
	scores = []float32{0, 0, 0}
	types = []int32{int32(Unknown), int32(Control), int32(Control)}
	if bytes {
		for b := 0; b < 256; b++ {
			tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
			scores = append(scores, 0)
			types = append(types, int32(Byte))
		}
	}
	for i := 0; i < len(pieces); i += 2 {
		tokens = append(tokens, pieces[i].(string))
		scores = append(scores, float32(pieces[i+1].(float64)))
		types = append(types, int32(Normal))
	}
	return
}

// ggufTokenizer writes kv as a GGUF file, reads it back and builds its
// tokenizer: the tokenizer metadata's round trip is part of every test.
func ggufTokenizer(t testing.TB, kv []gguf.KV) *Tokenizer {
	t.Helper()
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, nil); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Decode("tok.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func spm(t testing.TB, bytes bool, extra []gguf.KV, pieces ...any) *Tokenizer {
	tokens, scores, types := spmVocab(bytes, pieces...)
	kv := []gguf.KV{
		{Key: KeyModel, Value: "llama"}, {Key: KeyTokens, Value: tokens}, {Key: KeyScores, Value: scores}, {Key: KeyTokenType, Value: types},
		{Key: KeyBOS, Value: uint32(1)}, {Key: KeyEOS, Value: uint32(2)}, {Key: KeyUNK, Value: uint32(0)},
	}
	return ggufTokenizer(t, append(kv, extra...))
}

var helloPieces = []any{"▁", -10.0, "h", -10.0, "e", -10.0, "l", -10.0, "o", -10.0, "w", -10.0, "r", -10.0, "d", -10.0,
	"ll", -1.0, "he", -2.0, "▁he", -3.0, "llo", -4.0, "▁hello", -5.0, "or", -6.0, "wor", -7.0, "ld", -8.0, "a", -10.0, "aa", -1.0}

func pieces(t *Tokenizer, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.Token(id)
	}
	return out
}

func TestSentencePiece(t *testing.T) {
	tk := spm(t, true, nil, helloPieces...)
	if tk.Kind() != SentencePiece || !tk.AddsBOS() || tk.BOS() != 1 || tk.EOS() != 2 || tk.UNK() != 0 {
		t.Fatalf("tokenizer %v bos %d eos %d unk %d", tk.Kind(), tk.BOS(), tk.EOS(), tk.UNK())
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		// Merges by score, best first: ll, he, ▁he, llo, ▁hello, or, wor, ld.
		{"hello world", []string{"<s>", "▁hello", "▁", "wor", "ld"}},
		// Equal scores: the left-most pair first.
		{"aaa", []string{"<s>", "▁", "aa", "a"}},
		// Characters outside the vocabulary fall back to their bytes.
		{"hé", []string{"<s>", "▁", "h", "<0xC3>", "<0xA9>"}},
		// Invalid UTF-8 bytes, each its own byte token.
		{"h\xff\xfe", []string{"<s>", "▁", "h", "<0xFF>", "<0xFE>"}},
		{"", []string{"<s>"}},
		// A leading space: the prefix space and the text's own.
		{" he", []string{"<s>", "▁", "▁he"}},
	} {
		ids, err := tk.Encode(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := pieces(tk, ids); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Encode(%q) = %q, want %q", c.text, got, c.want)
		}
		if back, err := tk.Decode(ids); err != nil || back != c.text {
			t.Errorf("Decode(Encode(%q)) = %q, %v", c.text, back, err)
		}
	}
	// No byte tokens: unknown characters become <unk>, shown as " ⁇ ".
	nb := spm(t, false, []gguf.KV{{Key: KeyAddBOS, Value: false}}, helloPieces...)
	ids, err := nb.Encode("hé!")
	if err != nil {
		t.Fatal(err)
	}
	if got := pieces(nb, ids); !reflect.DeepEqual(got, []string{"▁", "h", "<unk>", "<unk>"}) {
		t.Errorf("no byte fallback: %q", got)
	}
	if s, _ := nb.Decode(ids); s != "h \u2047  \u2047 " {
		t.Errorf("unknown decodes to %q", s)
	}
	// Without the space prefix.
	np := spm(t, true, []gguf.KV{{Key: KeyAddSpacePrefix, Value: false}}, helloPieces...)
	ids, _ = np.Encode("hello")
	if got := pieces(np, ids); !reflect.DeepEqual(got, []string{"<s>", "he", "llo"}) {
		t.Errorf("no space prefix: %q", got)
	}
	if _, err := tk.Decode([]int{1, 9999}); err == nil {
		t.Error("Decode accepted an id outside the vocabulary")
	}
	if b := tk.TokenBytes(3 + 0x0A); !bytes.Equal(b, []byte{'\n'}) {
		t.Errorf("TokenBytes(<0x0A>) = %q", b)
	}
	if b := string(tk.TokenBytes(1)); b != "<s>" {
		t.Errorf("TokenBytes(<s>) = %q", b)
	}
}

// byteVocab is a byte-level vocabulary: the 256 byte characters (id =
// byte), then the merged tokens, then the specials.
func byteVocab(merges []string, specials ...string) (tokens []string, types []int32) {
	for b := 0; b < 256; b++ {
		tokens = append(tokens, byteChars[b])
		types = append(types, int32(Normal))
	}
	for _, m := range merges {
		a, b, _ := splitMerge(m)
		tokens = append(tokens, a+b)
		types = append(types, int32(Normal))
	}
	for _, s := range specials {
		tokens = append(tokens, s)
		types = append(types, int32(Control))
	}
	return
}

var byteMerges = []string{"h e", "Ġ t", "Ġt he", "l l", "ll o", "Ġ w", "o r", "Ġw or", "1 2", "Ċ Ċ"}

func bpe(t testing.TB, pre string, addBOS bool) *Tokenizer {
	tokens, types := byteVocab(byteMerges, "<|begin_of_text|>", "<|end_of_text|>")
	kv := []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}, {Key: KeyTokenType, Value: types}, {Key: KeyMerges, Value: byteMerges},
		{Key: KeyBOS, Value: uint32(len(tokens) - 2)}, {Key: KeyEOS, Value: uint32(len(tokens) - 1)}, {Key: KeyAddBOS, Value: addBOS}}
	if pre != "" {
		kv = append(kv, gguf.KV{Key: KeyPre, Value: pre})
	}
	return ggufTokenizer(t, kv)
}

func TestByteLevel(t *testing.T) {
	tk := bpe(t, "llama-bpe", true)
	if tk.Kind() != ByteLevel || tk.Pre() != PreLlama3 {
		t.Fatalf("kind %v pre %v", tk.Kind(), tk.Pre())
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"the world", []string{"<|begin_of_text|>", "t", "he", "Ġwor", "l", "d"}},
		{" the hello\n\n", []string{"<|begin_of_text|>", "Ġthe", "Ġ", "he", "llo", "ĊĊ"}},
		{"1234", []string{"<|begin_of_text|>", "12", "3", "4"}},
		{"é\xff", []string{"<|begin_of_text|>", "Ã", "©", "ÿ"}},
		{"", []string{"<|begin_of_text|>"}},
	} {
		ids, err := tk.Encode(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := pieces(tk, ids); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Encode(%q) = %q, want %q", c.text, got, c.want)
		}
		if back, _ := tk.Decode(ids); back != c.text {
			t.Errorf("Decode(Encode(%q)) = %q", c.text, back)
		}
	}
	// Qwen2 splits digits one by one: "12" never forms.
	q := bpe(t, "qwen2", false)
	ids, _ := q.Encode("1234")
	if got := pieces(q, ids); !reflect.DeepEqual(got, []string{"1", "2", "3", "4"}) {
		t.Errorf("qwen2 digits: %q", got)
	}
	// GPT-2 keeps a digit run in one word: "12" merges.
	g := bpe(t, "", false)
	ids, _ = g.Encode("a 1234")
	if got := pieces(g, ids); !reflect.DeepEqual(got, []string{"a", "Ġ", "12", "3", "4"}) {
		t.Errorf("gpt2: %q", got)
	}
	if b := string(tk.TokenBytes(len(byteChars) + 2)); b != " the" {
		t.Errorf("TokenBytes(Ġthe) = %q", b)
	}
}

func TestPreTokenizers(t *testing.T) {
	for _, c := range []struct {
		pre  Pre
		text string
		want []string
	}{
		{PreGPT2, "the is\n\n  x", []string{"the", " is", "\n\n ", " x"}},
		{PreGPT2, "abc 12345 x", []string{"abc", " 12345", " x"}},
		{PreGPT2, "I'm DON'T", []string{"I", "'m", " DON", "'", "T"}},
		{PreGPT2, "hi!!  ?", []string{"hi", "!!", " ", " ?"}},
		{PreGPT2, "end  ", []string{"end", "  "}},
		{PreLlama3, "abc 12345 x", []string{"abc", " ", "123", "45", " x"}},
		{PreLlama3, "I'm DON'T", []string{"I", "'m", " DON", "'T"}},
		{PreLlama3, "a\n\n b", []string{"a", "\n\n", " b"}},
		{PreLlama3, "x.\n\ny", []string{"x", ".\n\n", "y"}},
		{PreLlama3, "(hi) \t\nz", []string{"(hi", ")", " \t\n", "z"}},
		{PreLlama3, "  hey", []string{" ", " hey"}},
		{PreLlama3, "über 北京", []string{"über", " 北京"}},
		{PreQwen2, "abc 12345 x", []string{"abc", " ", "1", "2", "3", "4", "5", " x"}},
		{PreSmolLM, "abc 12 x", []string{"abc", " ", "1", "2", " x"}},
		{PreLlama3, "a\xffb", []string{"a", "\xffb"}},
	} {
		got := c.pre.Split(c.text)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v.Split(%q) = %q, want %q", c.pre, c.text, got, c.want)
		}
		if strings.Join(got, "") != c.text {
			t.Errorf("%v.Split(%q) loses text", c.pre, c.text)
		}
	}
}

func TestByteChars(t *testing.T) {
	// GPT-2's table: space is Ġ (U+0120), newline Ċ (U+010A), 'A' itself.
	if byteChars[' '] != "Ġ" || byteChars['\n'] != "Ċ" || byteChars['A'] != "A" || byteChars[0xad] != "Ń" || len(runeBytes) != 256 {
		t.Errorf("byte chars: %q %q %q %q", byteChars[' '], byteChars['\n'], byteChars['A'], byteChars[0xad])
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if !bytes.Equal(byteDecode(byteEncode(string(all))), all) {
		t.Error("byte encoding does not round-trip")
	}
}

func TestGGUFErrors(t *testing.T) {
	tokens, scores, types := spmVocab(false, "a", -1.0)
	base := []gguf.KV{{Key: KeyModel, Value: "llama"}, {Key: KeyTokens, Value: tokens}, {Key: KeyScores, Value: scores}, {Key: KeyTokenType, Value: types}}
	for _, c := range []struct {
		name string
		kv   []gguf.KV
		want string
	}{
		{"model", []gguf.KV{{Key: KeyModel, Value: "bert"}}, `"bert" is not supported`},
		{"no model", []gguf.KV{{Key: KeyTokens, Value: tokens}}, "tokenizer.ggml.model is missing"},
		{"no tokens", []gguf.KV{{Key: KeyModel, Value: "llama"}}, "tokens is missing"},
		{"scores", append(base[:2:2], gguf.KV{Key: KeyScores, Value: scores[:2]}), "FLOAT32 array of 4"},
		{"types", append(base[:3:3], gguf.KV{Key: KeyTokenType, Value: []uint32{1, 1, 1, 1}}), "INT32 array"},
		{"bad type", append(base[:3:3], gguf.KV{Key: KeyTokenType, Value: []int32{1, 1, 9, 1}}), "type 9"},
		{"bos", append(base, gguf.KV{Key: KeyBOS, Value: uint32(4)}), "outside the vocabulary"},
		{"nan", []gguf.KV{{Key: KeyModel, Value: "llama"}, {Key: KeyTokens, Value: tokens}, {Key: KeyScores, Value: []float32{0, 0, 0, float32(nan())}}}, "score NaN"},
		{"add bos without", append(base[:4:4], gguf.KV{Key: KeyAddBOS, Value: true}), "adds a BOS token but has none"},
		{"pre", []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}, {Key: KeyPre, Value: "deepseek-llm"}, {Key: KeyMerges, Value: []string{}}}, `"deepseek-llm" is not supported`},
		{"merges", []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}, {Key: KeyMerges, Value: []string{"ab"}}}, `merge 0 "ab"`},
		{"no merges", []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}}, "merges is missing"},
	} {
		var buf bytes.Buffer
		if err := gguf.Write(&buf, c.kv, nil); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Decode("x", buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := FromGGUF(f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func nan() float64 { var z float64; return z / z }

// hfByteLevel is a Llama 3 style tokenizer.json over the byte vocabulary.
func hfByteLevel(pattern string) []byte {
	tokens, _ := byteVocab(byteMerges)
	vocab := map[string]int{}
	for i, s := range tokens {
		vocab[s] = i
	}
	n := len(tokens)
	merges := make([][]string, len(byteMerges))
	for i, m := range byteMerges {
		a, b, _ := splitMerge(m)
		merges[i] = []string{a, b}
	}
	doc := map[string]any{
		"added_tokens": []any{
			map[string]any{"id": n, "content": "<|begin_of_text|>", "special": true},
			map[string]any{"id": n + 1, "content": "<|end_of_text|>", "special": true},
		},
		"normalizer": nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"post_processor": map[string]any{"type": "Sequence", "processors": []any{
			map[string]any{"type": "ByteLevel"},
			map[string]any{"type": "TemplateProcessing", "single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "<|begin_of_text|>", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
				"special_tokens": map[string]any{"<|begin_of_text|>": map[string]any{"id": "<|begin_of_text|>", "ids": []int{n}, "tokens": []string{"<|begin_of_text|>"}}}},
		}},
		"decoder": map[string]any{"type": "ByteLevel"},
		"model":   map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "ignore_merges": true, "byte_fallback": false, "unk_token": nil},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// TestHFByteLevel: the same vocabulary and merges as GGUF gpt2 with
// llama-bpe give the same ids; ignore_merges takes whole-word tokens.
func TestHFByteLevel(t *testing.T) {
	h, err := FromHF(hfByteLevel(PatternLlama3), []byte(`{"eos_token": {"content": "<|end_of_text|>"}, "bos_token": "<|begin_of_text|>"}`))
	if err != nil {
		t.Fatal(err)
	}
	g := bpe(t, "llama-bpe", true)
	if h.Kind() != ByteLevel || h.Pre() != PreLlama3 || !h.AddsBOS() || h.BOS() != g.BOS() || h.EOS() != g.EOS() || h.Vocab() != g.Vocab() {
		t.Fatalf("hf: kind %v pre %v bos %d/%d eos %d/%d vocab %d/%d", h.Kind(), h.Pre(), h.BOS(), g.BOS(), h.EOS(), g.EOS(), h.Vocab(), g.Vocab())
	}
	for _, text := range []string{"the world", " the hello\n\n", "1234 I'm", "é\xff ok", "  two  spaces  "} {
		a, _ := h.Encode(text)
		b, _ := g.Encode(text)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q: tokenizer.json %v, GGUF %v", text, a, b)
		}
		if s, _ := h.Decode(a); s != text {
			t.Errorf("Decode(Encode(%q)) = %q", text, s)
		}
	}
	q, err := FromHF(hfByteLevel(PatternQwen2), nil)
	if err != nil || q.Pre() != PreQwen2 {
		t.Fatalf("qwen2 pattern: %v %v", q, err)
	}
	if _, err := FromHF(hfByteLevel(`\s+|\w+`), nil); err == nil || !strings.Contains(err.Error(), "Split pattern") {
		t.Errorf("unknown pattern: %v", err)
	}

	// Qwen2 and Qwen3 put an NFC normalizer before the byte-level steps:
	// a decomposed é encodes as the composed one.
	nfcDoc := strings.Replace(string(hfByteLevel(PatternQwen2)), `"normalizer": null`, `"normalizer": {"type": "NFC"}`, 1)
	n, err := FromHF([]byte(nfcDoc), nil)
	if err != nil {
		t.Fatalf("NFC normalizer: %v", err)
	}
	composed, _ := n.Encode("caf\u00e9 e\u0301")
	decomposed, _ := n.Encode("cafe\u0301 \u00e9")
	if plain, _ := q.Encode("cafe\u0301 \u00e9"); !reflect.DeepEqual(composed, decomposed) || reflect.DeepEqual(plain, decomposed) {
		t.Errorf("NFC: composed %v, decomposed %v, without the normalizer %v", composed, decomposed, plain)
	}
	nfkc := strings.Replace(nfcDoc, `"NFC"`, `"NFKC"`, 1)
	if _, err := FromHF([]byte(nfkc), nil); err == nil || !strings.Contains(err.Error(), "NFKC normalizer is not supported") {
		t.Errorf("byte-level with NFKC: %v", err)
	}
}

// hfSentencePiece is a Llama 2 style tokenizer.json: Prepend/Replace
// normalizers, byte fallback, merges that build the pieces.
func hfSentencePiece(merges []string) []byte {
	tokens, _, _ := spmVocab(true, helloPieces...)
	vocab := map[string]int{}
	for i, s := range tokens {
		vocab[s] = i
	}
	doc := map[string]any{
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "<unk>", "special": true},
			map[string]any{"id": 1, "content": "<s>", "special": true},
			map[string]any{"id": 2, "content": "</s>", "special": true},
		},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": nil,
		"post_processor": map[string]any{"type": "TemplateProcessing", "single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}},
			map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{1}, "tokens": []string{"<s>"}}}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "byte_fallback": true, "unk_token": "<unk>", "fuse_unk": true},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// TestHFSentencePiece: merges ranked in the order of the pieces' scores
// give the same ids as the GGUF scores.
func TestHFSentencePiece(t *testing.T) {
	merges := []string{"l l", "h e", "▁ he", "ll o", "▁he llo", "o r", "w or", "l d", "a a"}
	h, err := FromHF(hfSentencePiece(merges), []byte(`{"eos_token": "</s>", "add_bos_token": true}`))
	if err != nil {
		t.Fatal(err)
	}
	g := spm(t, true, nil, helloPieces...)
	if h.Kind() != SentencePiece || h.BOS() != 1 || h.EOS() != 2 || h.UNK() != 0 || !h.AddsBOS() {
		t.Fatalf("hf spm: kind %v bos %d eos %d unk %d", h.Kind(), h.BOS(), h.EOS(), h.UNK())
	}
	for _, text := range []string{"hello world", "aaa", "hé", "h\xff\xfe", " he", "<s>x"} {
		a, _ := h.Encode(text)
		b, _ := g.Encode(text)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q: tokenizer.json %q, GGUF %q", text, pieces(h, a), pieces(g, b))
		}
		want := strings.TrimPrefix(text, "<s>") // a control token decodes to nothing
		if s, _ := h.Decode(a); s != want {
			t.Errorf("Decode(Encode(%q)) = %q, want %q", text, s, want)
		}
	}
}

func TestHFErrors(t *testing.T) {
	good := string(hfSentencePiece([]string{"l l"}))
	for _, c := range []struct {
		name, doc, want string
	}{
		{"json", `{`, "tokenizer.json"},
		{"model", `{"model": {"type": "WordPiece"}}`, `"WordPiece" is not supported`},
		{"unigram", `{"model": {"type": "Unigram"}}`, `"Unigram" is not supported`},
		{"nothing", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`, "neither ByteLevel"},
		{"normalizer", strings.Replace(good, `"Prepend"`, `"NFKC"`, 1), "normalizer NFKC"},
		{"hole", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 2}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}`, "no token has id 1"},
		{"clash", `{"added_tokens": [{"id": 0, "content": "x"}], "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}`, "both"},
		{"unk", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "<unk>"}, "pre_tokenizer": {"type": "ByteLevel"}}`, "unk_token"},
		{"merge", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [3]}, "pre_tokenizer": {"type": "ByteLevel"}}`, "merge 0"},
		{"suffix", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "end_of_word_suffix": "</w>"}}`, "end_of_word_suffix"},
		{"pre", `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"}}`, "pre-tokenizer Whitespace"},
		{"merge of unknowns", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a x"]}, "pre_tokenizer": {"type": "ByteLevel"}}`, `merge 0 ("a", "x"): "x" is not in the vocabulary`},
		{"merge result unknown", `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}, "pre_tokenizer": {"type": "ByteLevel"}}`, `"ab" is not in the vocabulary`},
		{"empty vocabulary", `{"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}`, "0 tokens"},
		{"huge added id", `{"added_tokens": [{"id": 2000000000, "content": "x"}], "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}`, "token ids up to 2000000000"},
		{"huge added token", `{"added_tokens": [{"id": 1, "content": "` + strings.Repeat("x", MaxTokenLength+1) + `"}], "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}}`, "bytes long"},
	} {
		if _, err := FromHF([]byte(c.doc), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := FromHF([]byte(good), []byte(`{"eos_token": "<|eot|>"}`)); err == nil || !strings.Contains(err.Error(), "eos_token") {
		t.Errorf("eos not in vocab: %v", err)
	}
}

// FuzzEncodeDecode: every string encodes, and one that writes no special
// token decodes back exactly, with both kinds.
func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"hello world", "aaa", "h\xff", "1234 I'm\n\n x", "  ", "a<s>b", "<|end_of_text|>x"} {
		f.Add(s)
	}
	s, b := spm(f, true, nil, helloPieces...), bpe(f, "llama-bpe", true)
	f.Fuzz(func(t *testing.T, text string) {
		for _, tk := range []*Tokenizer{s, b} {
			ids, err := tk.Encode(text)
			if err != nil {
				t.Fatalf("%v: Encode(%q): %v", tk.Kind(), text, err)
			}
			special := false
			for _, f := range tk.partition(text) {
				special = special || f.id >= 0
			}
			if special {
				continue // special tokens written in the text: TestSpecialTokens
			}
			if back, err := tk.Decode(ids); err != nil || back != text {
				t.Fatalf("%v: Decode(Encode(%q)) = %q, %v", tk.Kind(), text, back, err)
			}
		}
	})
}

// FuzzFromHF: no tokenizer.json panics; what builds encodes.
func FuzzFromHF(f *testing.F) {
	f.Add(hfByteLevel(PatternLlama3))
	f.Add(hfSentencePiece([]string{"l l", "h e"}))
	f.Fuzz(func(t *testing.T, doc []byte) {
		tk, err := FromHF(doc, nil)
		if err != nil {
			return
		}
		if _, err := tk.Encode("hello 12 world\n"); err != nil && tk.UNK() >= 0 {
			t.Fatalf("Encode with an unknown token failed: %v", err)
		}
	})
}

// TestGGUFExport: a tokenizer written as GGUF metadata reads back the
// same, and a tokenizer.json byte-level tokenizer exports too.
func TestGGUFExport(t *testing.T) {
	h, err := FromHF(hfByteLevel(PatternLlama3), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []*Tokenizer{spm(t, true, nil, helloPieces...), bpe(t, "qwen2", false), bpe(t, "llama-bpe", true), h} {
		kv, err := tk.GGUF()
		if err != nil {
			t.Fatal(err)
		}
		back := ggufTokenizer(t, kv)
		if !reflect.DeepEqual(back, tk) {
			t.Errorf("%v %v: GGUF export does not read back the same", tk.Kind(), tk.Pre())
		}
	}
	hs, err := FromHF(hfSentencePiece([]string{"l l"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.GGUF(); err == nil {
		t.Error("a rank-merged SentencePiece tokenizer exported scores")
	}
}

// TestGGUFDefaults: llama-bpe files add BOS unless they say otherwise and
// take whole words in the vocabulary as one token; qwen2 files do not.
func TestGGUFDefaults(t *testing.T) {
	tokens, types := byteVocab(append(byteMerges, "w or"), "<|begin_of_text|>")
	// "Ġworld" is in the vocabulary, but no merge makes it.
	tokens = append(tokens, "Ġworld")
	types = append(types, int32(Normal))
	kv := func(pre string) []gguf.KV {
		return []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}, {Key: KeyTokenType, Value: types},
			{Key: KeyMerges, Value: byteMerges}, {Key: KeyBOS, Value: uint32(len(tokens) - 2)}, {Key: KeyPre, Value: pre}}
	}
	l3 := ggufTokenizer(t, kv("llama-bpe"))
	ids, _ := l3.Encode(" world")
	if got := pieces(l3, ids); !reflect.DeepEqual(got, []string{"<|begin_of_text|>", "Ġworld"}) {
		t.Errorf("llama-bpe: %q", got)
	}
	q := ggufTokenizer(t, kv("qwen2"))
	ids, _ = q.Encode(" world")
	if got := pieces(q, ids); !reflect.DeepEqual(got, []string{"Ġwor", "l", "d"}) {
		t.Errorf("qwen2: %q", got)
	}
	no := ggufTokenizer(t, append(kv("llama-bpe"), gguf.KV{Key: KeyAddBOS, Value: false}))
	if no.AddsBOS() {
		t.Error("add_bos_token false ignored")
	}
}

// TestSpecialTokens: control, user-defined and unknown tokens written in the text
// are those tokens, the longest first; the text between them is encoded
// piece by piece (SentencePiece: each with its space prefix, as
// llama.cpp). Hand-built vocabularies: SentencePiece with <s> and </s>,
// and a byte-level one with ChatML's control tokens and a user-defined
// "<|im" that is a prefix of them.
func TestSpecialTokens(t *testing.T) {
	sp := spm(t, true, nil, helloPieces...)
	tokens, types := byteVocab(byteMerges, "<|im_start|>", "<|im_end|>", "<|im")
	types[len(types)-1] = int32(UserDefined)
	bl := ggufTokenizer(t, []gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyTokens, Value: tokens}, {Key: KeyTokenType, Value: types},
		{Key: KeyMerges, Value: byteMerges}, {Key: KeyPre, Value: "qwen2"}, {Key: KeyEOS, Value: uint32(len(tokens) - 2)}})
	for _, c := range []struct {
		name, text string
		tk         *Tokenizer
		want       []string
		back       string // Decode of the ids
	}{
		{"bos alone", "<s>", sp, []string{"<s>", "<s>"}, ""},
		{"eos after text", "hello</s>", sp, []string{"<s>", "▁hello", "</s>"}, "hello"},
		{"space prefix after a special", "</s>he", sp, []string{"<s>", "</s>", "▁he"}, "he"},
		{"inside text", "<<s>>", sp, []string{"<s>", "▁", "<0x3C>", "<s>", "▁", "<0x3E>"}, "< >"},
		{"unknown, written whole", "a<unk>", sp, []string{"<s>", "▁", "a", "<unk>"}, "a ⁇ "},
		{"chatml", "<|im_start|>user\nhello<|im_end|>", bl, []string{"<|im_start|>", "u", "s", "e", "r", "Ċ", "he", "llo", "<|im_end|>"}, "user\nhello"},
		{"longest first", "<|im<|im_end|>", bl, []string{"<|im", "<|im_end|>"}, "<|im"},
		{"user-defined", "a<|im b", bl, []string{"a", "<|im", "Ġ", "b"}, "a<|im b"},
		{"partial", "<|im_sta", bl, []string{"<|im", "_", "s", "t", "a"}, "<|im_sta"},
	} {
		ids, err := c.tk.Encode(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := pieces(c.tk, ids); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Encode(%q) = %q, want %q", c.name, c.text, got, c.want)
		}
		if back, err := c.tk.Decode(ids); err != nil || back != c.back {
			t.Errorf("%s: Decode = %q, %v; want %q", c.name, back, err, c.back)
		}
	}
}

// TestDecodeTokenAfterBOS: a SentencePiece token right after BOS loses the
// space its prefix added, as Decode drops it; elsewhere, and for byte-level
// tokenizers, the token keeps its space.
func TestDecodeTokenAfterBOS(t *testing.T) {
	tk := spm(t, true, nil, helloPieces...)
	ids, err := tk.Encode("hello world")
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != tk.BOS() {
		t.Fatalf("ids %v do not start with BOS", ids)
	}
	var parts []string
	for i := 1; i < len(ids); i++ {
		parts = append(parts, tk.DecodeToken(ids[i-1], ids[i]))
	}
	whole, err := tk.Decode(ids)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(parts, ""); got != whole || whole != "hello world" {
		t.Errorf("tokens after BOS read %q, Decode %q", got, whole)
	}
	if got := tk.DecodeToken(0, ids[1]); got != " hello" {
		t.Errorf("▁hello after another token reads %q", got)
	}
	noPrefix := spm(t, true, []gguf.KV{{Key: KeyAddSpacePrefix, Value: false}}, helloPieces...)
	if got := noPrefix.DecodeToken(noPrefix.BOS(), ids[1]); got != " hello" {
		t.Errorf("without a space prefix, ▁hello after BOS reads %q", got)
	}
	bl := bpe(t, "llama-bpe", true)
	id, _ := bl.ID("Ġthe")
	if got := bl.DecodeToken(bl.BOS(), id); got != " the" {
		t.Errorf("a byte-level token after BOS reads %q", got)
	}
}
