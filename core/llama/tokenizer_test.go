package llama

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type entry struct {
	score float32
	piece string
}

// tokenizerBytes encodes a llama2.c tokenizer file.
func tokenizerBytes(maxLen int, es []entry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(int32(maxLen)))
	for _, e := range es {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.score))
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(len(e.piece))))
		b = append(b, e.piece...)
	}
	return b
}

// byteVocab is a sentencepiece-like vocabulary: <unk>, <s>, </s>, the 256
// raw bytes, then the given pieces.
func byteVocab(pieces ...entry) []entry {
	es := []entry{{0, "<unk>"}, {0, "\n<s>\n"}, {0, "\n</s>\n"}}
	for b := 0; b < 256; b++ {
		es = append(es, entry{0, "<0x" + strings.ToUpper(hex2(b)) + ">"})
	}
	return append(es, pieces...)
}

func hex2(b int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

func TestDecodeTokenizer(t *testing.T) {
	good := []entry{{0, "<u>"}, {-1, "<s>"}, {-2.5, " the"}, {3, ""}}
	withNaN := tokenizerBytes(8, good)
	binary.LittleEndian.PutUint32(withNaN[4+8+3:], math.Float32bits(float32(math.NaN())))
	neg := tokenizerBytes(8, good[:1])
	binary.LittleEndian.PutUint32(neg[8:], uint32(0xffffffff))
	for _, tc := range []struct {
		name  string
		data  []byte
		vocab int
		want  string // "" for success
	}{
		{"good, vocab inferred", tokenizerBytes(8, good), 0, ""},
		{"good, vocab given", tokenizerBytes(8, good), 4, ""},
		{"empty", nil, 0, "0 bytes, shorter than the 4-byte header"},
		{"header only", tokenizerBytes(8, nil), 0, "no tokens"},
		{"zero max length", tokenizerBytes(0, good), 0, "max_token_length = 0"},
		{"absurd max length", tokenizerBytes(1<<20, good), 0, "max_token_length = 1048576"},
		{"piece longer than max", tokenizerBytes(3, good), 0, "token 2: length 4 outside [0, max_token_length 3]"},
		{"negative length", neg, 0, "token 0: length -1"},
		{"truncated piece", tokenizerBytes(8, good)[:4+8+3+8+2], 0, "token 1: length 3 runs past the end"},
		{"truncated entry", tokenizerBytes(8, good)[:4+8+3+3], 0, "truncated at token 1"},
		{"NaN score", withNaN, 0, "token 1: non-finite score NaN"},
		{"vocab too small", tokenizerBytes(8, good), 3, "8 bytes left after 3 tokens: wrong vocabulary size?"},
		{"vocab too large", tokenizerBytes(8, good), 6, "cannot hold 6 tokens"},
		{"vocab absurd", tokenizerBytes(8, good), MaxVocab + 1, "vocabulary size 1048577"},
		{"negative vocab", tokenizerBytes(8, good), -2, "vocabulary size -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := DecodeTokenizer("dir/tok.bin", tc.data, tc.vocab)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tok.Vocab() != 4 || tok.Piece(2) != " the" || tok.Score(2) != -2.5 || tok.Piece(3) != "" || tok.MaxTokenLength != 8 {
					t.Errorf("decoded %d tokens, piece 2 %q score %v", tok.Vocab(), tok.Piece(2), tok.Score(2))
				}
				if tok.Piece(-1) != "" || tok.Piece(4) != "" || tok.Score(9) != 0 {
					t.Errorf("out-of-range ids give %q %q %v", tok.Piece(-1), tok.Piece(4), tok.Score(9))
				}
				return
			}
			if err == nil || !errors.Is(err, ErrNotTokenizer) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dir/tok.bin") {
				t.Errorf("error %v, want one wrapping ErrNotTokenizer that names dir/tok.bin and says %q", err, tc.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	vocab := byteVocab(
		entry{-1, " "}, entry{-2, "a"}, entry{-3, "b"}, entry{-4, "c"},
		entry{-5, "ab"}, entry{-6, " ab"}, entry{-20, " a"}, entry{-7, "é"},
	)
	tok, err := DecodeTokenizer("tok.bin", tokenizerBytes(8, vocab), len(vocab))
	if err != nil {
		t.Fatal(err)
	}
	id := func(p string) int {
		for i, e := range vocab {
			if e.piece == p {
				return i
			}
		}
		t.Fatalf("no piece %q", p)
		return -1
	}
	for _, tc := range []struct {
		name     string
		text     string
		bos, eos bool
		want     []int
	}{
		{"empty", "", false, false, nil},
		{"empty with BOS and EOS", "", true, true, []int{1, 2}},
		// "ab" (score -5) merges before " a" (-20), then " "+"ab" -> " ab".
		{"merges by score", "ab", true, false, []int{1, id(" ab")}},
		{"no merge across space", "ab c", false, true, []int{id(" ab"), id(" "), id("c"), 2}},
		{"known multibyte char", "é", false, false, []int{id(" "), id("é")}},
		{"byte fallback", "ü", false, false, []int{id(" "), 0xC3 + 3, 0xBC + 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tok.Encode(tc.text, tc.bos, tc.eos)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
			}
			// Decoding gives the text back (the dummy-prefix space aside).
			var sb strings.Builder
			prev := BOS
			for _, id := range got {
				if id != BOS && id != 2 {
					sb.WriteString(tok.DecodeToken(prev, id))
				}
				prev = id
			}
			if got := strings.TrimPrefix(sb.String(), " "); got != tc.text {
				t.Errorf("decoded %q, want %q", got, tc.text)
			}
		})
	}

	noBytes, err := DecodeTokenizer("small.bin", tokenizerBytes(8, []entry{{0, "<unk>"}, {0, "<s>"}, {0, "</s>"}, {0, " "}, {0, "a"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noBytes.Encode("ax", false, false); err == nil || !strings.Contains(err.Error(), "byte 0x78") || !strings.Contains(err.Error(), "small.bin") {
		t.Errorf("Encode without byte fallback: error %v", err)
	}
	noSpace, err := DecodeTokenizer("nospace.bin", tokenizerBytes(4, []entry{{0, "a"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noSpace.Encode("a", false, false); err == nil || !strings.Contains(err.Error(), "dummy-prefix space") {
		t.Errorf("Encode without a space token: error %v", err)
	}
}

func TestDecodeToken(t *testing.T) {
	tok, err := DecodeTokenizer("tok.bin", tokenizerBytes(8, byteVocab(entry{0, " Once"}, entry{0, "<0x"})), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		prev, id int
		want     string
	}{
		{"space kept", 5, 259, " Once"},
		{"space dropped after BOS", BOS, 259, "Once"},
		{"raw byte", 5, 3 + 0x0A, "\n"},
		{"raw high byte", 5, 3 + 0xFF, "\xff"},
		{"not a byte token", 5, 260, "<0x"},
		{"out of range", 5, 261, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tok.DecodeToken(tc.prev, tc.id); got != tc.want {
				t.Errorf("DecodeToken(%d, %d) = %q, want %q", tc.prev, tc.id, got, tc.want)
			}
		})
	}
}

func TestLoadTokenizer(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tok.bin")
	if err := os.WriteFile(p, tokenizerBytes(8, byteVocab()), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokenizer(p)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Vocab() != 259 || tok.Name != p {
		t.Errorf("loaded %d tokens named %s", tok.Vocab(), tok.Name)
	}
	missing := filepath.Join(dir, "missing.bin")
	if _, err := LoadTokenizer(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: error %v", err)
	}
}

func TestByteTokenizerFile(t *testing.T) {
	tok, err := DecodeTokenizer("bytes", ByteTokenizerFile(), 259)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tok.EncodeText("hé")
	want := []int{3 + ' ', 3 + 'h', 3 + 0xc3, 3 + 0xa9}
	if err != nil || len(ids) != len(want) {
		t.Fatalf("EncodeText = %v, %v; want %v", ids, err, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("EncodeText = %v, want %v", ids, want)
		}
	}
	if tok.BOS() != BOS || tok.Piece(BOS) != "\n<s>\n" {
		t.Errorf("BOS %d piece %q", tok.BOS(), tok.Piece(BOS))
	}
}
