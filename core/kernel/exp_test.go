package kernel

import (
	"math"
	"testing"
)

// ulps returns |got - want| in units of the float32 spacing at want.
func ulps(got float32, want float64) float64 {
	w := float32(math.Abs(want))
	sp := float64(math.Nextafter32(w, float32(math.Inf(1))) - w)
	return math.Abs(float64(got)-want) / sp
}

// gridBits calls f for float32 values from lo to hi (same sign, |lo| <= |hi|)
// stepping the bit pattern by stride, plus hi itself.
func gridBits(lo, hi float32, stride uint32, f func(x float32)) {
	a, b := math.Float32bits(lo), math.Float32bits(hi)
	for x := a; x < b; x += stride {
		f(math.Float32frombits(x))
	}
	f(hi)
}

// TestExp32Accuracy checks the documented accuracy of Exp32 against math.Exp
// on about 2.3 million arguments spread over the whole range (every 1021st
// float32), and on every float32 in [-1e-3, 1e-3] near a power of two.
func TestExp32Accuracy(t *testing.T) {
	var maxRel, maxUlp, maxDen float64
	check := func(x float32) {
		got, want := Exp32(x), math.Exp(float64(x))
		if want < minNorm { // denormal result: absolute error
			maxDen = max(maxDen, math.Abs(float64(got)-want))
			return
		}
		maxRel = max(maxRel, math.Abs(float64(got)-want)/want)
		maxUlp = max(maxUlp, ulps(got, want))
	}
	stride := uint32(1021)
	if testing.Short() {
		stride = 10007
	}
	gridBits(0, expMax, stride, check)
	gridBits(float32(math.Copysign(0, -1)), expMin, stride, check)
	for _, x := range []float32{1e-3, -1e-3, 0.5, -0.5, 0.3465, -0.3466} {
		gridBits(x, math.Nextafter32(x, 0), 1, check)
		for y, i := x, 0; i < 1000; i++ {
			y = math.Nextafter32(y, 0)
			check(y)
		}
	}
	t.Logf("Exp32: max relative error %.3g, %.3f ulp; denormal results max absolute error %.3g", maxRel, maxUlp, maxDen)
	if maxRel > epsExp || maxUlp >= 1 || maxDen > 0x1p-149 {
		t.Errorf("Exp32: relative error %.3g (limit %g), %.3f ulp (limit 1), denormal %.3g (limit 2^-149)", maxRel, epsExp, maxUlp, maxDen)
	}
}

// TestLog32Accuracy checks Log32 against math.Log on every 2039th positive
// float32 (denormals included, about 1 million points) and on every float32
// within 2000 ulp of 1, where ln x is near 0.
func TestLog32Accuracy(t *testing.T) {
	var maxRel, maxUlp float64
	check := func(x float32) {
		got, want := Log32(x), math.Log(float64(x))
		if want == 0 {
			if got != 0 {
				t.Errorf("Log32(%g) = %g, want 0", x, got)
			}
			return
		}
		maxRel = max(maxRel, math.Abs(float64(got)-want)/math.Abs(want))
		maxUlp = max(maxUlp, ulps(got, want))
	}
	stride := uint32(2039)
	if testing.Short() {
		stride = 20011
	}
	gridBits(math.SmallestNonzeroFloat32, math.MaxFloat32, stride, check)
	for y, i := float32(1), 0; i < 2000; i++ {
		check(y)
		check(math.Float32frombits(math.Float32bits(1) - uint32(i)))
		y = math.Nextafter32(y, 2)
	}
	t.Logf("Log32: max relative error %.3g, %.3f ulp", maxRel, maxUlp)
	if maxRel > epsLog || maxUlp >= 1 {
		t.Errorf("Log32: relative error %.3g (limit %g), %.3f ulp (limit 1)", maxRel, epsLog, maxUlp)
	}
}

func TestExp32Special(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, tc := range []struct {
		x, want float32
	}{
		{0, 1},
		{float32(math.Copysign(0, -1)), 1},
		{float32(math.Inf(-1)), 0},
		{-1e30, 0},
		{-200, 0},
		{-103.98, 0},
		{expMin, 0},
		{-103.9, math.Float32frombits(1)}, // e^-103.9 = 0.54 * 2^-149 rounds up
		{-103.28, math.Float32frombits(1)},
		{-100, exp64(-100)},
		{-87.5, exp64(-87.5)},
		{inf, inf},
		{89, inf},
		{1e30, inf},
		{expMax, exp64(expMax)},
		{1, float32(math.E)},
		{nan, nan},
	} {
		got := Exp32(tc.x)
		if got != tc.want && !(got != got && tc.want != tc.want) {
			t.Errorf("Exp32(%g) = %g (%#x), want %g (%#x)", tc.x, got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
		}
	}
	// Clean underflow: no NaN and monotone non-increasing towards -Inf.
	prev := Exp32(-80)
	for x := float32(-80); x > -110; x -= 0.01 {
		e := Exp32(x)
		if e != e || e < 0 || e > prev {
			t.Fatalf("Exp32(%g) = %g after %g", x, e, prev)
		}
		prev = e
	}
}

// exp64 is e**x for the float32 x, rounded to float32.
func exp64(x float32) float32 {
	return float32(math.Exp(float64(x)))
}

func TestLog32Special(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		x, want float32
	}{
		{1, 0},
		{0, float32(math.Inf(-1))},
		{float32(math.Copysign(0, -1)), float32(math.Inf(-1))},
		{inf, inf},
		{math.SmallestNonzeroFloat32, float32(math.Log(math.SmallestNonzeroFloat32))},
		{math.MaxFloat32, float32(math.Log(math.MaxFloat32))},
		{2, float32(math.Ln2)},
		{float32(math.E), 1},
	} {
		if got := Log32(tc.x); got != tc.want {
			t.Errorf("Log32(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
	for _, x := range []float32{-1, float32(math.Inf(-1)), float32(math.NaN()), -math.SmallestNonzeroFloat32} {
		if got := Log32(x); got == got {
			t.Errorf("Log32(%g) = %g, want NaN", x, got)
		}
	}
}

// TestElementwiseMatch checks the written-out copies of Exp32 and Log32 in
// ExpShift and xlogxTo bit for bit against the functions, over the whole
// range of arguments (every 4099th float32 bit pattern, both signs, and the
// special values).
func TestElementwiseMatch(t *testing.T) {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		xs = append(xs, math.Float32frombits(uint32(b)))
	}
	xs = append(xs, 0, expFastMin, expFastMax, math.Nextafter32(expFastMin, -100), math.Nextafter32(expFastMax, 100),
		expMin, expMax, minNorm, math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
	e := make([]float32, len(xs))
	for _, mx := range []float32{0, 3, -50} {
		sum := ExpShift(e, xs, mx)
		var want float32
		for j, x := range xs {
			w := Exp32(x - mx)
			want += w
			if !sameFloat(e[j], w) {
				t.Fatalf("ExpShift(%g - %g) = %g (%#x), Exp32 %g (%#x)", x, mx, e[j], math.Float32bits(e[j]), w, math.Float32bits(w))
			}
		}
		if !sameFloat(sum, want) {
			t.Fatalf("ExpShift sum %g, want %g", sum, want)
		}
	}
	xlogxTo(e, xs)
	for j, x := range xs {
		if w := xlogx(x); !sameFloat(e[j], w) {
			t.Fatalf("xlogxTo(%g) = %g (%#x), x*Log32(x) %g (%#x)", x, e[j], math.Float32bits(e[j]), w, math.Float32bits(w))
		}
	}
}
