package ui

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/result"
	"github.com/haeols/haeols/wire"
)

// "What the model says": a model's prompt run with the full cache and with
// a compressed one (HAE-OLS.md §8), as HTML the template shows whole. The
// texts are per token (wire.EvalInfo); each token is a span with its
// position, so that the tests (and a curious reader's tooltip) can tell
// which is which. The numbers' cells carry their value in full precision
// (data-v) next to the rounded one shown.

// KLScale maps a KL divergence in nats to [0, 1] on a log scale for the
// tint of a token: Lo and below is 0 (untinted), Hi and above is 1.
var KLScale = ErrScale{Lo: 1e-4, Hi: 1}

// klStops are the tint's colours from 0 to 1: white, then orange to red,
// light enough under dark text.
var klStops = [][3]float64{{255, 255, 255}, {253, 212, 158}, {252, 141, 89}, {215, 48, 31}}

// KLColor is the CSS colour of a KL divergence (nats) on KLScale; NaN is
// NAColor.
func KLColor(kl float64) string {
	p := KLScale.Pos(kl)
	if math.IsNaN(p) {
		return NAColor
	}
	x := p * float64(len(klStops)-1)
	i := min(int(x), len(klStops)-2)
	f := x - float64(i)
	a, b := klStops[i], klStops[i+1]
	return fmt.Sprintf("#%02x%02x%02x", int(math.Round(a[0]+f*(b[0]-a[0]))), int(math.Round(a[1]+f*(b[1]-a[1]))), int(math.Round(a[2]+f*(b[2]-a[2]))))
}

// KLLegendGradient is the CSS gradient of the KL tint's legend.
func KLLegendGradient() string {
	var stops []string
	for i := 0; i <= 8; i++ {
		p := float64(i) / 8
		stops = append(stops, KLColor(KLScale.Lo*math.Pow(KLScale.Hi/KLScale.Lo, p))+fmt.Sprintf(" %.1f%%", 100*p))
	}
	return "linear-gradient(to right, " + strings.Join(stops, ", ") + ")"
}

// tokenKL is the KL of the method's prediction of the token at position p
// of the continuation (p > prefix: the prediction after p-1, res.KLs[p-prefix-1]);
// the token at the prefix is predicted by the exact prefill (0).
func tokenKL(res *wire.EvalResult, prefix, p int) float64 {
	if p == prefix {
		return 0
	}
	return float64(res.KLs[p-prefix-1])
}

// inSpans reports whether p lies in one of the spans.
func inSpans(spans []wire.Span, p int) bool {
	for _, a := range spans {
		if p >= a.Start && p < a.End {
			return true
		}
	}
	return false
}

// tokenSpan writes one token as a span: its text escaped (an empty text
// shows nothing; a line break is marked ⏎ by the style sheet, outside the
// text), its classes, style, title and extra attributes.
func tokenSpan(b *strings.Builder, text, class, style, title string, pos int, attrs ...string) {
	b.WriteString(`<span class="tok`)
	if class != "" {
		b.WriteString(" " + class)
	}
	if strings.Contains(text, "\n") {
		b.WriteString(" nl")
	}
	fmt.Fprintf(b, `" data-pos="%d"`, pos)
	for i := 0; i+1 < len(attrs); i += 2 {
		b.WriteString(" " + attrs[i] + `="` + html.EscapeString(attrs[i+1]) + `"`)
	}
	if style != "" {
		b.WriteString(` style="` + style + `"`)
	}
	if title != "" {
		b.WriteString(` title="` + html.EscapeString(title) + `"`)
	}
	b.WriteString(">" + html.EscapeString(text) + "</span>")
}

// SequenceHTML is the prompt's sequence: the prefix (the cache every
// method compresses; needles marked) and, after a bar, the continued
// tokens, each tinted by the KL of res's prediction of it (teacher-forced:
// the full cache and the method read the same tokens), underlined where
// res's most likely token is not the full cache's, answer spans boxed and
// marked missed where res does not predict them. res nil: untinted.
func SequenceHTML(ev *wire.EvalInfo, res *wire.EvalResult) string {
	if ev == nil {
		return ""
	}
	var b strings.Builder
	ids := !ev.Tokenizer
	b.WriteString(`<span class="prefix">`)
	needle := map[int]bool{}
	for _, p := range ev.Needles {
		needle[p] = true
	}
	for p := 0; p < ev.Prefix && p < len(ev.Text); p++ {
		cls := ""
		if needle[p] {
			cls = "needle"
		}
		if ids && p > 0 {
			b.WriteString(" ")
		}
		tokenSpan(&b, ev.Text[p], cls, "", "", p)
	}
	b.WriteString(`</span><span class="cut" title="the cache ends here: every position before is compressed, every one after is continued"></span><span class="cont">`)
	usable := res != nil && res.NA == "" && len(res.KLs) == len(ev.IDs)-ev.Prefix && len(res.Top) == len(res.KLs)+1
	for p := ev.Prefix; p < len(ev.IDs) && p < len(ev.Text); p++ {
		var cls []string
		style, title := "", fmt.Sprintf("position %d", p)
		ans := inSpans(ev.Answers, p)
		if ans {
			cls = append(cls, "answer")
		}
		var attrs []string
		if usable {
			kl := tokenKL(res, ev.Prefix, p)
			if p > ev.Prefix {
				attrs = []string{"data-kl", strconv.FormatFloat(kl, 'g', -1, 64)}
			}
			style = "background:" + KLColor(kl)
			title += fmt.Sprintf(": KL %s nats", Fmt(result.Num(kl)))
			if j := p - ev.Prefix; res.Top[j] != ev.Top[j] {
				cls = append(cls, "disagree")
				title += "; its most likely token is not the full cache's"
			}
			if ans && res.Top[p-ev.Prefix] != ev.IDs[p] {
				cls = append(cls, "missed")
				title += "; not predicted"
			}
		}
		if ids {
			b.WriteString(" ")
		}
		tokenSpan(&b, ev.Text[p], strings.Join(cls, " "), style, title, p, attrs...)
	}
	if usable {
		// The prediction after the last token (of nothing in the sequence).
		kl := float64(res.KLs[len(res.KLs)-1])
		fmt.Fprintf(&b, `<span class="next" style="background:%s" data-kl="%s" title="the prediction after the last token: KL %s nats">→</span>`,
			KLColor(kl), strconv.FormatFloat(kl, 'g', -1, 64), html.EscapeString(Fmt(result.Num(kl))))
	}
	b.WriteString(`</span>`)
	return b.String()
}

// FreeRunHTML is a free run's tokens: those from index diverge on are
// marked (the first with a bar), as the runs of the full cache and of
// the method part there. An empty run says so.
func FreeRunHTML(texts []string, diverge int, ids bool) string {
	if len(texts) == 0 {
		return `<span class="none">(no free run)</span>`
	}
	var b strings.Builder
	for i, t := range texts {
		cls := ""
		switch {
		case i == diverge:
			cls = "diverged first"
		case i > diverge:
			cls = "diverged"
		}
		if ids && i > 0 {
			b.WriteString(" ")
		}
		tokenSpan(&b, t, cls, "", "", i)
	}
	return b.String()
}

// KLStripSVG is the per-position KL of a teacher-forced continuation: one
// bar per prediction (after positions prefix .. N-1), its height on a log
// scale (KLScale) and its colour the tokens' tint; answer positions are
// marked under the strip.
func KLStripSVG(kls []result.Num, prefix int, answers []wire.Span) string {
	const w, h, pb = 900, 64, 14
	n := len(kls)
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" class="klstrip" role="img" aria-label="KL per continued position, log scale from %g to %g nats">`, w, h+pb, KLScale.Lo, KLScale.Hi)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#f7f7f7"/>`, w, h)
	bw := float64(w) / float64(n)
	for i, k := range kls {
		x := float64(i) * bw
		kl := float64(k)
		p := KLScale.Pos(kl)
		if math.IsNaN(p) {
			continue
		}
		bh := math.Max(1, p*h)
		if kl <= 0 {
			bh = 0
		}
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>after position %d: KL %s nats</title></rect>`,
			x+0.1*bw, h-bh, 0.8*bw, bh, KLColor(kl), prefix+i, html.EscapeString(Fmt(k)))
	}
	// The prediction after position p is of the token p+1: answer tokens
	// at a..b are predicted by the bars a-1-prefix .. b-1-prefix.
	for _, a := range answers {
		x0 := float64(a.Start-1-prefix) * bw
		x1 := float64(a.End-1-prefix) * bw
		fmt.Fprintf(&b, `<rect x="%.2f" y="%d" width="%.2f" height="4" fill="#0072B2"><title>predictions of the answer (positions %d to %d)</title></rect>`, x0, h+3, x1-x0, a.Start, a.End-1)
	}
	for _, t := range []float64{1e-4, 1e-2, 1} {
		y := h - KLScale.Pos(t)*h
		fmt.Fprintf(&b, `<line x1="0" x2="%d" y1="%.1f" y2="%.1f" stroke="#bbb" stroke-dasharray="2 3"/><text x="%d" y="%.1f" class="tick">%s</text>`, w, y, y, w-2, math.Max(y+10, 10), strconv.FormatFloat(t, 'g', -1, 64))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// saysRow is one method's end-to-end numbers in the table.
type saysRow struct {
	Method, Note string
	Primary      bool
	Cells        []saysCell
}

// saysCell is a number as shown and in full precision ("" while unknown).
type saysCell struct {
	Name, Text, Value string
}

// saysColumns are the table's metrics, as `haeols eval` names them.
var saysColumns = []string{"used", "peak", "kl", "kl_max", "agree", "ppl_ratio", "diverge", "needle_acc"}

// saysCells are a result's numbers, in saysColumns order.
func saysCells(r *wire.EvalResult, gen int) []saysCell {
	cells := make([]saysCell, len(saysColumns))
	for i, c := range saysColumns {
		cells[i].Name = c
		cells[i].Text = "…"
	}
	if r == nil {
		return cells
	}
	if r.NA != "" {
		for i := range cells {
			cells[i].Text = "n/a"
		}
		return cells
	}
	num := func(x result.Num) (string, string) {
		if math.IsNaN(float64(x)) {
			return "–", "NaN"
		}
		return Fmt(x), strconv.FormatFloat(float64(x), 'g', -1, 64)
	}
	vals := []result.Num{r.Used, r.Peak, r.KL, r.KLMax, r.Agree, r.PPLRatio, r.Diverge, r.NeedleAcc}
	for i := range cells {
		if saysColumns[i] == "diverge" {
			if r.FreePending {
				continue // "…" until the free run comes
			}
			d := int(r.Diverge)
			cells[i].Value = strconv.Itoa(d)
			cells[i].Text = cells[i].Value
			if d >= gen {
				cells[i].Text = "never"
			}
			continue
		}
		cells[i].Text, cells[i].Value = num(vals[i])
	}
	return cells
}
