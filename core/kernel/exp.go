package kernel

import "math"

// Constants of Exp32 and Log32. ln2Hi has only 9 significant bits, so n*ln2Hi
// is exact for every exponent n that occurs (|n| <= 150); ln2Hi+ln2Lo is ln 2
// to about 2^-33 (the Cody-Waite split of Cephes).
const (
	log2e  = 1.44269504088896341
	ln2Hi  = 0.693359375
	ln2Lo  = -2.12194440e-4
	magic  = 12582912   // 1.5 * 2^23: adding it rounds a float32 to an integer
	expMax = 88.72283   // above ln(MaxFloat32) (88.72283906) Exp32 is +Inf
	expMin = -103.97208 // at and below ln(2^-150) Exp32 is 0
	sqrt2  = 1.41421356
	// In [expFastMin, expFastMax] the exponent n = round(x/ln2) is within
	// [-126, 126], so e**x is normal and 2**n a float32.
	expFastMin = -87
	expFastMax = 87
	minNorm    = 0x1p-126
)

// Exp32 returns e**x in float32 arithmetic, with the same bits on every
// platform (no fused multiply-add, no table, no math.Exp).
//
// Accuracy, checked against math.Exp on a grid of 2.3 million arguments
// (TestExp32Accuracy): wherever the result is a normal float32, x in
// [-87.33, 88.72], the relative error is below 1.2e-7 and under one ulp
// (measured maximum 7.8e-8, 0.92 ulp); for x in [-103.97, -87.33] the result
// is gradually underflowed (denormal) with absolute error below 2^-149.
// Exp32(x) is exactly 0 for x <= -103.97208 and for x = -Inf, +Inf above
// 88.72283, NaN only for a NaN argument, and Exp32(0) = 1.
//
// Method (Cephes expf): x = n ln2 + r with n = round(x/ln2) and a two-part
// ln 2, e**r by a degree-7 polynomial on |r| <= ln2/2, then an exact scaling
// by 2**n (in two steps when 2**n alone would overflow or underflow).
func Exp32(x float32) float32 {
	if !(x > expMin) {
		if x != x {
			return x
		}
		return 0
	}
	if x > expMax {
		return float32(math.Inf(1))
	}
	if x < expFastMin || x > expFastMax {
		return expSlow(x)
	}
	return expFast(x)
}

// expFast is Exp32 for x in [expFastMin, expFastMax], where the result is
// normal and the scaling by 2**n a single exact product.
func expFast(x float32) float32 {
	y, t := expReduced(x)
	return y * math.Float32frombits((math.Float32bits(t)-math.Float32bits(magic)+127)<<23)
}

// expReduced returns e**r for x = n ln 2 + r, |r| <= ln2/2, and t, which
// holds n in its low mantissa bits (t = n + magic): the part of Exp32 that
// expFast and expSlow share.
func expReduced(x float32) (y, t float32) {
	t = float32(x*log2e) + magic
	nf := t - magic
	r := x - float32(nf*ln2Hi)
	r -= float32(nf * ln2Lo)
	p := float32(1.9875691500e-4*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	y = float32(p*float32(r*r)) + r + 1
	return y, t
}

// expSlow is Exp32 for x outside [expFastMin, expFastMax] (and not NaN or
// out of range): the same computation, with the scaling by 2**n in two
// steps when 2**n alone would overflow or underflow.
func expSlow(x float32) float32 {
	y, t := expReduced(x)
	n := int32(math.Float32bits(t)) - int32(math.Float32bits(magic))
	switch {
	case n > 127:
		return y * 2 * math.Float32frombits(uint32(n+126)<<23)
	case n < -126:
		// y*2^(n+64) is exact (normal); the one rounding happens in the
		// final product.
		return y * math.Float32frombits(uint32(n+64+127)<<23) * 0x1p-64
	}
	return y * math.Float32frombits(uint32(n+127)<<23)
}

// Log32 returns the natural logarithm of x in float32 arithmetic, with the
// same bits on every platform.
//
// Accuracy, checked against math.Log on every 2039th positive float32 and
// every float32 near 1 (TestLog32Accuracy): relative error below 1.2e-7 and
// under one ulp (measured maximum 7.7e-8, 0.78 ulp), denormal arguments
// included. Log32(1) = 0, Log32(0) = -Inf,
// Log32(+Inf) = +Inf, and Log32 is NaN for x < 0 and for NaN.
//
// Method (Cephes logf): x = 2**e * m with m in (sqrt(1/2), sqrt(2)],
// ln m = f - f*f/2 + f**3 P(f) with f = m - 1 and a degree-8 polynomial P, plus
// e ln 2 in two parts.
func Log32(x float32) float32 {
	if !(x > 0) || x > math.MaxFloat32 {
		switch {
		case x == 0:
			return float32(math.Inf(-1))
		case x > 0: // +Inf
			return x
		}
		return float32(math.NaN())
	}
	b, e := math.Float32bits(x), int32(0)
	if b < 0x00800000 { // denormal: scale into the normal range first
		b, e = math.Float32bits(x*0x1p23), -23
	}
	return logBits(b, e)
}

// logBits returns ln(f * 2**e) for the positive normal float32 f with bits b.
func logBits(b uint32, e int32) float32 {
	e += int32(b>>23) - 127
	m := math.Float32frombits(b&0x007fffff | 0x3f800000)
	if m > sqrt2 {
		m *= 0.5
		e++
	}
	f := m - 1 // exact
	z := float32(f * f)
	p := float32(7.0376836292e-2*f) - 1.1514610310e-1
	p = float32(p*f) + 1.1676998740e-1
	p = float32(p*f) - 1.2420140846e-1
	p = float32(p*f) + 1.4249322787e-1
	p = float32(p*f) - 1.6668057665e-1
	p = float32(p*f) + 2.0000714765e-1
	p = float32(p*f) - 2.4999993993e-1
	p = float32(p*f) + 3.3333331174e-1
	y := float32(float32(p*f) * z)
	ef := float32(e)
	y += float32(ef * ln2Lo)
	y -= float32(0.5 * z)
	return (f + y) + float32(ef*ln2Hi)
}

// xlogx returns x ln x for x > 0 and 0 for x <= 0 (the entropy term).
func xlogx(x float32) float32 {
	if x > 0 {
		return float32(x * Log32(x))
	}
	return 0
}
