package safetensors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// checkJSON checks what encoding/json lets pass: the header must be valid
// UTF-8 (json would turn bad bytes into U+FFFD silently) with no escaped
// lone surrogate, and no object, at any depth, may hold a key twice (json
// keeps the last).
func checkJSON(b []byte) error {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("not valid UTF-8 (byte %d of %d is 0x%02x)", i, len(b), b[i])
	}
	if err := checkSurrogates(b); err != nil {
		return err
	}
	if err := checkDepth(b, MaxDepth); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	type obj struct {
		path string
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*obj
	path := func() string {
		if len(stack) == 0 || stack[len(stack)-1].path == "" {
			return "the header object"
		}
		return stack[len(stack)-1].path
	}
	last := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // the parsers below report syntax errors in context
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				p := ""
				if top != nil {
					p = strings.TrimPrefix(top.path+"."+last, ".")
				}
				if t == '[' {
					stack = append(stack, &obj{path: p})
				} else {
					stack = append(stack, &obj{path: p, keys: map[string]bool{}, key: true})
				}
				continue
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.keys != nil && top.key {
				if top.keys[t] {
					if top.path == "" {
						return fmt.Errorf("duplicate key %q", t)
					}
					return fmt.Errorf("duplicate key %q in %q", t, path())
				}
				top.keys[t] = true
				top.key = false
				last = t
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].key = true
		}
	}
}

// MaxDepth is how deep a header's arrays and objects may nest (a real
// header nests 3 deep: the header, a tensor, its shape).
const MaxDepth = 32

// checkDepth refuses JSON nesting deeper than max, in one pass over the
// bytes that allocates nothing (before any decoder sees them: nesting
// thousands deep made the decoders' state grow with the square of the
// depth). Brackets inside strings do not count.
func checkDepth(b []byte, max int) error {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > max {
				return fmt.Errorf("nests more than %d levels deep (byte %d)", max, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// checkSurrogates refuses a \u escape of a lone UTF-16 surrogate (a high
// one not followed by a low one, or a low one alone): it is no character,
// and encoding/json would turn it into U+FFFD silently.
func checkSurrogates(b []byte) error {
	hex := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex(i)
		if !ok {
			i++ // skip the escaped character (\\, \", ...)
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if lo, ok := hex(i + 6); ok && lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
			return fmt.Errorf("lone UTF-16 surrogate \\u%04x at byte %d (no character)", r, i)
		case r >= 0xdc00 && r < 0xe000:
			return fmt.Errorf("lone UTF-16 surrogate \\u%04x at byte %d (no character)", r, i)
		}
		i += 5
	}
	return nil
}
