package xmath

import (
	"fmt"
	"math"
	"testing"
)

// Both functions are the standard library's portable code, accurate to
// within 1 ulp; compare with math.Exp/math.Log at 2 ulp.
func TestAgainstMath(t *testing.T) {
	ulps := func(a, b float64) float64 {
		if a == b {
			return 0
		}
		return math.Abs(a-b) / math.Abs(math.Nextafter(b, math.Inf(1))-b)
	}
	for x := -700.0; x <= 700; x += 0.37 {
		if u := ulps(Exp(x), math.Exp(x)); u > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v (%v ulp)", x, Exp(x), math.Exp(x), u)
		}
	}
	for x := 1e-300; x < 1e300; x *= 1.7 {
		if u := ulps(Log(x), math.Log(x)); u > 2 {
			t.Fatalf("Log(%v) = %v, math.Log %v (%v ulp)", x, Log(x), math.Log(x), u)
		}
	}
}

func TestSpecialCases(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"Exp(0)", Exp(0), 1},
		{"Exp(-Inf)", Exp(math.Inf(-1)), 0},
		{"Exp(+Inf)", Exp(math.Inf(1)), math.Inf(1)},
		{"Exp(-1000)", Exp(-1000), 0},
		{"Exp(1000)", Exp(1000), math.Inf(1)},
		{"Log(1)", Log(1), 0},
		{"Log(0)", Log(0), math.Inf(-1)},
		{"Log(+Inf)", Log(math.Inf(1)), math.Inf(1)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if !math.IsNaN(Log(-1)) || !math.IsNaN(Exp(math.NaN())) {
		t.Error("NaN cases")
	}
}

func ExampleExp() {
	fmt.Printf("%.6f %.6f\n", Exp(1), Log(math.E))
	// Output: 2.718282 1.000000
}
