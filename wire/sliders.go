package wire

import "math"

// Slider is the range of one method parameter a person sets with a slider
// (an <input type="range">): the page's template renders Min, Max and Step
// from it, the URL state clamps the parameter into [Min, Max], and the
// worker prepares the positions next to the current one, which it
// computes as k/PerUnit (division, so that each is the same float64 as the
// slider's value parsed, "0.31" as 31/100).
type Slider struct {
	// Name is the parameter's name: the URL's query key, the input's id
	// and core.Tunes's name.
	Name string  `json:"name"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Step float64 `json:"step"`
}

// Sliders are the app's sliders of the method parameters, Params field by
// field: the ratio (the share of the full cache's memory kept), lambda,
// phi and tau.
var Sliders = []Slider{
	{Name: "ratio", Min: 0.02, Max: 1, Step: 0.01},
	{Name: "lambda", Min: 0, Max: 1, Step: 0.05},
	{Name: "phi", Min: 0, Max: 1, Step: 0.05},
	{Name: "tau", Min: 0.5, Max: 1, Step: 0.005},
}

// SliderOf returns the slider of the parameter name; false when there is
// none.
func SliderOf(name string) (Slider, bool) {
	for _, s := range Sliders {
		if s.Name == name {
			return s, true
		}
	}
	return Slider{}, false
}

// RatioSlider is the slider of the ratio.
var RatioSlider, _ = SliderOf("ratio")

// PerUnit is the number of slider steps per unit of the parameter, 1/Step
// (a whole number for every slider).
func (s Slider) PerUnit() float64 { return math.Round(1 / s.Step) }

// Clamp returns x in [Min, Max].
func (s Slider) Clamp(x float64) float64 { return min(max(x, s.Min), s.Max) }

// Of returns the parameter of p the slider sets (nil for an unknown name).
func (s Slider) Of(p *Params) *float64 {
	switch s.Name {
	case "ratio":
		return &p.Ratio
	case "lambda":
		return &p.Lambda
	case "phi":
		return &p.Phi
	case "tau":
		return &p.Tau
	}
	return nil
}
