package ui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vugu/vugu"
)

// ASCIIContent rewrites every inner HTML of the nodes below out (the
// template's vg-content and static markup) so that its characters beyond
// ASCII are numeric character references (— becomes &#8212;): the same
// HTML to the browser. vugu's renderer cuts an inner HTML longer than what
// is left of its 16 KiB instruction buffer at a byte, and the page decodes
// each piece on its own, so a character of several bytes on the cut showed
// as two U+FFFD (seen in a head's title: "ratio 0.21 �� err 2.3%"). ASCII
// has no such cut. Call it between BuildEnv.RunBuild and Render.
func ASCIIContent(out *vugu.BuildOut) {
	if out == nil {
		return
	}
	for _, n := range out.Out {
		asciiNodes(n)
	}
}

// asciiNodes rewrites n, its children and its following siblings.
func asciiNodes(n *vugu.VGNode) {
	for ; n != nil; n = n.NextSibling {
		if n.InnerHTML != nil {
			if s, ok := asciiHTML(*n.InnerHTML); ok {
				n.InnerHTML = &s
			}
		}
		asciiNodes(n.FirstChild)
	}
}

// asciiHTML returns html with every rune beyond ASCII written as a numeric
// character reference, and whether it changed anything. Invalid UTF-8 is
// written as U+FFFD's reference, as the browser would decode it.
func asciiHTML(html string) (string, bool) {
	i := 0
	for i < len(html) && html[i] < utf8.RuneSelf {
		i++
	}
	if i == len(html) {
		return html, false
	}
	var b strings.Builder
	b.Grow(len(html) + 16)
	b.WriteString(html[:i])
	for _, r := range html[i:] {
		if r < utf8.RuneSelf {
			b.WriteByte(byte(r))
			continue
		}
		b.WriteString("&#")
		b.WriteString(strconv.Itoa(int(r)))
		b.WriteByte(';')
	}
	return b.String(), true
}
