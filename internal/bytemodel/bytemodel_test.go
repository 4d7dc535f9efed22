package bytemodel

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// TestSameIDs: the GGUF and tokenizer.json tokenizers encode texts to the
// ids llama2.c's byte tokenizer gives (the space prefix, spaces, bytes of
// multi-byte characters and of invalid UTF-8), and decode each token after
// the one before as llama2.c does (the space prefix dropped after BOS).
func TestSameIDs(t *testing.T) {
	want, err := llama.DecodeTokenizer("bytes", llama.ByteTokenizerFile(), Vocab)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	h, err := tokenizer.FromHF(TokenizerJSON(), []byte(TokenizerConfigJSON))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "In the beginning", "  two  spaces ", "Æsop’s fables\n", "bad \xff\xfe bytes", "The pass key is 4821."} {
		ids, err := want.EncodeText(text)
		if err != nil {
			t.Fatal(err)
		}
		for name, tk := range map[string]*tokenizer.Tokenizer{"gguf": g, "tokenizer.json": h} {
			got, err := tk.EncodeText(text)
			if err != nil {
				t.Fatalf("%s %q: %v", name, text, err)
			}
			if !slices.Equal(got, ids) {
				t.Errorf("%s %q: ids %v, llama2.c %v", name, text, got, ids)
			}
			if tk.BOS() != llama.BOS || tk.Vocab() != Vocab {
				t.Errorf("%s: BOS %d, %d tokens", name, tk.BOS(), tk.Vocab())
			}
			prev := llama.BOS
			for _, id := range ids {
				if a, b := tk.DecodeToken(prev, id), want.DecodeToken(prev, id); a != b {
					t.Errorf("%s: token %d after %d decodes to %q, llama2.c %q", name, id, prev, a, b)
				}
				prev = id
			}
		}
	}
}

// TestWriters: the GGUF file and the folder read back (model.Decode, as a
// browser has them) as the model with its tokenizer.
func TestWriters(t *testing.T) {
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: Vocab, SeqLen: 64, SharedClassifier: true}, 5)
	if err != nil {
		t.Fatal(err)
	}
	g, err := GGUF(m, model.GGUFOptions{Name: "bytes"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bytes-hf")
	if err := WriteHF(dir, m, "F32", 0); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, fs := range map[string]map[string][]byte{"gguf": {"bytes.gguf": g}, "hf": files} {
		ck, err := model.Decode(fs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ck.Tokenizer == nil || ck.Tokenizer.Vocab() != Vocab || ck.Config.Layers != 2 || ck.Config.Context != 64 {
			t.Errorf("%s: config %+v, tokenizer %v", name, ck.Config, ck.Tokenizer)
		}
	}
	small, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 1, Heads: 4, KVHeads: 2, Vocab: 64, SeqLen: 64}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GGUF(small, model.GGUFOptions{}); err == nil {
		t.Error("a model of 64 tokens written with the byte tokenizer")
	}
}
