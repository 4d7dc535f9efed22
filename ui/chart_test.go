package ui

import (
	"math"
	"slices"
	"testing"
)

func TestPatchOps(t *testing.T) {
	chart := func(edit func(c *svgChart)) *svgChart {
		c := &svgChart{Label: "profile"}
		c.add("line", "", "", "x1", "0", "x2", "10")
		c.add("rect", "", "probe 0: 0.1", "x", "1", "height", "5")
		c.add("text", "0.30", "", "x", "3")
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, tc := range []struct {
		name      string
		edit      func(c *svgChart)
		patchable bool
		ops       []string
	}{
		{"same", nil, true, nil},
		{"attribute", func(c *svgChart) { c.Elems[1].Attrs[1].V = "7" }, true, []string{"a", "1", "height", "7"}},
		{"tooltip and text", func(c *svgChart) { c.Elems[1].Title = "probe 0: 0.2"; c.Elems[2].Text = "0.20" },
			true, []string{"t", "1", "probe 0: 0.2", "x", "2", "0.20"}},
		{"two writes to one element", func(c *svgChart) { c.Elems[0].Attrs[0].V = "1"; c.Elems[0].Attrs[1].V = "9" },
			true, []string{"a", "0", "x1", "1", "a", "0", "x2", "9"}},
		{"another attribute", func(c *svgChart) { c.Elems[0].Attrs[1].K = "y2" }, false, nil},
		{"tooltip gone", func(c *svgChart) { c.Elems[1].Title = "" }, false, nil},
		{"one element more", func(c *svgChart) { c.add("rect", "", "", "x", "2", "height", "1") }, false, nil},
		{"another label", func(c *svgChart) { c.Label = "curve" }, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, c := chart(nil), chart(tc.edit)
			if got := c.patchable(old); got != tc.patchable {
				t.Fatalf("patchable = %v, want %v", got, tc.patchable)
			}
			if !tc.patchable {
				return
			}
			if got := c.patchOps(old); !slices.Equal(got, tc.ops) {
				t.Errorf("patchOps = %q, want %q", got, tc.ops)
			}
		})
	}
}

// TestStandInCurve: the rehearsal's stand-in curve has the worker's shape
// (every method at every curve ratio, finite errors) and its charts at two
// ratios patch into each other with writes, as a drag's do.
func TestStandInCurve(t *testing.T) {
	methods := []string{"hae-ols", "topk", "snapkv"}
	cv := standInCurve(methods)
	if len(cv.Err) != len(methods) {
		t.Fatalf("%d error rows, want %d", len(cv.Err), len(methods))
	}
	for i, row := range cv.Err {
		if len(row) != len(CurveRatios()) {
			t.Fatalf("method %d: %d errors, want %d", i, len(row), len(CurveRatios()))
		}
		for j, e := range row {
			if v := float64(e); !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("method %d ratio %d: error %v", i, j, v)
			}
		}
	}
	a, b := curveChart(cv, 0.3, "hae-ols"), curveChart(cv, 0.29, "hae-ols")
	if !b.patchable(a) || len(b.patchOps(a)) == 0 {
		t.Fatal("the stand-in's charts at 0.30 and 0.29 do not patch into each other")
	}
}
