package wire

import (
	"math"
	"testing"
)

// TestSliders: every slider sets its own field of Params, has a whole
// number of steps per unit and a whole number of steps from Min to Max,
// and SliderOf finds it by name.
func TestSliders(t *testing.T) {
	seen := map[*float64]string{}
	var p Params
	for _, s := range Sliders {
		f := s.Of(&p)
		if f == nil {
			t.Fatalf("slider %q sets no field of Params", s.Name)
		}
		if other, ok := seen[f]; ok {
			t.Errorf("sliders %q and %q set the same field", s.Name, other)
		}
		seen[f] = s.Name
		if got, ok := SliderOf(s.Name); !ok || got != s {
			t.Errorf("SliderOf(%q) = %+v, %v", s.Name, got, ok)
		}
		if u := s.PerUnit(); math.Abs(u*s.Step-1) > 1e-12 {
			t.Errorf("%s: step %v is not 1/%v", s.Name, s.Step, u)
		}
		if n := (s.Max - s.Min) * s.PerUnit(); math.Abs(n-math.Round(n)) > 1e-9 || s.Min >= s.Max {
			t.Errorf("%s: [%v, %v] is not a whole number of steps of %v", s.Name, s.Min, s.Max, s.Step)
		}
		for _, x := range []float64{s.Min - 1, s.Min, (s.Min + s.Max) / 2, s.Max, s.Max + 1} {
			if c := s.Clamp(x); c < s.Min || c > s.Max || x >= s.Min && x <= s.Max && c != x {
				t.Errorf("%s: Clamp(%v) = %v", s.Name, x, c)
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d sliders, want one for each of the 4 fields of Params", len(seen))
	}
	if _, ok := SliderOf("sinks"); ok {
		t.Error("SliderOf found a slider that does not exist")
	}
	if RatioSlider.Name != "ratio" || RatioSlider.PerUnit() != 100 {
		t.Errorf("RatioSlider = %+v", RatioSlider)
	}
}
