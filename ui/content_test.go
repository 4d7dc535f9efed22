package ui

import (
	"html"
	"testing"

	"github.com/vugu/vugu"
)

// TestASCIIHTML checks that the rewritten HTML is ASCII and reads as the
// same text, and that ASCII is left as it is.
func TestASCIIHTML(t *testing.T) {
	for _, c := range []struct {
		in, want string
		changed  bool
	}{
		{"", "", false},
		{"err 2.8%", "err 2.8%", false},
		{"Layer 0, head 0 — hae-ols", "Layer 0, head 0 &#8212; hae-ols", true},
		{"τ = 1 &amp; <b>≥</b>", "&#964; = 1 &amp; <b>&#8805;</b>", true},
		{"kv 🙂", "kv &#128578;", true},
		{"bad \xff byte", "bad &#65533; byte", true},
	} {
		got, changed := asciiHTML(c.in)
		if got != c.want || changed != c.changed {
			t.Errorf("asciiHTML(%q) = %q, %v; want %q, %v", c.in, got, changed, c.want, c.changed)
		}
		for i := 0; i < len(got); i++ {
			if got[i] >= 0x80 {
				t.Errorf("asciiHTML(%q) = %q is not ASCII", c.in, got)
				break
			}
		}
		if c.in != "bad \xff byte" && html.UnescapeString(got) != html.UnescapeString(c.in) {
			t.Errorf("asciiHTML(%q) reads %q", c.in, html.UnescapeString(got))
		}
	}
}

// TestASCIIContent rewrites the inner HTML of nested nodes and siblings.
func TestASCIIContent(t *testing.T) {
	s := func(v string) *string { return &v }
	leaf := &vugu.VGNode{InnerHTML: s("a — b")}
	sib := &vugu.VGNode{InnerHTML: s("plain")}
	root := &vugu.VGNode{FirstChild: &vugu.VGNode{FirstChild: leaf, NextSibling: sib}}
	ASCIIContent(&vugu.BuildOut{Out: []*vugu.VGNode{root}})
	if *leaf.InnerHTML != "a &#8212; b" || *sib.InnerHTML != "plain" {
		t.Errorf("inner HTML %q and %q", *leaf.InnerHTML, *sib.InnerHTML)
	}
	ASCIIContent(nil)
}
