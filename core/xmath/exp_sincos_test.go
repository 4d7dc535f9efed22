package xmath

import (
	"math"
	"testing"
)

// ulps is the distance in units of the last place between two finite
// float64 values of the same sign.
func ulps(a, b float64) uint64 {
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

func TestExp(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    float64
		want float64 // exact special value, or NaN for "compare with math.Exp"
	}{
		{"NaN", math.NaN(), math.NaN()},
		{"+Inf", math.Inf(1), math.Inf(1)},
		{"-Inf", math.Inf(-1), 0},
		{"overflow", 710, math.Inf(1)},
		{"underflow", -746, 0},
		{"zero", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Exp(tc.x)
			if got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("Exp(%v) = %v, want %v", tc.x, got, tc.want)
			}
		})
	}
	for x := -100.0; x <= 100; x += 0.0137 {
		if got, want := Exp(x), math.Exp(x); ulps(got, want) > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v: %d ulps apart", x, got, want, ulps(got, want))
		}
	}
}

func TestSincos(t *testing.T) {
	for _, tc := range []struct {
		name     string
		x        float64
		sin, cos float64
	}{
		{"zero", 0, 0, 1},
		{"NaN", math.NaN(), math.NaN(), math.NaN()},
		{"Inf", math.Inf(1), math.NaN(), math.NaN()},
		{"beyond the reduction", MaxTrigArg, math.NaN(), math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := Sincos(tc.x)
			same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
			if !same(s, tc.sin) || !same(c, tc.cos) {
				t.Errorf("Sincos(%v) = %v, %v, want %v, %v", tc.x, s, c, tc.sin, tc.cos)
			}
		})
	}
	for x := -2000.0; x <= 2000; x += 0.0731 {
		s, c := Sincos(x)
		ws, wc := math.Sincos(x)
		if math.Abs(s-ws) > 1e-15 || math.Abs(c-wc) > 1e-15 {
			t.Fatalf("Sincos(%v) = %v, %v, math.Sincos %v, %v", x, s, c, ws, wc)
		}
	}
}
