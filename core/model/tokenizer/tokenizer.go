// Package tokenizer turns text into the token ids of a model and back, for
// the tokenizers GGUF files and Hugging Face folders carry:
//
//   - SentencePiece-style (GGUF tokenizer.ggml.model "llama"; Hugging Face
//     tokenizer.json BPE over "▁"-marked text with byte fallback, as Llama 2,
//     Mistral and TinyLlama use): a space prefix, spaces as U+2581, pieces
//     merged by score (GGUF) or merge rank (tokenizer.json), and characters
//     outside the vocabulary as byte tokens <0xXX> (else the unknown token).
//   - Byte-level BPE (GGUF "gpt2"; tokenizer.json ByteLevel, as Llama 3,
//     Qwen2/2.5/3 and SmolLM use): a pre-tokenizer splits the text into words
//     (the GPT-2, Llama 3, Qwen2 and SmolLM splitting rules), each word's
//     bytes become GPT-2's printable byte characters and are merged by rank.
//
// Encoding takes the text as plain text: special tokens written in it
// ("<|begin_of_text|>") are not recognized as such. Decoding is exact:
// the bytes of the tokens, byte tokens as their byte, control tokens
// (BOS, EOS) left out, so Decode(Encode(s)) == s for every string s the
// vocabulary covers, invalid UTF-8 included.
package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Kind is the tokenization algorithm.
type Kind int

// The kinds.
const (
	// SentencePiece is the "▁"-marked BPE with byte fallback of Llama 2.
	SentencePiece Kind = iota
	// ByteLevel is GPT-2's byte-level BPE, as Llama 3 and Qwen use.
	ByteLevel
)

func (k Kind) String() string {
	if k == SentencePiece {
		return "sentencepiece"
	}
	return "byte-level BPE"
}

// TokenType is a token's type, numbered as GGUF tokenizer.ggml.token_type
// (llama_token_type) numbers them.
type TokenType int32

// The token types.
const (
	Undefined   TokenType = 0
	Normal      TokenType = 1
	Unknown     TokenType = 2
	Control     TokenType = 3
	UserDefined TokenType = 4
	Unused      TokenType = 5
	Byte        TokenType = 6
)

// Limits checked while building a tokenizer.
const (
	MaxVocab       = 1 << 21
	MaxMerges      = 1 << 21
	MaxTokenLength = 1 << 16
)

// ErrTokenizer is wrapped by every error about a tokenizer description
// this package does not accept.
var ErrTokenizer = errors.New("unsupported or invalid tokenizer")

// Tokenizer encodes and decodes text for one vocabulary. It is safe for
// concurrent use.
type Tokenizer struct {
	kind   Kind
	tokens []string
	types  []TokenType
	scores []float32 // SentencePiece from GGUF: merge by score
	index  map[string]int
	// merges ranks pairs (left + "\x00" + right); nil for score merging.
	// mergeList holds them in rank order as "left right".
	merges    map[string]int
	mergeList []string
	// bytes are the ids of the byte tokens <0x00>..<0xFF> (-1: none).
	bytes [256]int
	// bos, eos and unk are token ids, -1 when the vocabulary has none.
	bos, eos, unk int
	addBOS        bool
	// SentencePiece: prefix text with a space; split words at "▁".
	spacePrefix, splitWords bool
	// ByteLevel: the pre-tokenizer, whether a whole word in the
	// vocabulary skips merging, and a space added before the text.
	pre          Pre
	ignoreMerges bool
	prefixSpace  bool
	// fuseUnk: a run of symbols with no token and no byte tokens is one
	// unknown token (sentencepiece; tokenizer.json's fuse_unk), else one
	// each (llama.cpp).
	fuseUnk bool
	// nfc: tokenizer.json's NFC normalizer (Qwen2, Qwen3) applies to the
	// text between special tokens.
	nfc bool
	// specials are the control, user-defined and unknown tokens, longest first
	// (then by id): Encode takes them from the text whole.
	specials []int
}

// Kind is the tokenizer's algorithm.
func (t *Tokenizer) Kind() Kind { return t.kind }

// Vocab is the number of tokens.
func (t *Tokenizer) Vocab() int { return len(t.tokens) }

// Token is token id as stored in the vocabulary ("▁the", "Ġthe",
// "<0x0A>", "<s>"), "" if id is out of range.
func (t *Tokenizer) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// Type is the type of token id (Undefined if out of range).
func (t *Tokenizer) Type(id int) TokenType {
	if id < 0 || id >= len(t.types) {
		return Undefined
	}
	return t.types[id]
}

// ID returns the id of the token stored as s.
func (t *Tokenizer) ID(s string) (int, bool) {
	id, ok := t.index[s]
	return id, ok
}

// BOS, EOS and UNK are the special token ids, -1 when there is none.
func (t *Tokenizer) BOS() int { return t.bos }

// EOS is the end-of-sequence token id, -1 when there is none.
func (t *Tokenizer) EOS() int { return t.eos }

// UNK is the unknown token id, -1 when there is none.
func (t *Tokenizer) UNK() int { return t.unk }

// AddsBOS reports whether Encode starts with the BOS token.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS }

// Pre is the byte-level pre-tokenizer (PreNone for SentencePiece).
func (t *Tokenizer) Pre() Pre { return t.pre }

// Encode returns the token ids of text, after BOS when the tokenizer adds
// it. The control and user-defined tokens written in the text ("<s>",
// "<|im_start|>") are taken as those tokens, as llama.cpp does with
// special-token parsing and Hugging Face tokenizers do with added tokens:
// the text is split at them, the longest first, and each piece of text
// between them is encoded on its own (a SentencePiece tokenizer prefixes
// each with a space). It fails only when a piece has neither a token, nor
// byte tokens, nor an unknown token to stand for it.
func (t *Tokenizer) Encode(text string) ([]int, error) {
	var ids []int
	if t.addBOS && t.bos >= 0 {
		ids = append(ids, t.bos)
	}
	var err error
	for _, f := range t.partition(text) {
		if f.id >= 0 {
			ids = append(ids, f.id)
			continue
		}
		if ids, err = t.encodePiece(ids, f.text); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// fragment is a special token (id >= 0) or a piece of text (id -1).
type fragment struct {
	text string
	id   int
}

// partition splits text at the special tokens written in it: for each
// special token, the longest first, every occurrence in the pieces of text
// left by the longer ones becomes that token (llama.cpp's
// tokenizer_st_partition). Empty pieces of text are dropped.
func (t *Tokenizer) partition(text string) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{text, -1}}
	for _, id := range t.specials {
		tok := t.tokens[id]
		var out []fragment
		for _, f := range frags {
			if f.id >= 0 || !strings.Contains(f.text, tok) {
				out = append(out, f)
				continue
			}
			s := f.text
			for {
				i := strings.Index(s, tok)
				if i < 0 {
					break
				}
				if i > 0 {
					out = append(out, fragment{s[:i], -1})
				}
				out = append(out, fragment{tok, id})
				s = s[i+len(tok):]
			}
			if s != "" {
				out = append(out, fragment{s, -1})
			}
		}
		frags = out
	}
	return frags
}

// encodePiece appends the ids of a piece of text holding no special token.
func (t *Tokenizer) encodePiece(ids []int, text string) ([]int, error) {
	var err error
	if t.kind == SentencePiece {
		s := text
		if t.spacePrefix {
			s = " " + s
		}
		s = strings.ReplaceAll(s, " ", "▁")
		for _, w := range t.spmWords(s) {
			if ids, err = t.encodeSymbols(ids, w, splitChars(w)); err != nil {
				return nil, err
			}
		}
		return ids, nil
	}
	s := text
	if t.nfc {
		s = norm.NFC.String(s)
	}
	if t.prefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	for _, w := range t.pre.Split(s) {
		enc := byteEncode(w)
		if t.ignoreMerges {
			if id, ok := t.index[enc]; ok {
				ids = append(ids, id)
				continue
			}
		}
		if ids, err = t.encodeSymbols(ids, enc, splitChars(enc)); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// spmWords splits "▁"-marked text into the words merges may not cross:
// the whole text, or with splitWords each "▁" starts a word.
func (t *Tokenizer) spmWords(s string) []string {
	if !t.splitWords {
		return []string{s}
	}
	var out []string
	for len(s) > 0 {
		i := strings.Index(s[1:], "▁")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitChars splits s into UTF-8 characters, each byte of an invalid
// sequence on its own.
func splitChars(s string) []string {
	out := make([]string, 0, len(s))
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// encodeSymbols merges the symbols of one word and appends their ids.
func (t *Tokenizer) encodeSymbols(ids []int, word string, syms []string) ([]int, error) {
	lastUnk := false
	for _, s := range t.merge(syms) {
		if id, ok := t.index[s]; ok && t.types[id] != Control {
			ids, lastUnk = append(ids, id), false
			continue
		}
		// Not a token: its bytes as byte tokens, else the unknown token.
		fallback := true
		for i := 0; i < len(s); i++ {
			fallback = fallback && t.bytes[s[i]] >= 0
		}
		switch {
		case fallback:
			for i := 0; i < len(s); i++ {
				ids = append(ids, t.bytes[s[i]])
			}
			lastUnk = false
		case t.unk >= 0 && lastUnk && t.fuseUnk:
		case t.unk >= 0:
			ids, lastUnk = append(ids, t.unk), true
		default:
			return nil, fmt.Errorf("tokenizer: %q (in %q) has no token, no byte tokens and there is no unknown token", s, word)
		}
	}
	return ids, nil
}

// unknownText is how an unknown token decodes (SentencePiece's rendering).
const unknownText = " \u2047 "

// TokenBytes is the text token id stands for, as bytes: a byte token its
// byte, a SentencePiece piece with "▁" as spaces, a byte-level piece
// mapped back to its bytes, a user-defined or control token its text, an
// unknown token " ⁇ ". For labels; Decode leaves control tokens out.
func (t *Tokenizer) TokenBytes(id int) []byte {
	if id < 0 || id >= len(t.tokens) {
		return nil
	}
	s := t.tokens[id]
	switch t.types[id] {
	case Byte:
		if b, ok := parseByteToken(s); ok {
			return []byte{b}
		}
		return []byte(s)
	case Unknown:
		return []byte(unknownText)
	case Control, UserDefined, Unused:
		if t.kind == SentencePiece {
			return []byte(strings.ReplaceAll(s, "▁", " "))
		}
		return []byte(s)
	}
	if t.kind == SentencePiece {
		return []byte(strings.ReplaceAll(s, "▁", " "))
	}
	return byteDecode(s)
}

// Decode returns the text of ids: the tokens' bytes (TokenBytes) in order,
// control tokens left out, and for a SentencePiece tokenizer that adds a
// space prefix, the first space of the text removed. Ids out of range are
// an error.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var b []byte
	for i, id := range ids {
		if id < 0 || id >= len(t.tokens) {
			return "", fmt.Errorf("tokenizer: id %d (position %d) is outside the vocabulary of %d", id, i, len(t.tokens))
		}
		if t.types[id] == Control {
			continue
		}
		b = append(b, t.TokenBytes(id)...)
	}
	if t.kind == SentencePiece && t.spacePrefix && len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return string(b), nil
}

// parseByteToken parses "<0xHH>" (upper-case hex, as SentencePiece writes).
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

// finish indexes the vocabulary and checks it; called by the
// constructors once tokens, types and scores are set.
func (t *Tokenizer) finish() error {
	n := len(t.tokens)
	if n == 0 || n > MaxVocab {
		return fmt.Errorf("%w: %d tokens (want 1 to %d)", ErrTokenizer, n, MaxVocab)
	}
	if len(t.types) != n {
		return fmt.Errorf("%w: %d token types for %d tokens", ErrTokenizer, len(t.types), n)
	}
	if t.scores != nil && len(t.scores) != n {
		return fmt.Errorf("%w: %d scores for %d tokens", ErrTokenizer, len(t.scores), n)
	}
	t.index = make(map[string]int, n)
	for i := range t.bytes {
		t.bytes[i] = -1
	}
	for id, s := range t.tokens {
		if len(s) > MaxTokenLength {
			return fmt.Errorf("%w: token %d is %d bytes long, more than %d", ErrTokenizer, id, len(s), MaxTokenLength)
		}
		if t.scores != nil {
			if v := t.scores[id]; v != v || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%w: token %d %q has score %v", ErrTokenizer, id, s, v)
			}
		}
		if tt := t.types[id]; tt < Undefined || tt > Byte {
			return fmt.Errorf("%w: token %d %q has type %d (want 0 to 6)", ErrTokenizer, id, s, tt)
		}
		if _, dup := t.index[s]; !dup { // the first of duplicates wins
			t.index[s] = id
		}
		if t.types[id] == Byte {
			if b, ok := parseByteToken(s); ok && t.bytes[b] < 0 {
				t.bytes[b] = id
			}
		}
	}
	t.specials = nil
	for id, s := range t.tokens {
		if tt := t.types[id]; (tt == Control || tt == UserDefined || tt == Unknown) && s != "" && t.index[s] == id {
			t.specials = append(t.specials, id)
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool { return len(t.tokens[t.specials[a]]) > len(t.tokens[t.specials[b]]) })
	for _, p := range []struct {
		name string
		id   int
	}{{"bos", t.bos}, {"eos", t.eos}, {"unknown", t.unk}} {
		if p.id < -1 || p.id >= n {
			return fmt.Errorf("%w: %s token id %d outside the vocabulary of %d", ErrTokenizer, p.name, p.id, n)
		}
	}
	if t.addBOS && t.bos < 0 {
		return fmt.Errorf("%w: adds a BOS token but has none", ErrTokenizer)
	}
	return nil
}

// EncodeText returns the token ids of text without BOS (a SentencePiece
// tokenizer's space prefix included): what core/eval's tasks encode piece by
// piece after the sequence's BOS.
func (t *Tokenizer) EncodeText(text string) ([]int, error) {
	ids, err := t.Encode(text)
	if err != nil {
		return nil, err
	}
	if t.addBOS && t.bos >= 0 && len(ids) > 0 && ids[0] == t.bos {
		ids = ids[1:]
	}
	return ids, nil
}

// DecodeToken is the text of token id after token prev for display (its
// bytes, control tokens as nothing). As Decode drops the first space of a
// SentencePiece text whose space prefix the tokenizer added, a token right
// after BOS loses its leading space (llama2.c's decoder does the same), so
// that the tokens of a sequence from BOS read as Decode reads them.
func (t *Tokenizer) DecodeToken(prev, id int) string {
	if id < 0 || id >= len(t.tokens) || t.types[id] == Control {
		return ""
	}
	b := t.TokenBytes(id)
	if t.kind == SentencePiece && t.spacePrefix && t.bos >= 0 && prev == t.bos && len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	return string(b)
}
