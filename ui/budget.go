package ui

import (
	"fmt"
	"slices"

	"github.com/haeols/haeols/wire"
	"github.com/vugu/vugu"
)

// budgetTitles say what each budget policy does (core.Budgets).
var budgetTitles = map[string]string{
	"uniform": "every KV head keeps the ratio",
	"pyramid": "more memory for lower layers, less for higher ones (PyramidKV)",
	"adakv":   "each layer's memory shared among its KV heads by attention mass (AdaKV)",
	"hae":     "memory goes where the method's calibration error falls fastest per slot",
}

// BudgetOptions are the budget policies in the picker.
func (c *Root) BudgetOptions() []sampleOption {
	var out []sampleOption
	for _, b := range wire.Budgets {
		out = append(out, sampleOption{Value: b, Label: b, Title: budgetTitles[b]})
	}
	return out
}

// OnBudget sets the budget policy.
func (c *Root) OnBudget(e vugu.DOMEvent) {
	v := e.PropString("target", "value")
	if v == c.S.Budget || !slices.Contains(wire.Budgets, v) {
		return
	}
	c.S.Budget = v
	c.refresh()
}

// ShowShares reports whether the grid shows each head's share: a
// policy other than uniform.
func (c *Root) ShowShares() bool { return c.S.Budget != wire.Budgets[0] && c.Info != nil }

// headShare is head (l, h)'s asked ratio in the primary grid (NaN before
// its cell came).
func (c *Root) headShare(l, h int) (float64, bool) {
	g := c.primaryGrid()
	if g == nil || g.params != c.S.Params() {
		return 0, false
	}
	m := g.cells[l*c.Info.Heads+h]
	if m.Method == "" || !(m.Asked > 0) {
		return 0, false
	}
	return m.Asked, true
}

// ShareStyle is the bar under a cell: its width the head's share of the
// memory, full width at twice the mean (the total ratio), a tick at the
// mean.
func (c *Root) ShareStyle(l, h int) string {
	x, ok := c.headShare(l, h)
	if !ok {
		return "width:0"
	}
	w := min(100, 50*x/c.S.Ratio)
	return fmt.Sprintf("width:%.1f%%", w)
}

// ShareTitle is a cell bar's tooltip.
func (c *Root) ShareTitle(l, h int) string {
	x, ok := c.headShare(l, h)
	if !ok {
		return ""
	}
	return fmt.Sprintf("layer %d head %d keeps %.1f%% of its cache (%.2f× the mean %.0f%%)", l, h, 100*x, x/c.S.Ratio, 100*c.S.Ratio)
}

// BudgetNote says what the bars under the cells are.
func (c *Root) BudgetNote() string {
	return fmt.Sprintf("Budget %s: %s. The bar under each head is its share of the memory (half width: the mean, %.0f%%); all heads together keep exactly the total.",
		c.S.Budget, budgetTitles[c.S.Budget], 100*c.S.Ratio)
}
