package ui

import (
	"encoding/json"
	"html"
	"strconv"
	"strings"

	"github.com/vugu/vugu/js"
)

// svgChart is an SVG chart as a flat list of elements drawn in order: the
// page writes it once as HTML and then, while a person scrubs, changes only
// the attributes and texts that differ from the chart it shows (Patch), so
// a new profile or a moved marker costs a few attribute writes instead of
// parsing and laying out a new SVG.
type svgChart struct {
	Label string    // the svg's aria-label
	Elems []svgElem // its children, in order
}

// svgElem is one child of a chart's <svg>.
type svgElem struct {
	Tag   string    // line, text, rect, path
	Attrs []svgAttr // in order
	Text  string    // the content of a <text>
	Title string    // a <title> child (a tooltip); "" for none
}

// svgAttr is one attribute of an svgElem.
type svgAttr struct{ K, V string }

// add appends an element with the attributes kv (key, value, key, value...).
func (c *svgChart) add(tag, text, title string, kv ...string) {
	e := svgElem{Tag: tag, Text: text, Title: title, Attrs: make([]svgAttr, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Attrs = append(e.Attrs, svgAttr{kv[i], kv[i+1]})
	}
	c.Elems = append(c.Elems, e)
}

// f1 and f2 format chart coordinates with one or two decimals.
func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// HTML is the chart as an <svg> element.
func (c *svgChart) HTML() string {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 `)
	b.WriteString(strconv.Itoa(chartW) + " " + strconv.Itoa(chartH))
	b.WriteString(`" width="100%" role="img" aria-label="`)
	b.WriteString(html.EscapeString(c.Label))
	b.WriteString(`" class="chart">`)
	for _, e := range c.Elems {
		b.WriteString("<" + e.Tag)
		for _, a := range e.Attrs {
			b.WriteString(" " + a.K + `="` + html.EscapeString(a.V) + `"`)
		}
		if e.Text == "" && e.Title == "" {
			b.WriteString("/>")
			continue
		}
		b.WriteString(">")
		if e.Title != "" {
			b.WriteString("<title>" + html.EscapeString(e.Title) + "</title>")
		}
		b.WriteString(html.EscapeString(e.Text))
		b.WriteString("</" + e.Tag + ">")
	}
	b.WriteString("</svg>")
	return b.String()
}

// patchable reports whether the page's copy of old can be turned into c by
// changing attribute values and texts only: the same label, the same
// elements with the same attribute names in the same order, tooltips where
// old has them.
func (c *svgChart) patchable(old *svgChart) bool {
	if old == nil || old.Label != c.Label || len(old.Elems) != len(c.Elems) {
		return false
	}
	for i, e := range c.Elems {
		o := old.Elems[i]
		if o.Tag != e.Tag || len(o.Attrs) != len(e.Attrs) || (o.Title == "") != (e.Title == "") || (o.Text == "") != (e.Text == "") {
			return false
		}
		for j, a := range e.Attrs {
			if o.Attrs[j].K != a.K {
				return false
			}
		}
	}
	return true
}

// Patch makes the svg element that shows old (the first child of host)
// show c, writing only what differs; false when it cannot (see patchable)
// and the chart must be written anew. The writes go to the page in one
// call (index.html's haeolsPatchSVG): element by element, each js.Value
// the Go side holds costs a finalizer, and the calls cost more than the
// writes (a new profile rewrites about 200 attributes and tooltips).
func (c *svgChart) Patch(host js.Value, old *svgChart) bool {
	if !c.patchable(old) {
		return false
	}
	ops := c.patchOps(old)
	if len(ops) == 0 {
		return true
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return false
	}
	patch := js.Global().Get("haeolsPatchSVG")
	if patch.Type() != js.TypeFunction {
		return false
	}
	return patch.Invoke(host, len(c.Elems), string(b)).Truthy()
}

// patchOps lists the writes that turn old (patchable into c) into c, as
// haeolsPatchSVG reads them: "a", element index, attribute, value; "t",
// index, tooltip; "x", index, text.
func (c *svgChart) patchOps(old *svgChart) []string {
	var ops []string
	for i, e := range c.Elems {
		o := old.Elems[i]
		idx := ""
		at := func() string {
			if idx == "" {
				idx = strconv.Itoa(i)
			}
			return idx
		}
		for j, a := range e.Attrs {
			if o.Attrs[j].V != a.V {
				ops = append(ops, "a", at(), a.K, a.V)
			}
		}
		if e.Title != o.Title {
			ops = append(ops, "t", at(), e.Title)
		}
		if e.Text != o.Text {
			ops = append(ops, "x", at(), e.Text)
		}
	}
	return ops
}
