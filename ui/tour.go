package ui

import (
	"fmt"
	"math"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/ui/state"
)

// The guided tour: five steps over the views the app already has, from
// one head's attention to what the model says, each with its one control
// and a sentence built from the numbers on screen (tour=N in a link).

// tourStep is one step of the tour.
type tourStep struct {
	Title   string
	Control string // the step's control: "head", or a slider's name
	View    string // the element the step scrolls to
}

// tourSteps are the steps, in the order of state.TourPanels.
var tourSteps = []tourStep{
	{"Attention of one head", "head", "heatmap-host"},
	{"What entropy selection keeps", "ratio", "heatmap-host"},
	{"The least-squares fit", "phi", "heatmap-host"},
	{"The SVD stage", "tau", "explain"},
	{"What the model then says", "ratio", "says"},
}

// TourModel is the model the last step opens when the sample is not a
// model's run: the constructed induction model `make web` bundles, on the
// pass key.
const TourModel = state.ModelsDir + "induction.gguf"

// Touring reports whether the tour is shown.
func (c *Root) Touring() bool { return c.S.Tour > 0 && c.S.Tour <= len(tourSteps) }

// step is the current step (the first when none).
func (c *Root) step() tourStep { return tourSteps[max(1, min(c.S.Tour, len(tourSteps)))-1] }

// StartTour opens the tour at its first step with HAE-OLS as the primary
// method.
func (c *Root) StartTour() {
	if c.S.Method != "hae-ols" {
		c.S.Method = "hae-ols"
		if !c.S.Compared("hae-ols") {
			c.S.Methods = append([]string{"hae-ols"}, c.S.Methods...)
		}
	}
	c.TourGo(1)
}

// EndTour closes the tour; the view stays as it is.
func (c *Root) EndTour() {
	c.S.Tour = 0
	c.refresh()
}

// TourGo shows step k (1-based): its heatmap panel, its view scrolled
// into sight.
func (c *Root) TourGo(k int) {
	if k < 1 || k > len(tourSteps) {
		return
	}
	c.S.Tour, c.S.Panel = k, state.TourPanels[k-1]
	c.refresh()
	view := tourSteps[k-1].View
	go func() {
		// After the render that shows the step.
		c.Env.Lock()
		defer c.Env.UnlockOnly()
		if el := js.Global().Get("document").Call("getElementById", view); el.Truthy() {
			el.Call("scrollIntoView", map[string]any{"block": "nearest", "behavior": "smooth"})
		}
	}()
}

// TourNext and TourPrev move one step; Next on the last step ends the tour.
func (c *Root) TourNext() {
	if c.S.Tour >= len(tourSteps) {
		c.EndTour()
		return
	}
	c.TourGo(c.S.Tour + 1)
}

// TourPrev goes one step back.
func (c *Root) TourPrev() { c.TourGo(c.S.Tour - 1) }

// NextLabel is the label of the tour's forward button.
func (c *Root) NextLabel() string {
	if c.S.Tour >= len(tourSteps) {
		return "Finish"
	}
	return "Next →"
}

// tourDot is one step's button in the tour's header.
type tourDot struct {
	Step         int
	Label, Title string
	Class        string
}

// TourDots are the steps' buttons.
func (c *Root) TourDots() []tourDot {
	out := make([]tourDot, len(tourSteps))
	for i, s := range tourSteps {
		out[i] = tourDot{Step: i + 1, Label: fmt.Sprint(i + 1), Title: s.Title, Class: "dot"}
		if i+1 == c.S.Tour {
			out[i].Class = "dot on"
		}
	}
	return out
}

// TourTitle is "Step N of 5: title".
func (c *Root) TourTitle() string {
	return fmt.Sprintf("Guided tour, step %d of %d: %s", c.S.Tour, len(tourSteps), c.step().Title)
}

// TourControl reports whether the step's control is name.
func (c *Root) TourControl(name string) bool { return c.Touring() && c.step().Control == name }

// TourHeads are the heads of the sample for the first step's picker.
func (c *Root) TourHeads() []sampleOption {
	if c.Info == nil {
		return nil
	}
	var out []sampleOption
	for l := 0; l < c.Info.Layers; l++ {
		for h := 0; h < c.Info.Heads; h++ {
			out = append(out, sampleOption{Value: fmt.Sprintf("%d.%d", l, h), Label: fmt.Sprintf("layer %d, head %d", l, h)})
		}
	}
	return out
}

// TourHead is the selected head as the picker's value.
func (c *Root) TourHead() string { return fmt.Sprintf("%d.%d", c.S.Layer, c.S.Head) }

// OnTourHead selects the head the picker names.
func (c *Root) OnTourHead(e vugu.DOMEvent) {
	var l, h int
	if _, err := fmt.Sscanf(e.PropString("target", "value"), "%d.%d", &l, &h); err != nil || c.Info == nil ||
		l < 0 || l >= c.Info.Layers || h < 0 || h >= c.Info.Heads {
		return
	}
	c.OnCell(l, h)
}

// TourNeedsModel reports whether the last step waits for a model's run.
func (c *Root) TourNeedsModel() bool { return c.S.Tour == len(tourSteps) && !c.Says() }

// OpenTourModel opens TourModel on the pass key (the key at 30 % of the
// filler), staying on the tour's last step.
func (c *Root) OpenTourModel() {
	if c.b == nil || c.Loading != "" {
		return
	}
	cur := c.S
	c.S.Sample, c.S.Task, c.S.Depth = TourModel, "passkey", 0.3
	src := c.source()
	c.S = cur
	c.S.Task, c.S.Depth = "passkey", 0.3
	c.S.Layer, c.S.Head = 0, 0 // the model's own heads, not the sample's
	c.ErrMsg = ""
	c.load(src, js.Undefined(), TourModel)
	c.syncURL()
}

// TourText is the step's sentence, built from the numbers on screen.
func (c *Root) TourText() string {
	if !c.Touring() {
		return ""
	}
	if c.S.Tour == len(tourSteps) {
		return c.tourSays()
	}
	hr, in, at := c.head, c.Info, c.headFor
	if in == nil || hr == nil || at.layer != c.S.Layer || at.head != c.S.Head || at.method != c.S.Method {
		// The numbers shown are another head's until its answer comes.
		return "Waiting for this head's numbers…"
	}
	// The sentence names the parameters its numbers are for: while a
	// slider moves they are the previous answer's.
	p := at.p
	n := in.Prefix
	where := fmt.Sprintf("layer %d, head %d", at.layer, at.head)
	if hr.NA != "" {
		return fmt.Sprintf("%s cannot run on %s at this ratio: %s. Move the ratio up.", hr.Method, where, hr.NA)
	}
	m, st := hr.Metrics, hr.Stages
	slots := 0
	if hr.FullBits > 0 {
		slots = int(hr.BudgetBits * int64(n) / hr.FullBits)
	}
	switch c.S.Tour {
	case 1:
		return fmt.Sprintf("The heatmap is the attention of %s: one row per query, one column per cached key (%d of them). "+
			"Its queries spread their attention with a mean row entropy of %s (0 %%: each query on a single key; 100 %%: evenly over all keys). "+
			"Pick another head: the sharper a head, the fewer keys it needs kept.",
			where, n, Pct(m.RowEntropy))
	case 2:
		s := fmt.Sprintf("At ratio %s this head may keep %d of its %d tokens' worth of memory. %s keeps %d exact: %d sinks, %d recent and %d anchors, "+
			"the keys with the most attention mass, low key entropy weighing %s (λ). The compressed map greys what it dropped",
			Fmt2(p.Ratio), slots, n, hr.Method, st.Sinks+st.Recent+st.Anchors, st.Sinks, st.Recent, st.Anchors, Fmt2(p.Lambda))
		if st.Bin > 0 {
			s += fmt.Sprintf("; the other %d tokens go to the recycle bin", st.Bin)
		}
		return s + fmt.Sprintf(". Held-out error: %s. Move the ratio.", Pct(m.Err))
	case 3:
		if st.Summaries+st.Dropped == 0 {
			return fmt.Sprintf("With φ = %s no slot goes to summaries: the %d binned tokens are simply dropped, and the held-out error is %s. Move φ up to fit summary tokens in their place.",
				Fmt2(p.Phi), st.Bin, Pct(m.Err))
		}
		s := fmt.Sprintf("φ = %s spends that share of the free slots on summaries: %d summary tokens, fitted by least squares so that the calibration queries see the %d binned tokens' attention mass and values",
			Fmt2(p.Phi), st.Summaries, st.Bin)
		if !math.IsNaN(st.FitResidual) && st.FitResidual > 0 {
			s += fmt.Sprintf(" (relative residual %s)", Pct(st.FitResidual))
		}
		return s + fmt.Sprintf(". The difference map shows what is left: held-out error %s, %s on the calibration queries. Move φ: 0 drops the bin instead.", Pct(m.Err), Pct(m.ErrCal))
	case 4:
		if st.Summaries == 0 {
			return fmt.Sprintf("There are no summaries to factor at this φ and ratio (held-out error %s): go back a step and give them a share.", Pct(m.Err))
		}
		if p.Tau >= 1 || (st.RankK == 0 && st.RankV == 0) {
			return fmt.Sprintf("τ = %s: the SVD stage is off and the %d summaries are stored dense (%s of the head's %s). "+
				"Move τ below 1 to store their keys and values as truncated SVDs keeping that share of their energy: the slots it frees buy exact anchors back. Held-out error now %s.",
				Fmt2(p.Tau), st.Summaries, bits(st.SummaryBits), bits(hr.BudgetBits), Pct(m.Err))
		}
		s := fmt.Sprintf("τ = %s: the %d summaries' keys are stored %s and their values %s, %s in all",
			Fmt2(p.Tau), st.Summaries, rankText(st.RankK, st.EnergyK), rankText(st.RankV, st.EnergyV), bits(st.SummaryBits))
		if st.ExtraAnchors > 0 {
			s += fmt.Sprintf("; the slots freed buy %s", plural(st.ExtraAnchors, "more exact anchor", "more exact anchors"))
		}
		return s + fmt.Sprintf(". Held-out error %s (τ = 1, the default, turns the stage off).", Pct(m.Err))
	}
	return ""
}

// tourSays is the last step's sentence: what the model says with the
// primary method's cache against the full cache's.
func (c *Root) tourSays() string {
	ev := c.says()
	if ev == nil {
		return "The last step runs a model: open one to see whether it still answers with every layer's cache compressed."
	}
	r := c.evalOf(c.S.Method)
	if r == nil {
		return "Waiting for the model's answer…"
	}
	what := fmt.Sprintf("With %s compressing every layer's and KV head's cache to %s", c.S.Method, Fmt2(c.S.Ratio))
	if r.NA != "" {
		return what + ": n/a, " + r.NA + ". Move the ratio."
	}
	s := what + fmt.Sprintf(", the next-token distributions differ from the full cache's by %s nats (KL, mean) and agree on the most likely token at %s of the continued positions",
		Fmt(r.KL), Pct(float64(r.Agree)))
	if len(ev.Found) > 0 && !math.IsNaN(float64(r.NeedleAcc)) {
		switch acc := float64(r.NeedleAcc); acc {
		case 1:
			s += "; it still predicts every answer token"
		case 0:
			s += "; it loses the answer"
		default:
			s += fmt.Sprintf("; it predicts %s of the answers", Pct(acc))
		}
		s += fmt.Sprintf(" (needle_acc %s; the full cache's %s)", Fmt(r.NeedleAcc), Fmt(ev.NeedleAcc))
	}
	if !r.FreePending {
		if d := int(r.Diverge); d >= len(ev.Free) {
			s += fmt.Sprintf(", and its free run equals the full cache's for all %d tokens", len(ev.Free))
		} else {
			s += fmt.Sprintf(", and its free run parts from the full cache's at token %d of %d", d+1, len(ev.Free))
		}
	}
	if ev.Key != "" {
		s += fmt.Sprintf(". The key is %s", strings.TrimSpace(ev.Key))
	}
	return s + ". Move the ratio and watch the answer."
}
