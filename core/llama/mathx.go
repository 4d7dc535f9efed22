package llama

// Deterministic elementary functions.
//
// math.Exp is implemented in assembly on amd64, arm64 and s390x and in Go
// elsewhere (wasm), so its last bit can differ between a native run and the
// browser. The pure-Go versions in package math may also be compiled with
// fused multiply-adds on some architectures. The two functions below are the
// pure-Go algorithms of package math (from FreeBSD's e_exp.c and Cephes'
// sin.c, via the Go sources, BSD licence) with every product explicitly
// rounded (float64(x*y)), which the Go specification says forbids fusion.
// They therefore give the same bits on every GOARCH, and so does the forward
// pass built on them.

import "math"

// exp returns e**x, as math.Exp does (within an ulp), identically everywhere.
func exp(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)

		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	switch {
	case x != x:
		return x
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)

	r := hi - lo
	t := float64(r * r)
	poly := p5
	poly = p4 + float64(t*poly)
	poly = p3 + float64(t*poly)
	poly = p2 + float64(t*poly)
	poly = p1 + float64(t*poly)
	c := r - float64(t*poly)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	if -1021 <= k && k <= 1023 {
		// y is in [0.7, 1.5]: y * 2**k is normal, so the product is exact
		// and equals math.Ldexp(y, k), without its cost.
		return y * math.Float64frombits(uint64(k+1023)<<52)
	}
	return math.Ldexp(y, k)
}

var sinCoef = [...]float64{
	1.58962301576546568060e-10,
	-2.50507477628578072866e-8,
	2.75573136213857245213e-6,
	-1.98412698295895385996e-4,
	8.33333333332211858878e-3,
	-1.66666666666666307295e-1,
}

var cosCoef = [...]float64{
	-1.13585365213876817300e-11,
	2.08757008419747316778e-9,
	-2.75573141792967388112e-7,
	2.48015872888517045348e-5,
	-1.38888888888730564116e-3,
	4.16666666666665929218e-2,
}

// maxTrigArg bounds the arguments sincos accepts: below it the three-part
// Cody-Waite reduction of package math is exact enough. RoPE angles are at
// most the context length (MaxSeqLen), far below.
const maxTrigArg = 1 << 29

// sincos returns sin(x), cos(x) for |x| < maxTrigArg (NaN, NaN otherwise),
// as math.Sincos does, identically everywhere.
func sincos(x float64) (sin, cos float64) {
	const (
		pi4A = 7.85398125648498535156e-1
		pi4B = 3.77489470793079817668e-8
		pi4C = 2.69515142907905952645e-15
	)
	switch {
	case x == 0:
		return x, 1
	case x != x || x >= maxTrigArg || x <= -maxTrigArg:
		return math.NaN(), math.NaN()
	}
	sinSign, cosSign := false, false
	if x < 0 {
		x = -x
		sinSign = true
	}
	j := uint64(float64(x * (4 / math.Pi)))
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7
	z := ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	if j > 3 {
		j -= 4
		sinSign, cosSign = !sinSign, !cosSign
	}
	if j > 1 {
		cosSign = !cosSign
	}
	zz := float64(z * z)
	pc := cosCoef[0]
	ps := sinCoef[0]
	for i := 1; i < len(cosCoef); i++ {
		pc = float64(pc*zz) + cosCoef[i]
		ps = float64(ps*zz) + sinCoef[i]
	}
	cos = 1.0 - float64(0.5*zz) + float64(float64(zz*zz)*pc)
	sin = z + float64(float64(z*zz)*ps)
	if j == 1 || j == 2 {
		sin, cos = cos, sin
	}
	if cosSign {
		cos = -cos
	}
	if sinSign {
		sin = -sin
	}
	return sin, cos
}
