package termsafe

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"naïve — ünïcode 漢字", "naïve — ünïcode 漢字"},
		{`back\slash alone`, `back\slash alone`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"line1\nfile  x\r", `line1\nfile  x\r`},
		{"tab\there", `tab\there`},
		{"a\\b\x1b", `a\\b\x1b`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"rtl \u202e override", `rtl \u202e override`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"del\x7f", `del\x7f`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if Safe(c.in) != (c.in == c.want) {
			t.Errorf("Safe(%q) = %v", c.in, Safe(c.in))
		}
	}
}
