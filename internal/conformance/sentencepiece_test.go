//go:build linux && cgo

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model/tokenizer"
)

// spmModel is a tokenizer.model for the SentencePiece comparison: one
// committed (trained by sentencepiece with Llama 2's options, byte
// fallback) or one trained here with other options.
type spmModel struct {
	name string
	// path of a committed model, or the trainer's options (input and
	// model_prefix are added).
	path  string
	train map[string]any
	chat  []string
}

var spmModels = []spmModel{
	{name: "llama-bpe", path: filepath.Join("..", "..", "core", "model", "tokenizer", "testdata", "llama-bpe.model"),
		chat: []string{"<s>[INST] Hi there [/INST] Hello!</s>", "<|im_start|>user\nhello<|im_start|> x", "a<|im_start|>b"}},
	// No byte fallback (characters outside the vocabulary are <unk>), no
	// dummy prefix, a control symbol, ids in another order.
	{name: "trained-unk", train: map[string]any{
		"model_type": "bpe", "vocab_size": 300, "hard_vocab_limit": false, "byte_fallback": false,
		"character_coverage": 0.98, "add_dummy_prefix": false, "normalization_rule_name": "identity",
		"remove_extra_whitespaces": false, "control_symbols": []string{"<ctl>"},
		"unk_id": 2, "bos_id": 0, "eos_id": 1, "num_threads": 1, "minloglevel": 2},
		chat: []string{"<s>x<ctl>y</s>", "<ctl> <unk>"}},
}

// TestConformanceSentencePiece reads each tokenizer.model with haeols's
// FromSentencePiece and encodes the text set as Debian's sentencepiece
// library does (SentencePieceProcessor.encode): the ids must be the same
// for every text that writes no control, user-defined or unknown piece.
// sentencepiece reads those as plain text where haeols (as llama.cpp)
// takes them whole, so every text, those included, is also compared with
// llama.cpp on a GGUF file of the same vocabulary.
func TestConformanceSentencePiece(t *testing.T) {
	dir, _ := references(t)
	py, err := SentencePiece()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI=%s: the references are required)", err, os.Getenv("CI"))
		}
		t.Skip(err)
	}
	for _, m := range spmModels {
		t.Run(m.name, func(t *testing.T) {
			defer func() { record("tokenizer.model "+m.name, true, !t.Failed()) }()
			path := m.path
			if m.train != nil {
				tmp := t.TempDir()
				corpus := filepath.Join(tmp, "corpus.txt")
				text := strings.Repeat(strings.Join(texts, "\n")+"\nthe fox and the dog say hello to the world\n", 3)
				if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				opts := map[string]any{"input": corpus, "model_prefix": filepath.Join(tmp, m.name)}
				for k, v := range m.train {
					opts[k] = v
				}
				var out struct{}
				if err := Python(py, dir, "../spm_reference.py", map[string]any{"train": opts}, &out); err != nil {
					t.Fatal(err)
				}
				path = filepath.Join(tmp, m.name+".model")
			} else if path, err = filepath.Abs(path); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromSentencePiece(b, nil)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var plain []string
			for _, text := range texts {
				if !writesSpecial(tok, text) {
					plain = append(plain, text)
				}
			}
			var ref struct {
				IDs     [][]int
				Version string
			}
			if err := Python(py, dir, "../spm_reference.py", map[string]any{"model": path, "texts": plain}, &ref); err != nil {
				t.Fatal(err)
			}
			if len(ref.IDs) != len(plain) {
				t.Fatalf("sentencepiece encoded %d texts of %d", len(ref.IDs), len(plain))
			}
			same, tokens := 0, 0
			for i, text := range plain {
				got, err := tok.EncodeText(text)
				if err != nil {
					t.Errorf("%s: %q: %v", m.name, text, err)
					continue
				}
				tokens += len(ref.IDs[i])
				if slices.Equal(got, ref.IDs[i]) {
					same++
					continue
				}
				t.Errorf("%s: %q:\n haeols        %v\n sentencepiece %v\n haeols pieces        %s\n sentencepiece pieces %s", m.name, text, got, ref.IDs[i], pieces(tok, got), pieces(tok, ref.IDs[i]))
			}
			fmt.Printf("conformance tokenizer.model %s (sentencepiece %s, vocabulary %d) texts=%d tokens=%d same=%d/%d\n", m.name, ref.Version, tok.Vocab(), len(plain), tokens, same, len(plain))
			if _, ok := tok.ID("<0x41>"); !ok {
				// llama.cpp 3.21.1's build aborts (std::out_of_range in
				// byte_to_token) on a character outside a SentencePiece
				// vocabulary that has no byte pieces.
				fmt.Printf("conformance gguf-tokenizer tokenizer.model-%s: not compared: llama.cpp aborts on characters outside a vocabulary without byte pieces\n", m.name)
				return
			}
			checkGGUFTokenizer(t, dir, ggufTokenizer{"tokenizer.model-" + m.name, tok, m.chat}, append(slices.Clone(texts), m.chat...))
		})
	}
}

// writesSpecial reports whether text holds a control, user-defined or
// unknown piece of tok.
func writesSpecial(tok *tokenizer.Tokenizer, text string) bool {
	for id := range tok.Vocab() {
		switch tok.Type(id) {
		case tokenizer.Control, tokenizer.UserDefined, tokenizer.Unknown:
			if s := tok.Token(id); s != "" && strings.Contains(text, s) {
				return true
			}
		}
	}
	return false
}
