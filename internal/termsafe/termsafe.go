// Package termsafe makes text from files (metadata, token strings, file
// names) safe to print on a terminal: control characters, which could move
// the cursor, rewrite earlier lines, set the window title or ring the bell
// (ESC, OSC, BEL, CR, newlines), and the Unicode bidirectional controls,
// which could reorder what is shown, are written as Go escapes, and invalid
// UTF-8 as \x bytes. Printable text, including non-ASCII letters, is kept.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character, bidirectional control and
// invalid byte escaped (\n, \r, \t, \x1b, \u202e, ...), and backslashes
// doubled only where that keeps the result unambiguous: a backslash is
// written \\ when s holds anything escaped, so that "a\x1b" and `a\x1b`
// print differently.
func String(s string) string {
	if Safe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Safe reports whether s prints as it is: valid UTF-8 without control
// characters or bidirectional controls.
func Safe(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x20 || r == 0x7f || unsafeRune(r) {
			return false
		}
		i += n
	}
	return true
}

// unsafeRune reports the C1 controls (0x80-0x9f, which some terminals obey
// as ESC sequences), the bidirectional controls and the line and paragraph
// separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
