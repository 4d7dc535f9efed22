package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/haeols/haeols/core/half"
)

// Quantize encodes src as a run of blocks of type t, for writers and
// tests. len(src) must be a whole number of blocks and every value
// finite. Float types round to nearest, ties to even. The quantizers are
// this package's own, simple and deterministic, not ggml's: each block's
// scales are chosen from its extremes (the extreme value is hit exactly
// up to float16 rounding of the scales) and every element is rounded to
// the nearest level the stored scales allow. They do not search for the
// scales of least error as ggml's reference quantizers do, so their error
// is somewhat larger, always within the bound each type's levels give.
func Quantize(t Type, src []float32) ([]byte, error) {
	nb, err := t.RowBytes(len(src))
	if err != nil {
		return nil, err
	}
	for i, v := range src {
		if v != v || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("quant: cannot quantize element %d: %v", i, v)
		}
	}
	out := make([]byte, nb)
	switch t {
	case F32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
		return out, nil
	case F16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(out[2*i:], half.F32ToF16(v))
		}
		return out, nil
	case BF16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(out[2*i:], half.F32ToBF16(v))
		}
		return out, nil
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	q := quantFuncs[t]
	for i := 0; i < len(src); i += bs {
		q(out[i/bs*bb:][:bb], src[i:i+bs])
	}
	return out, nil
}

var quantFuncs = map[Type]func(b []byte, x []float32){
	Q4_0: func(b []byte, x []float32) { quantSymmetric(b, x, 4) },
	Q5_0: func(b []byte, x []float32) { quantSymmetric(b, x, 5) },
	Q8_0: quantQ8_0,
	Q4_1: func(b []byte, x []float32) { quantAffine(b, x, 4) },
	Q5_1: func(b []byte, x []float32) { quantAffine(b, x, 5) },
	Q2_K: quantQ2_K,
	Q3_K: quantQ3_K,
	Q4_K: func(b []byte, x []float32) { quantK45(b, x, 4) },
	Q5_K: func(b []byte, x []float32) { quantK45(b, x, 5) },
	Q6_K: quantQ6_K,
}

// nearest rounds v to the nearest integer (ties to even), clamped to
// [lo, hi].
func nearest(v float32, lo, hi int) int {
	r := math.RoundToEven(float64(v))
	if r < float64(lo) {
		return lo
	}
	if r > float64(hi) {
		return hi
	}
	return int(r)
}

// putF16 stores v as a float16 at b[0:2] and returns the stored value.
func putF16(b []byte, v float32) float32 {
	h := half.F32ToF16(v)
	binary.LittleEndian.PutUint16(b, h)
	return half.F16ToF32(h)
}

// inv is 1/d, or 0 for d == 0 (an all-zero group).
func inv(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// signedMax is the element of x of largest magnitude (the first of them).
func signedMax(x []float32) float32 {
	var m float32
	for _, v := range x {
		if abs(v) > abs(m) {
			m = v
		}
	}
	return m
}

func abs(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

func minMax(x []float32) (lo, hi float32) {
	lo, hi = x[0], x[0]
	for _, v := range x[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// setNibbles stores the 32 4-bit values u of a Q4/Q5 block: element j in
// the low nibble of qs[j], element j+16 in the high nibble, and the fifth
// bits (bits == 5) in the 32-bit word qh.
func setNibbles(qs, qh []byte, u []int, bits int) {
	var h uint32
	for j := 0; j < QK/2; j++ {
		qs[j] = byte(u[j]&15) | byte(u[j+QK/2]&15)<<4
		h |= uint32(u[j]>>4&1)<<uint(j) | uint32(u[j+QK/2]>>4&1)<<uint(j+16)
	}
	if bits == 5 {
		binary.LittleEndian.PutUint32(qh, h)
	}
}

// quantSymmetric encodes Q4_0 (bits 4) or Q5_0 (bits 5): x = (u - 2^(bits-1))*d
// with the largest-magnitude element mapped to u = 0 exactly.
func quantSymmetric(b []byte, x []float32, bits int) {
	off := 1 << (bits - 1)
	d := putF16(b, signedMax(x)/float32(-off))
	id := inv(d)
	u := make([]int, QK)
	for j, v := range x {
		u[j] = nearest(float32(v*id), -off, off-1) + off
	}
	if bits == 5 {
		setNibbles(b[6:], b[2:], u, 5)
	} else {
		setNibbles(b[2:], nil, u, 4)
	}
}

// quantAffine encodes Q4_1 or Q5_1: x = u*d + m, m the minimum.
func quantAffine(b []byte, x []float32, bits int) {
	top := 1<<bits - 1
	lo, hi := minMax(x)
	d := putF16(b, (hi-lo)/float32(top))
	m := putF16(b[2:], lo)
	id := inv(d)
	u := make([]int, QK)
	for j, v := range x {
		u[j] = nearest(float32((v-m)*id), 0, top)
	}
	if bits == 5 {
		setNibbles(b[8:], b[4:], u, 5)
	} else {
		setNibbles(b[4:], nil, u, 4)
	}
}

func quantQ8_0(b []byte, x []float32) {
	d := putF16(b, abs(signedMax(x))/127)
	id := inv(d)
	for j, v := range x {
		b[2+j] = byte(int8(nearest(float32(v*id), -128, 127)))
	}
}

// groupScales chooses, for groups of g elements, a scale s and a min m >= 0
// with x ~ s*u - m for u in [0, top]: the group's range over top levels.
func groupScales(x []float32, g, top int) (s, m []float32) {
	for i := 0; i < len(x); i += g {
		lo, hi := minMax(x[i : i+g])
		lo = min(lo, 0)
		s = append(s, (hi-lo)/float32(top))
		m = append(m, -lo)
	}
	return s, m
}

// superScale quantizes the non-negative values v to integers in [0, top]
// times a float16 super-scale stored at b[0:2], returning the integers
// and the stored super-scale.
func superScale(b []byte, v []float32, top int) ([]int, float32) {
	var mx float32
	for _, s := range v {
		mx = max(mx, s)
	}
	d := putF16(b, mx/float32(top))
	id := inv(d)
	q := make([]int, len(v))
	for i, s := range v {
		q[i] = nearest(float32(s*id), 0, top)
	}
	return q, d
}

// quantGroups rounds each element of x to u in [0, top] for the stored
// per-group scale d*sc and min dmin*mn.
func quantGroups(x []float32, g, top int, d float32, sc []int, dmin float32, mn []int) []int {
	u := make([]int, len(x))
	for i, v := range x {
		k := i / g
		dl := float32(d * float32(sc[k]))
		ml := float32(dmin * float32(mn[k]))
		u[i] = nearest(float32((v+ml)*inv(dl)), 0, top)
	}
	return u
}

func quantQ2_K(b []byte, x []float32) {
	s, m := groupScales(x, 16, 3)
	sc, d := superScale(b[80:], s, 15)
	mn, dmin := superScale(b[82:], m, 15)
	u := quantGroups(x, 16, 3, d, sc, dmin, mn)
	for k := 0; k < 16; k++ {
		b[k] = byte(sc[k] | mn[k]<<4)
	}
	qs := b[16:80]
	for e, v := range u {
		n, r := e/128, e%128
		j, h, l := r/32, r%32/16, r%16
		qs[32*n+16*h+l] |= byte(v) << uint(2*j)
	}
}

func quantQ3_K(b []byte, x []float32) {
	// 16 groups of 16, x = d*sc*q with q in [-4, 3] and sc in [-32, 31].
	gs := make([]float32, 16)
	var mx float32
	for k := range gs {
		gs[k] = signedMax(x[16*k:16*k+16]) / -4
		mx = max(mx, abs(gs[k]))
	}
	d := putF16(b[108:], mx/31)
	id := inv(d)
	hm, qs, scb := b[:32], b[32:96], b[96:108]
	for k, s := range gs {
		sc := nearest(float32(s*id), -32, 31)
		u := sc + 32
		scb[k%8] |= byte(u&15) << (4 * uint(k/8))
		scb[8+k%4] |= byte(u>>4) << (2 * uint(k/4))
		dl := float32(d * float32(sc))
		for i := 16 * k; i < 16*k+16; i++ {
			v := nearest(float32(x[i]*inv(dl)), -4, 3) + 4
			n, r := i/128, i%128
			j, h, l := r/32, r%32/16, r%16
			qs[32*n+16*h+l] |= byte(v&3) << uint(2*j)
			hm[16*h+l] |= byte(v>>2) << uint(4*n+j)
		}
	}
}

// quantK45 encodes Q4_K (bits 4) or Q5_K (bits 5): eight groups of 32,
// 6-bit scales and mins under the float16 super-scales d and dmin.
func quantK45(b []byte, x []float32, bits int) {
	top := 1<<bits - 1
	s, m := groupScales(x, 32, top)
	sc, d := superScale(b[0:], s, 63)
	mn, dmin := superScale(b[2:], m, 63)
	u := quantGroups(x, 32, top, d, sc, dmin, mn)
	p := b[4:16]
	for j := 0; j < 8; j++ {
		if j < 4 {
			p[j] |= byte(sc[j])
			p[j+4] |= byte(mn[j])
		} else {
			p[j+4] = byte(sc[j]&15) | byte(mn[j]&15)<<4
			p[j-4] |= byte(sc[j]>>4) << 6
			p[j] |= byte(mn[j]>>4) << 6
		}
	}
	qs, qh := b[16:], []byte(nil)
	if bits == 5 {
		qh, qs = b[16:48], b[48:]
	}
	for e, v := range u {
		j, h, l := e/64, e%64/32, e%32
		qs[32*j+l] |= byte(v&15) << (4 * uint(h))
		if bits == 5 {
			qh[l] |= byte(v>>4) << uint(2*j+h)
		}
	}
}

func quantQ6_K(b []byte, x []float32) {
	// 16 groups of 16, x = d*sc*q with q in [-32, 31] and sc in [-128, 127].
	gs := make([]float32, 16)
	var mx float32
	for k := range gs {
		gs[k] = signedMax(x[16*k:16*k+16]) / -32
		mx = max(mx, abs(gs[k]))
	}
	d := putF16(b[208:], mx/127)
	id := inv(d)
	ql, qh, scb := b[:128], b[128:192], b[192:208]
	for k, s := range gs {
		sc := nearest(float32(s*id), -128, 127)
		scb[k] = byte(int8(sc))
		dl := float32(d * float32(sc))
		for i := 16 * k; i < 16*k+16; i++ {
			v := nearest(float32(x[i]*inv(dl)), -32, 31) + 32
			n, r := i/128, i%128
			quarter, l := r/32, r%32
			at := 64*n + l + 32*(quarter%2)
			ql[at] |= byte(v&15) << (4 * uint(quarter/2))
			qh[32*n+l] |= byte(v>>4) << uint(2*quarter)
		}
	}
}
