package llama

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/haeols/haeols/internal/inputs"
)

// MaxTokenizerBytes bounds the size of a tokenizer file LoadTokenizer reads.
const MaxTokenizerBytes = 64 << 20

// maxTokenLength bounds the max_token_length a tokenizer file may declare.
const maxTokenLength = 1 << 16

// ErrNotTokenizer is wrapped by every error about a file that is not a
// well-formed llama2.c tokenizer.
var ErrNotTokenizer = errors.New("not a llama2.c tokenizer")

// Tokenizer is a llama2.c tokenizer (tokenizer.bin, tok512.bin): one byte
// string and one merge score per token id.
type Tokenizer struct {
	// Name is the file it was read from.
	Name string
	// MaxTokenLength is the longest piece in bytes, as the file declares.
	MaxTokenLength int
	pieces         []string
	scores         []float32
	index          map[string]int
}

// Vocab is the number of tokens.
func (t *Tokenizer) Vocab() int { return len(t.pieces) }

// Piece returns the piece of token id as stored (e.g. " Once", "<0x0A>"),
// made valid UTF-8 (invalid bytes become U+FFFD) for display; "" if id is
// out of range.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return strings.ToValidUTF8(t.pieces[id], "\uFFFD")
}

// Score returns the merge score of token id (0 if out of range).
func (t *Tokenizer) Score(id int) float32 {
	if id < 0 || id >= len(t.scores) {
		return 0
	}
	return t.scores[id]
}

// DecodeToken returns the text token id stands for after token prev, as
// llama2.c's decode does: the leading space of a piece that follows BOS is
// dropped and raw-byte pieces "<0xHH>" become the byte.
func (t *Tokenizer) DecodeToken(prev, id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	p := t.pieces[id]
	if prev == BOS && strings.HasPrefix(p, " ") {
		p = p[1:]
	}
	var b byte
	if len(p) == 6 {
		if _, err := fmt.Sscanf(p, "<0x%02X>", &b); err == nil {
			return string([]byte{b})
		}
	}
	return p
}

// Encode tokenizes text as llama2.c's encode does: an optional BOS, a
// dummy-prefix space token when text is not empty, one token per UTF-8
// character (raw-byte tokens byte+3 for characters not in the vocabulary),
// then repeated merging of the adjacent pair (BOS included, as in llama2.c)
// whose concatenation is the highest-scoring token, and an optional EOS
// (token 2).
func (t *Tokenizer) Encode(text string, bos, eos bool) ([]int, error) {
	var out []int
	if bos {
		out = append(out, BOS)
	}
	if text != "" {
		sp, ok := t.index[" "]
		if !ok {
			return nil, fmt.Errorf("llama: tokenizer %s: no token for the dummy-prefix space", t.Name)
		}
		out = append(out, sp)
	}
	for i := 0; i < len(text); {
		j := i + 1
		for j < len(text) && j-i < utf8.UTFMax && text[j]&0xC0 == 0x80 {
			j++
		}
		if id, ok := t.index[text[i:j]]; ok {
			out = append(out, id)
		} else {
			for k := i; k < j; k++ {
				id := int(text[k]) + 3
				if id >= len(t.pieces) {
					return nil, fmt.Errorf("llama: tokenizer %s: byte 0x%02X of %q has no token (vocabulary of %d has no byte fallback)", t.Name, text[k], text, len(t.pieces))
				}
				out = append(out, id)
			}
		}
		i = j
	}
	for {
		best, bestID := -1, -1
		bestScore := float32(-1e10)
		for i := 0; i+1 < len(out); i++ {
			id, ok := t.index[t.pieces[out[i]]+t.pieces[out[i+1]]]
			if ok && t.scores[id] > bestScore {
				best, bestID, bestScore = i, id, t.scores[id]
			}
		}
		if best < 0 {
			break
		}
		out[best] = bestID
		out = append(out[:best+1], out[best+2:]...)
	}
	if eos {
		out = append(out, 2)
	}
	return out, nil
}

// EncodeText is Encode without BOS and EOS: the tokens of text after the
// dummy-prefix space.
func (t *Tokenizer) EncodeText(text string) ([]int, error) { return t.Encode(text, false, false) }

// DecodeTokenizer parses a llama2.c tokenizer file held in data: int32
// max_token_length, then per token float32 score, int32 length and the
// bytes. The file does not say how many tokens it holds: vocab > 0 demands
// exactly that many (the model's vocab_size) with nothing after them; vocab
// 0 reads tokens to the end of the data. name labels errors. Lengths are
// checked against max_token_length and the data before anything is
// allocated, and scores must be finite.
func DecodeTokenizer(name string, data []byte, vocab int) (*Tokenizer, error) {
	fail := func(format string, a ...any) (*Tokenizer, error) {
		return nil, fmt.Errorf("llama: %s: %w: %s", name, ErrNotTokenizer, fmt.Sprintf(format, a...))
	}
	if vocab < 0 || vocab > MaxVocab {
		return fail("vocabulary size %d outside [0, %d]", vocab, MaxVocab)
	}
	if len(data) < 4 {
		return fail("%d bytes, shorter than the 4-byte header", len(data))
	}
	maxLen := int(int32(binary.LittleEndian.Uint32(data)))
	if maxLen <= 0 || maxLen > maxTokenLength {
		return fail("max_token_length = %d, want 1..%d", maxLen, maxTokenLength)
	}
	if vocab > 0 && int64(len(data)-4) < 8*int64(vocab) {
		return fail("%d bytes cannot hold %d tokens (at least 8 bytes each)", len(data), vocab)
	}
	capacity := vocab
	if vocab == 0 {
		capacity = min((len(data)-4)/8, MaxVocab)
	}
	t := &Tokenizer{
		Name:           name,
		MaxTokenLength: maxLen,
		pieces:         make([]string, 0, capacity),
		scores:         make([]float32, 0, capacity),
		index:          make(map[string]int, vocab),
	}
	off := 4
	for (vocab > 0 && len(t.pieces) < vocab) || (vocab == 0 && off < len(data)) {
		id := len(t.pieces)
		if id >= MaxVocab {
			return fail("more than %d tokens", MaxVocab)
		}
		if len(data)-off < 8 {
			return fail("truncated at token %d (byte %d of %d)", id, off, len(data))
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int(int32(binary.LittleEndian.Uint32(data[off+4:])))
		off += 8
		switch {
		case score != score || math.IsInf(float64(score), 0):
			return fail("token %d: non-finite score %v", id, score)
		case n < 0 || n > maxLen:
			return fail("token %d: length %d outside [0, max_token_length %d]", id, n, maxLen)
		case n > len(data)-off:
			return fail("token %d: length %d runs past the end (%d bytes left)", id, n, len(data)-off)
		}
		p := string(data[off : off+n])
		off += n
		t.pieces = append(t.pieces, p)
		t.scores = append(t.scores, score)
		if _, dup := t.index[p]; !dup {
			t.index[p] = id
		}
	}
	if off != len(data) {
		return fail("%d bytes left after %d tokens: wrong vocabulary size?", len(data)-off, len(t.pieces))
	}
	if len(t.pieces) == 0 {
		return fail("no tokens")
	}
	return t, nil
}

// LoadTokenizer reads a llama2.c tokenizer file, taking every token it
// holds (DecodeTokenizer with vocab 0); Capture.Sample checks that the
// count matches the model. Anything but a regular file (a named pipe, a
// device, a directory) is refused before it is opened, files over
// MaxTokenizerBytes are refused unread, and a file whose 4-byte header is
// no max_token_length is refused after reading only it.
func LoadTokenizer(path string) (*Tokenizer, error) {
	f, size, err := inputs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llama: %s: %w", path, err)
	}
	defer f.Close()
	if size > MaxTokenizerBytes {
		return nil, fmt.Errorf("llama: %s: %w: %d bytes, more than the %d this reader accepts", path, ErrNotTokenizer, size, MaxTokenizerBytes)
	}
	// The 4-byte header first: a file that is no tokenizer is refused
	// before the rest is read.
	var hdr [4]byte
	if n, err := f.ReadAt(hdr[:], 0); n < 4 || err != nil && err != io.EOF {
		return DecodeTokenizer(path, hdr[:n], 0)
	}
	if ml := int32(binary.LittleEndian.Uint32(hdr[:])); ml <= 0 || ml > maxTokenLength {
		return DecodeTokenizer(path, hdr[:], 0)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("llama: %s: reading: %w", path, err)
	}
	return DecodeTokenizer(path, data, 0)
}

// BOS is the beginning-of-sequence token of llama2.c tokenizers.
func (t *Tokenizer) BOS() int { return BOS }

// ByteTokenizerFile returns a llama2.c tokenizer file of the byte
// vocabulary of 259 tokens (0 <unk>, 1 BOS, 2 EOS, 3+b the byte b, every
// score 0: no merges), which is the vocabulary of the byte model kjv3m, for
// tests and examples with random byte models.
func ByteTokenizerFile() []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 7)
	piece := func(p string) {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(0))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	piece("<unk>")
	piece("\n<s>\n")
	piece("\n</s>\n")
	for c := 0; c < 256; c++ {
		piece(string([]byte{byte(c)}))
	}
	return b
}
