package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pre is a byte-level pre-tokenizer: the rule that splits text into the
// words BPE merges within. Each is the regular expression of its model,
// implemented by hand (Go's regexp has no look-ahead); docs/CHECKPOINTS.md
// gives the expressions.
type Pre int

// The pre-tokenizers.
const (
	PreNone Pre = iota
	// PreGPT2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
	PreGPT2
	// PreLlama3: case-insensitive contractions, an optional non-letter,
	// non-digit, non-newline character before letters, digits in runs of
	// up to three, punctuation with trailing newlines, newline runs,
	// spaces (GGUF "llama-bpe").
	PreLlama3
	// PreQwen2: PreLlama3 with single digits (GGUF "qwen2").
	PreQwen2
	// PreSmolLM: every digit on its own, then PreGPT2 (GGUF "smollm").
	PreSmolLM
)

var preNames = map[Pre]string{PreNone: "none", PreGPT2: "gpt2", PreLlama3: "llama-bpe", PreQwen2: "qwen2", PreSmolLM: "smollm"}

func (p Pre) String() string { return preNames[p] }

// Split splits s into words. Their concatenation is s.
func (p Pre) Split(s string) []string {
	switch p {
	case PreNone:
		return []string{s}
	case PreSmolLM:
		var out []string
		for _, part := range splitDigits(s) {
			out = append(out, splitWith(part, matchGPT2)...)
		}
		return out
	case PreGPT2:
		return splitWith(s, matchGPT2)
	case PreLlama3:
		return splitWith(s, func(s string) int { return matchLlama3(s, 3) })
	case PreQwen2:
		return splitWith(s, func(s string) int { return matchLlama3(s, 1) })
	}
	panic("tokenizer: unknown pre-tokenizer")
}

// splitWith cuts s into the successive matches of match, which returns the
// length of the match at the start of its argument (at least one
// character's worth for a non-empty argument).
func splitWith(s string, match func(string) int) []string {
	var out []string
	for len(s) > 0 {
		n := match(s)
		if n <= 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// splitDigits isolates every decimal digit (the Digits pre-tokenizer
// with individual_digits).
func splitDigits(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if unicode.IsNumber(r) {
			if i > start {
				out = append(out, s[start:i])
			}
			n := utf8.RuneLen(r)
			out = append(out, s[i:i+n])
			start = i + n
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// Character classes: \p{L}, \p{N}, \s. An invalid byte is none of them.
func isL(r rune) bool     { return r != utf8.RuneError && unicode.IsLetter(r) }
func isN(r rune) bool     { return r != utf8.RuneError && unicode.IsNumber(r) }
func isS(r rune) bool     { return r != utf8.RuneError && unicode.IsSpace(r) }
func isOther(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }

// run is the byte length of the longest prefix of s whose characters all
// satisfy f, and how many characters it has.
func run(s string, f func(rune) bool, maxChars int) (int, int) {
	n, c := 0, 0
	for n < len(s) && c < maxChars {
		r, w := utf8.DecodeRuneInString(s[n:])
		if !f(r) {
			break
		}
		n, c = n+w, c+1
	}
	return n, c
}

const unlimited = int(^uint(0) >> 1)

// contraction matches 's 't 're 've 'm 'll 'd at the start of s
// (case-insensitively when fold), returning its length or 0.
func contraction(s string, fold bool) int {
	if len(s) < 2 || s[0] != '\'' {
		return 0
	}
	for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
		if len(s) >= 1+len(c) {
			got := s[1 : 1+len(c)]
			if got == c || fold && strings.EqualFold(got, c) {
				return 1 + len(c)
			}
		}
	}
	return 0
}

// whitespace matches \s+(?!\S) then \s+ at the start of s: a run of
// whitespace, less its last character when a non-space follows (and it has
// more than one), else the whole run. 0 if s does not start with a space.
func whitespace(s string) int {
	n, c := run(s, isS, unlimited)
	if n == 0 {
		return 0
	}
	if n < len(s) && c > 1 { // a non-space follows: leave it the last space
		_, w := utf8.DecodeLastRuneInString(s[:n])
		return n - w
	}
	return n
}

func matchGPT2(s string) int {
	if n := contraction(s, false); n > 0 {
		return n
	}
	sp := 0
	if s[0] == ' ' {
		sp = 1
	}
	r, _ := utf8.DecodeRuneInString(s[sp:])
	if sp < len(s) {
		for _, f := range []func(rune) bool{isL, isN, isOther} {
			if f(r) {
				n, _ := run(s[sp:], f, unlimited)
				return sp + n
			}
		}
	}
	return whitespace(s)
}

// matchLlama3 is the Llama 3 rule with digit runs of at most digits
// characters (3 for Llama 3, 1 for Qwen2).
func matchLlama3(s string, digits int) int {
	if n := contraction(s, true); n > 0 {
		return n
	}
	r0, w0 := utf8.DecodeRuneInString(s)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if r0 != '\r' && r0 != '\n' && !isL(r0) && !isN(r0) && w0 < len(s) {
		if n, _ := run(s[w0:], isL, unlimited); n > 0 {
			return w0 + n
		}
	}
	if isL(r0) {
		n, _ := run(s, isL, unlimited)
		return n
	}
	// \p{N}{1,digits}
	if isN(r0) {
		n, _ := run(s, isN, digits)
		return n
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	sp := 0
	if r0 == ' ' {
		sp = 1
	}
	if sp < len(s) {
		if n, _ := run(s[sp:], isOther, unlimited); n > 0 {
			m, _ := run(s[sp+n:], func(r rune) bool { return r == '\r' || r == '\n' }, unlimited)
			return sp + n + m
		}
	}
	// \s*[\r\n]+ : the whitespace run up to its last newline.
	if n, _ := run(s, isS, unlimited); n > 0 {
		if last := strings.LastIndexAny(s[:n], "\r\n"); last >= 0 {
			return last + 1
		}
	}
	return whitespace(s)
}

// byteChars maps each byte to the printable character GPT-2's byte-level
// BPE writes for it: the printable Latin-1 bytes ('!'..'~', '¡'..'¬',
// '®'..'ÿ') stand for themselves, the other 68 take U+0100 onwards in
// byte order. runeBytes is the inverse.
var (
	byteChars [256]string
	runeBytes = map[rune]byte{}
)

func init() {
	extra := 0
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae && b <= 0xff) {
			r = rune(256 + extra)
			extra++
		}
		byteChars[b] = string(r)
		runeBytes[r] = byte(b)
	}
}

// byteEncode writes the bytes of s as byte-level characters.
func byteEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(byteChars[s[i]])
	}
	return b.String()
}

// byteDecode maps byte-level characters back to bytes; a character
// outside the map (a piece added as plain text) is kept as its UTF-8.
func byteDecode(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeBytes[r]; ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}
