package ui

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

// The "What the model says" view of the root component: shown when the
// sample is a model's run of a prompt (wire.Info.Eval). It asks the
// worker for every compared method's end-to-end result at the current
// parameters (wire.OpEval, the primary method first) whenever they
// change, and runs new prompts (wire.OpPrompt) on the model the worker
// keeps.

// modelFile is one of the site's bundled models: a llama2.c checkpoint
// or a GGUF file.
type modelFile struct {
	File, Tokenizer string // relative URLs; Tokenizer "" when it has none
}

// bundledModels reads window.haeolsModels (models.js, written by `make
// web`: the checkpoints of ../shared/models copied under models/ and the
// constructed induction model).
func bundledModels() []modelFile {
	list := js.Global().Get("haeolsModels")
	if list.Type() != js.TypeObject {
		return nil
	}
	var out []modelFile
	for i := 0; i < list.Length(); i++ {
		e := list.Index(i)
		f := e.Get("file")
		if f.Type() != js.TypeString {
			continue
		}
		if kind, err := state.SampleKind(f.String()); err != nil || kind != "model" {
			continue
		}
		m := modelFile{File: f.String()}
		if t := e.Get("tokenizer"); t.Type() == js.TypeString && strings.HasPrefix(t.String(), state.ModelsDir) {
			m.Tokenizer = t.String()
		}
		out = append(out, m)
	}
	return out
}

// source is the view's Source with a bundled model's tokenizer.
func (c *Root) source() *wire.Source {
	src := c.S.Source()
	if src != nil && src.Kind == "llama" {
		for _, m := range c.models {
			if m.File == src.URL {
				src.TokenizerURL = m.Tokenizer
			}
		}
	}
	return src
}

// ModelOptions are the bundled models in the sample picker.
func (c *Root) ModelOptions() []sampleOption {
	var out []sampleOption
	for _, m := range c.models {
		label, title := strings.TrimPrefix(m.File, state.ModelsDir), "a llama2.c checkpoint served with the app, run here on a prompt"
		if strings.HasSuffix(m.File, ".gguf") {
			title = "a GGUF model served with the app, run here on a prompt (its tokenizer is in the file)"
		} else if m.Tokenizer != "" {
			title += " (with its tokenizer: type a prompt)"
		} else {
			title += " (no tokenizer: token ids)"
		}
		out = append(out, sampleOption{Value: m.File, Label: label, Title: title})
	}
	return out
}

// Says reports whether the sample is a model's run: the view is shown.
func (c *Root) Says() bool { return c.Info != nil && c.Info.Eval != nil }

// says is the loaded run (nil when there is none).
func (c *Root) says() *wire.EvalInfo {
	if c.Info == nil {
		return nil
	}
	return c.Info.Eval
}

// evalOf is the end-to-end result of method m at the current parameters,
// nil until it came.
func (c *Root) evalOf(m string) *wire.EvalResult {
	if r := c.evals[m]; r != nil && r.Params == c.S.Params() && r.Recompress == c.S.Recompress {
		return r
	}
	return nil
}

// sendEval asks for every compared method's end-to-end result at the
// current parameters, the primary first (a newer request supersedes it).
func (c *Root) sendEval() {
	ms := append([]string{c.S.Method}, slices.DeleteFunc(slices.Clone(c.S.Methods), func(m string) bool { return m == c.S.Method })...)
	c.evalSentAt = now()
	c.evalID = c.b.send(wire.Request{Op: wire.OpEval, Methods: ms, Params: c.S.Params(), Recompress: c.S.Recompress,
		SentAt: js.Global().Get("performance").Get("timeOrigin").Float() + c.evalSentAt}, nil)
}

// onEval takes one method's end-to-end result.
func (c *Root) onEval(r wire.Response) {
	if r.ID != c.evalID {
		return
	}
	if r.Error != "" {
		c.ErrMsg = "What the model says: " + r.Error
		return
	}
	if r.Eval == nil {
		return
	}
	if c.evals == nil {
		c.evals = map[string]*wire.EvalResult{}
	}
	c.evals[r.Eval.Method] = r.Eval
	if r.Eval.Method == c.S.Method && !r.Eval.FreePending {
		RecordTiming("evalFree", now()-c.evalSentAt)
	}
	if r.Eval.Method == c.S.Method && c.evalTimed != r.ID {
		// The slider move (or other change) to the primary method's
		// end-to-end numbers at this page.
		c.evalTimed = r.ID
		RecordTiming("eval", now()-c.evalSentAt)
		RecordTiming("evalCompute", r.ComputeMs)
		RecordTiming("evalQueued", r.QueuedMs)
	}
}

// runPrompt asks the worker to run the view's prompt on its model; before
// is the view to go back to if it fails.
func (c *Root) runPrompt(before state.State) {
	if c.b == nil || !c.Says() {
		return
	}
	c.promptBefore = before
	c.samplesBefore = c.S.Sample
	c.ErrMsg = ""
	c.Loading = "Running the prompt through " + c.Info.Eval.Model + "…"
	c.Progress = 0
	c.loadID = c.b.send(wire.Request{Op: wire.OpPrompt, Prompt: c.S.PromptRequest()}, nil)
	c.syncURL()
}

// PromptDraft is the prompt box's text.
func (c *Root) PromptDraft() string { return c.draft }

// OnPromptInput keeps what is typed in the prompt box.
func (c *Root) OnPromptInput(e vugu.DOMEvent) { c.draft = e.PropString("target", "value") }

// OnPromptKey runs the prompt on Enter (Shift+Enter is a new line).
func (c *Root) OnPromptKey(e vugu.DOMEvent) {
	if e.PropString("key") == "Enter" && !e.PropBool("shiftKey") {
		e.PreventDefault()
		c.draft = e.PropString("target", "value")
		c.RunPrompt()
	}
}

// RunPrompt runs the prompt box's text (the model's own text from BOS when
// it is empty).
func (c *Root) RunPrompt() {
	before := c.S
	p, _ := state.CleanPrompt(c.draft)
	c.S.Prompt, c.S.Task = p, ""
	c.draft = p
	c.runPrompt(before)
}

// OnPreset runs a task: "passkey" or "copy".
func (c *Root) OnPreset(task string) {
	before := c.S
	c.S.Task = task
	c.runPrompt(before)
}

// OnDepth sets the pass key's depth and runs the pass-key task.
func (c *Root) OnDepth(e vugu.DOMEvent) {
	x, err := strconv.ParseFloat(e.PropString("target", "value"), 64)
	if err != nil || x < 0 || x > 1 {
		return
	}
	before := c.S
	c.S.Depth, c.S.Task = x, "passkey"
	c.runPrompt(before)
}

// DepthOptions are the pass-key depths offered, with the view's own
// depth among them when a link names another (depth=0.3).
func (c *Root) DepthOptions() []sampleOption {
	var out []sampleOption
	depths := []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1}
	if !slices.Contains(depths, c.S.Depth) && c.S.Depth >= 0 && c.S.Depth <= 1 {
		depths = append(depths, c.S.Depth)
		slices.Sort(depths)
	}
	for _, d := range depths {
		v := state.Fmt(d)
		out = append(out, sampleOption{Value: v, Label: fmt.Sprintf("%.0f%%", 100*d), Title: "where the key sits in the filler: 0% at its start, 100% at its end"})
	}
	return out
}

// RecompressOptions are the decoding choices: compress once, or
// re-compress every K tokens.
func (c *Root) RecompressOptions() []sampleOption {
	var out []sampleOption
	for _, k := range wire.Recompressions {
		o := sampleOption{Value: strconv.Itoa(k), Label: "once", Title: "compress the prefix once; the continuation's exact keys and values add to it"}
		if k > 0 {
			o.Label = fmt.Sprintf("every %d tokens", k)
			o.Title = fmt.Sprintf("re-compress the whole cache every %d decoded tokens, within the first compression's memory", k)
		}
		out = append(out, o)
	}
	return out
}

// RecompressValue is the decoding choice as the picker's value.
func (c *Root) RecompressValue() string { return strconv.Itoa(c.S.Recompress) }

// OnRecompress sets how often the cache is re-compressed while decoding.
func (c *Root) OnRecompress(e vugu.DOMEvent) {
	k, err := strconv.Atoi(e.PropString("target", "value"))
	if err != nil || k == c.S.Recompress || !slices.Contains(wire.Recompressions, k) {
		return
	}
	c.S.Recompress = k
	c.refresh()
}

// Depth is the pass-key depth as the picker's value.
func (c *Root) Depth() string { return state.Fmt(c.S.Depth) }

// TaskClass marks the preset button of the running task.
func (c *Root) TaskClass(task string) string {
	if c.S.Task == task {
		return "preset on"
	}
	return "preset"
}

// HasTokenizer reports whether the model reads text prompts.
func (c *Root) HasTokenizer() bool { ev := c.says(); return ev != nil && ev.Tokenizer }

// SaysAbout is one line on the run: its length, split and task.
func (c *Root) SaysAbout() string {
	ev := c.says()
	if ev == nil {
		return ""
	}
	n := len(ev.IDs)
	s := fmt.Sprintf("%s: %d tokens. The first %d are the cache every method compresses (every layer and KV head); the last %d are continued teacher-forced; then %d are generated freely after the cache.",
		ev.Model, n, ev.Prefix, n-ev.Prefix, len(ev.Free))
	switch ev.Prompt.Task {
	case "passkey":
		s += fmt.Sprintf(" Pass key %s planted at %.0f%% of the filler; the answer is the key's digits at the end.", ev.Key, 100*ev.Prompt.Depth)
	case "copy":
		s += " Copy task: a list of words, filler, then the list again (each word but the first an answer)."
	default:
		if ev.Tokenizer && ev.Prompt.Text == "" {
			s += " The prompt is empty: the text is the model's own, from BOS."
		} else if !ev.Tokenizer {
			s += " This model has no tokenizer: tokens are ids, the text the model's own from BOS."
		}
	}
	if len(ev.Found) > 0 {
		f := 0
		for _, ok := range ev.Found {
			if ok {
				f++
			}
		}
		s += fmt.Sprintf(" The full cache itself predicts %d of %d answer spans.", f, len(ev.Found))
	}
	if k := c.S.Recompress; k > 0 {
		s += fmt.Sprintf(" While decoding, the cache is re-compressed every %d tokens into the first compression's memory", k)
		if r := c.evalOf(c.S.Method); r != nil && r.NA == "" {
			s += fmt.Sprintf(": %s re-compressed %d times and never held more than %s of the full prefix cache (peak; used %s)", c.S.Method, r.Rounds, Fmt(r.Peak), Fmt(r.Used))
		}
		s += "."
	}
	return s
}

// SaysSequence is the sequence, its continued tokens tinted by the
// primary method's KL.
func (c *Root) SaysSequence() vugu.HTML {
	return vugu.HTML(SequenceHTML(c.says(), c.evalOf(c.S.Method)))
}

// SaysStrip is the primary method's per-position KL strip.
func (c *Root) SaysStrip() vugu.HTML {
	ev, r := c.says(), c.evalOf(c.S.Method)
	if ev == nil || r == nil || r.NA != "" {
		return ""
	}
	return vugu.HTML(KLStripSVG(r.KLs, ev.Prefix, ev.Answers))
}

// SaysFull is the full cache's free run, marked from where the primary
// method's parts from it.
func (c *Root) SaysFull() vugu.HTML {
	ev := c.says()
	if ev == nil {
		return ""
	}
	div := len(ev.Free)
	if r := c.evalOf(c.S.Method); r != nil && r.NA == "" && !r.FreePending {
		div = int(r.Diverge)
	}
	return vugu.HTML(FreeRunHTML(ev.FreeText, div, !ev.Tokenizer))
}

// SaysMethod is the primary method's free run.
func (c *Root) SaysMethod() vugu.HTML {
	ev, r := c.says(), c.evalOf(c.S.Method)
	switch {
	case ev == nil:
		return ""
	case r == nil:
		return `<span class="none">computing…</span>`
	case r.NA != "":
		return vugu.HTML(`<span class="none">n/a: ` + html.EscapeString(r.NA) + `</span>`)
	case r.FreePending:
		return `<span class="none">generating…</span>`
	}
	return vugu.HTML(FreeRunHTML(r.FreeText, int(r.Diverge), !ev.Tokenizer))
}

// SaysDiverge says where the free runs part.
func (c *Root) SaysDiverge() string {
	ev, r := c.says(), c.evalOf(c.S.Method)
	switch {
	case ev == nil || r == nil || r.NA != "" || r.FreePending:
		return ""
	case int(r.Diverge) >= len(ev.Free):
		return fmt.Sprintf("the same %d tokens", len(ev.Free))
	}
	return fmt.Sprintf("diverges at token %d of %d", int(r.Diverge)+1, len(ev.Free))
}

// SaysRows are the compared methods' end-to-end numbers, the primary
// first.
func (c *Root) SaysRows() []saysRow {
	ev := c.says()
	if ev == nil {
		return nil
	}
	ms := append([]string{c.S.Method}, slices.DeleteFunc(slices.Clone(c.S.Methods), func(m string) bool { return m == c.S.Method })...)
	var out []saysRow
	for _, m := range ms {
		r := c.evalOf(m)
		row := saysRow{Method: m, Primary: m == c.S.Method, Cells: saysCells(r, len(ev.Free))}
		if r != nil && r.NA != "" {
			row.Note = r.NA
		}
		out = append(out, row)
	}
	return out
}

// SaysFullAcc is the full cache's own needle_acc (what a method can at
// best keep), "" without answers.
func (c *Root) SaysFullAcc() string {
	ev := c.says()
	if ev == nil || math.IsNaN(float64(ev.NeedleAcc)) {
		return ""
	}
	return fmt.Sprintf("The full cache's needle_acc: %s.", Fmt(ev.NeedleAcc))
}

// KLLegendStyle is the KL tint legend's background.
func (c *Root) KLLegendStyle() string { return "background:" + KLLegendGradient() }

// PromptNote says what the prompt box does for this model.
func (c *Root) PromptNote() string {
	if c.HasTokenizer() {
		return "Enter runs it (Shift+Enter: a new line); empty: the model's own text from BOS."
	}
	return "This model has no tokenizer: the prompt is BOS and the model's own text (token ids); the presets build their tasks from ids."
}

// SaysColumns are the table's metric names (those of `haeols eval`).
func (c *Root) SaysColumns() []string { return saysColumns }
