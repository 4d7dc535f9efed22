package tokenizer

import (
	"encoding/binary"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// llamaBPEModel is testdata/llama-bpe.model, trained by Debian's
// sentencepiece 0.1.97 (testdata/train.py) with Llama 2's options.
func llamaBPEModel(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/llama-bpe.model")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFromSentencePiece: testdata/llama-bpe.model encodes as sentencepiece
// 0.1.97's SentencePieceProcessor.encode did (ids recorded from it; the
// conformance suite compares with it live), BOS first, and reads back the
// same from its GGUF metadata.
func TestFromSentencePiece(t *testing.T) {
	tk, err := FromSentencePiece(llamaBPEModel(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Kind() != SentencePiece || tk.Vocab() != 420 || tk.UNK() != 0 || tk.BOS() != 1 || tk.EOS() != 2 || !tk.AddsBOS() {
		t.Fatalf("kind %v vocab %d unk %d bos %d eos %d adds BOS %v", tk.Kind(), tk.Vocab(), tk.UNK(), tk.BOS(), tk.EOS(), tk.AddsBOS())
	}
	kv, err := tk.GGUF()
	if err != nil {
		t.Fatal(err)
	}
	g := ggufTokenizer(t, kv)
	for _, c := range []struct {
		text string
		want []int  // sentencepiece's encode, without BOS
		back string // Decode of want, when not text
	}{
		{"hello world", []int{286, 277}, ""},
		{" two  spaces\n", []int{337, 261, 264, 337, 267, 376, 295, 304, 14}, ""},
		{"Köln 2026 🦙", []int{337, 293, 278, 337, 358, 346, 358, 371, 337, 244, 163, 170, 157}, ""},
		{"<|im_start|>user", []int{3, 337, 320, 338, 342}, "<|im_start|> user"}, // sentencepiece: [337 3 320 338 342]; llama.cpp prefixes the text after it
	} {
		ids, err := tk.EncodeText(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids, c.want) {
			t.Errorf("%q: %v (%q), want %v", c.text, ids, pieces(tk, ids), c.want)
		}
		if c.back == "" {
			c.back = c.text
		}
		if back, err := tk.Decode(ids); err != nil || back != c.back {
			t.Errorf("%q decodes to %q, %v; want %q", c.text, back, err, c.back)
		}
		if gi, _ := g.EncodeText(c.text); !reflect.DeepEqual(gi, ids) {
			t.Errorf("%q: from GGUF %v, from tokenizer.model %v", c.text, gi, ids)
		}
	}
	if ids, _ := tk.Encode("hi"); ids[0] != 1 {
		t.Errorf("no BOS: %v", ids)
	}
	noBOS, err := FromSentencePiece(llamaBPEModel(t), []byte(`{"add_bos_token": false, "eos_token": "<|im_start|>"}`))
	if err != nil || noBOS.AddsBOS() || noBOS.EOS() != 3 {
		t.Errorf("tokenizer_config.json: %v adds BOS %v eos %d", err, noBOS != nil && noBOS.AddsBOS(), noBOS.EOS())
	}
}

// protoMessage encodes fields (number, value: string, []byte, float32,
// uint64 or a nested []any message) as a protocol buffer.
func protoMessage(fields ...any) []byte {
	var b []byte
	for i := 0; i+1 < len(fields); i += 2 {
		f := uint64(fields[i].(int))
		switch v := fields[i+1].(type) {
		case string:
			b = binary.AppendUvarint(b, f<<3|protoBytes)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case []byte:
			b = binary.AppendUvarint(b, f<<3|protoBytes)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case float32:
			b = binary.AppendUvarint(b, f<<3|protoFixed32)
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		case int:
			b = binary.AppendUvarint(b, f<<3|protoVarint)
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	return b
}

// tinyModel is a valid BPE model of <unk>, <s>, </s>, ▁, a, ▁a with the
// given trainer and normalizer fields appended.
func tinyModel(trainer, normalizer []any) []byte {
	piece := func(s string, score float32, typ int) []byte { return protoMessage(1, s, 2, score, 3, typ) }
	tr := protoMessage(append([]any{3, spmBPE}, trainer...)...)
	nm := protoMessage(append([]any{1, "identity", 4, 0}, normalizer...)...)
	return protoMessage(1, piece("<unk>", 0, 2), 1, piece("<s>", 0, 3), 1, piece("</s>", 0, 3),
		1, piece("▁", -1, 1), 1, piece("a", -2, 1), 1, piece("▁a", -3, 1), 2, tr, 3, nm)
}

func TestFromSentencePieceErrors(t *testing.T) {
	if tk, err := FromSentencePiece(tinyModel(nil, nil), nil); err != nil {
		t.Fatalf("tiny model: %v", err)
	} else if ids, _ := tk.EncodeText("a a"); !reflect.DeepEqual(ids, []int{5, 5}) {
		t.Fatalf("tiny model encodes %q", pieces(tk, ids))
	} else if ids, _ := tk.EncodeText("a☃☃ a☃"); !reflect.DeepEqual(ids, []int{5, 0, 5, 0}) {
		t.Fatalf("unknown characters: a run is one <unk>, as sentencepiece: %q", pieces(tk, ids))
	}
	good := tinyModel(nil, nil)
	for _, c := range []struct {
		name  string
		model []byte
		want  string
	}{
		{"empty", nil, "no pieces"},
		{"unigram", tinyModel([]any{3, spmUnigram}, nil), "Unigram model"},
		{"nfkc", tinyModel(nil, []any{1, "nmt_nfkc"}), `normalizes by "nmt_nfkc"`},
		{"extra whitespace", tinyModel(nil, []any{4, 1}), "removes extra whitespace"},
		{"unescaped", tinyModel(nil, []any{5, 0}), "unescaped"},
		{"suffix", tinyModel([]any{24, 1}, nil), "suffix"},
		{"bos outside", tinyModel([]any{41, 9}, nil), "bos_id 9 outside its 6 pieces"},
		{"bos not control", tinyModel([]any{41, 4}, nil), `bos_id 4 is piece "a"`},
		{"piece type", protoMessage(1, protoMessage(1, "x", 3, 9)), "type 9"},
		{"truncated", good[:len(good)-3], "runs past the end"},
		{"bad key", []byte{0x80}, "bad field key"},
		{"field zero", []byte{0x00, 0x00}, "field number 0"},
		{"group", []byte{0x0b}, "wire type 3"},
		{"pieces as varint", protoMessage(1, 7), "pieces: wire type 0"},
		{"nan score", protoMessage(1, protoMessage(1, "x", 2, float32(math.NaN())), 2, protoMessage(3, spmBPE, 40, -1, 41, -1, 42, -1), 3, protoMessage(1, "identity", 4, 0)), "score NaN"},
	} {
		_, err := FromSentencePiece(c.model, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := FromSentencePiece(good, []byte(`{"eos_token": "<eot>"}`)); err == nil || !strings.Contains(err.Error(), "eos_token") {
		t.Errorf("eos not in vocabulary: %v", err)
	}
}

// FuzzFromSentencePiece: no tokenizer.model panics or allocates beyond
// its size; whatever loads encodes and decodes.
func FuzzFromSentencePiece(f *testing.F) {
	f.Add(llamaBPEModel(f))
	f.Add(tinyModel(nil, nil))
	f.Add(tinyModel([]any{41, -1 & 0xffffffff}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := FromSentencePiece(data, nil)
		if err != nil {
			return
		}
		ids, err := tk.Encode("a ▁ <s> hé 🦙")
		if err != nil {
			return // no byte tokens and no unknown token
		}
		if _, err := tk.Decode(ids); err != nil {
			t.Fatal(err)
		}
	})
}
