package tokenizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model/gguf"
)

// TestAgainstLlama2C cross-checks the SentencePiece merging against
// core/llama's transcription of llama2.c's encoder, an independent
// implementation: random vocabularies whose pieces are made of characters
// that are themselves pieces (as SentencePiece vocabularies are), with
// scores that sometimes tie, and random texts with characters outside the
// vocabulary (byte fallback). llama2.c's files store "▁" as a space.
func TestAgainstLlama2C(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 22))
	chars := []string{" ", "a", "b", "c", "d", "e"}
	for trial := 0; trial < 20; trial++ {
		pieces := []string{"<unk>", "<s>", "</s>"}
		for b := 0; b < 256; b++ {
			pieces = append(pieces, fmt.Sprintf("<0x%02X>", b))
		}
		pieces = append(pieces, chars...)
		seen := map[string]bool{}
		for _, p := range pieces {
			seen[p] = true
		}
		for len(pieces) < 259+len(chars)+40 {
			var b strings.Builder
			for n := 2 + r.IntN(4); n > 0; n-- {
				b.WriteString(chars[r.IntN(len(chars))])
			}
			if p := b.String(); !seen[p] {
				seen[p] = true
				pieces = append(pieces, p)
			}
		}
		scores := make([]float32, len(pieces))
		for i := 259; i < len(scores); i++ {
			scores[i] = -float32(r.IntN(12)) // ties are common
		}
		// The llama2.c file: max length, then score, length, bytes.
		data := binary.LittleEndian.AppendUint32(nil, 16)
		for i, p := range pieces {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(scores[i]))
			data = binary.LittleEndian.AppendUint32(data, uint32(len(p)))
			data = append(data, p...)
		}
		ref, err := llama.DecodeTokenizer("random", data, len(pieces))
		if err != nil {
			t.Fatal(err)
		}
		tokens := make([]string, len(pieces))
		types := make([]int32, len(pieces))
		for i, p := range pieces {
			tokens[i] = strings.ReplaceAll(p, " ", "▁")
			switch {
			case i == 0:
				types[i] = int32(Unknown)
			case i < 3:
				types[i] = int32(Control)
			case i < 259:
				types[i] = int32(Byte)
			default:
				types[i] = int32(Normal)
			}
		}
		tk := ggufTokenizer(t, []gguf.KV{
			{Key: KeyModel, Value: "llama"}, {Key: KeyTokens, Value: tokens}, {Key: KeyScores, Value: scores},
			{Key: KeyTokenType, Value: types}, {Key: KeyBOS, Value: uint32(1)}, {Key: KeyEOS, Value: uint32(2)},
		})
		alphabet := []string{" ", "a", "b", "c", "d", "e", "é", "\n", "x"}
		for k := 0; k < 30; k++ {
			var b strings.Builder
			for n := r.IntN(40); n > 0; n-- {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			text := b.String()
			want, err := ref.Encode(text, true, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tk.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: %q: got %q, llama2.c %q", trial, text, pieces1(tk, got), pieces1(tk, want))
			}
		}
	}
}

func pieces1(t *Tokenizer, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.Token(id)
	}
	return out
}
