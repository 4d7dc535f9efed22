package kernel

import "math"

// The portable elementwise loops below carry the bodies of expFast and
// logBits written out, because the Go compiler does not inline them (cost
// over its budget) and a call per element costs more than the arithmetic;
// the archsimd loops of simd.go (wasm, amd64 with AVX2) and the SSE loops of
// kernel_amd64.s do the same operations four elements at a time. All copies
// must stay identical to the functions: TestElementwiseMatchPaths checks
// every result bit for bit against Exp32 and Log32, on every path.

// ExpShift sets dst[j] = Exp32(src[j] - mx) for j < len(dst) (dst may alias
// src) and returns the float32 sum of the dst[j] in index order: the
// exponentials of a softmax row, four at a time on amd64, the same bits
// everywhere.
func ExpShift(dst, src []float32, mx float32) float32 {
	src = src[:len(dst)]
	var s float32
	j := 0
	switch {
	case vecLanes > 0:
		for len(dst)-j >= 4 {
			j += expShiftVec(dst[j:], src[j:], mx, &s)
			if len(dst)-j >= 4 { // a group with an argument out of the fast range
				s = expShiftGo(dst[j:j+4], src[j:j+4], mx, s)
				j += 4
			}
		}
	case useAsm:
		for len(dst)-j >= 4 {
			j += expShiftSSE(&dst[j], &src[j], (len(dst)-j)&^3, mx, &s)
			if len(dst)-j >= 4 { // a group with an argument out of the fast range
				s = expShiftGo(dst[j:j+4], src[j:j+4], mx, s)
				j += 4
			}
		}
	}
	return expShiftGo(dst[j:], src[j:], mx, s)
}

// ExpShiftTo sets dst[j] = Exp32(src[j] - mx) for j < len(dst) (dst may
// alias src): ExpShift's exponentials, the same bits, without their sum,
// whose chain of dependent additions bounds ExpShift's speed (eight at a
// time with AVX2, four in wasm and with SSE2).
func ExpShiftTo(dst, src []float32, mx float32) {
	if vecLanes == 0 {
		ExpShift(dst, src, mx)
		return
	}
	src = src[:len(dst)]
	j := 0
	for len(dst)-j >= 4 {
		if vecLanes == 8 || asmExp {
			j += expT8(dst[j:], src[j:], mx)
		}
		j += expT4(dst[j:], src[j:], mx)
		if len(dst)-j >= 4 { // a group with an argument out of the fast range
			expShiftGo(dst[j:j+4], src[j:j+4], mx, 0)
			j += 4
		}
	}
	expShiftGo(dst[j:], src[j:], mx, 0)
}

// expShiftGo is the portable ExpShift, adding to s.
func expShiftGo(dst, src []float32, mx, s float32) float32 {
	src = src[:len(dst)]
	for j, x := range src {
		a := x - mx
		var e float32
		if a >= expFastMin && a <= expFastMax {
			t := float32(a*log2e) + magic
			nf := t - magic
			r := a - float32(nf*ln2Hi)
			r -= float32(nf * ln2Lo)
			p := float32(1.9875691500e-4*r) + 1.3981999507e-3
			p = float32(p*r) + 8.3334519073e-3
			p = float32(p*r) + 4.1665795894e-2
			p = float32(p*r) + 1.6666665459e-1
			p = float32(p*r) + 5.0000001201e-1
			y := float32(p*float32(r*r)) + r + 1
			e = y * math.Float32frombits((math.Float32bits(t)-math.Float32bits(magic)+127)<<23)
		} else {
			e = Exp32(a)
		}
		dst[j] = e
		s += e
	}
	return s
}

// xlogxTo sets dst[j] = xlogx(src[j]) = src[j] ln src[j], or 0 where
// src[j] <= 0 or is NaN (dst may alias src).
func xlogxTo(dst, src []float32) {
	src = src[:len(dst)]
	j := 0
	switch {
	case vecLanes > 0:
		for len(dst)-j >= 4 {
			if vecLanes == 8 || asmXlogx {
				j += xlogxT8(dst[j:], src[j:], nil)
			}
			j += xlogxT4(dst[j:], src[j:], nil)
			if len(dst)-j >= 4 { // a group with a zero, denormal, Inf or NaN
				xlogxGo(dst[j:j+4], src[j:j+4])
				j += 4
			}
		}
	case useAsm:
		for len(dst)-j >= 4 {
			j += xlogxSSE(&dst[j], &src[j], (len(dst)-j)&^3)
			if len(dst)-j >= 4 { // a group with a zero, denormal, Inf or NaN
				xlogxGo(dst[j:j+4], src[j:j+4])
				j += 4
			}
		}
	}
	xlogxGo(dst[j:], src[j:])
}

// xlogxGo is the portable xlogxTo.
func xlogxGo(dst, src []float32) {
	src = src[:len(dst)]
	for j, x := range src {
		var h float32
		if x >= minNorm && x <= math.MaxFloat32 {
			b := math.Float32bits(x)
			e := int32(b>>23) - 127
			m := math.Float32frombits(b&0x007fffff | 0x3f800000)
			if m > sqrt2 {
				m *= 0.5
				e++
			}
			f := m - 1
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
			h = float32(x * ((f + y) + float32(ef*ln2Hi)))
		} else if x > 0 {
			h = float32(x * Log32(x))
		}
		dst[j] = h
	}
}

// rowMax is the largest element of x (-Inf when x is empty) for the loops
// that shift a softmax row by its maximum. Those loops differ only in
// what they make of a NaN and of the sign of a zero maximum, which depend
// on the order of the comparisons; any other maximum has one bit pattern,
// whatever the order. So rowMax takes lane maxima (archsimd, 8 or 4 lanes)
// and reports ok; when x holds a NaN, or the maximum is a zero, or there
// are no vector kernels, ok is false and the caller runs its own loop.
func rowMax(x []float32) (mx float32, ok bool) {
	switch {
	case vecLanes == 8 && len(x) >= 8:
		mx, ok = maxT8(x)
		for _, v := range x[len(x)&^7:] {
			mx = max(mx, v)
		}
	case vecLanes > 0 && len(x) >= 4:
		mx, ok = maxT4(x)
		for _, v := range x[len(x)&^3:] {
			mx = max(mx, v)
		}
	}
	// The tail may hold a NaN, which max passes on.
	return mx, ok && mx == mx && mx != 0
}
