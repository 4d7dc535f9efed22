package quant

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/haeols/haeols/core/half"
)

// Dequantize decodes the elements of src, a run of blocks of type t, into
// dst: len(dst) elements from exactly t.RowBytes(len(dst)) bytes.
func Dequantize(t Type, dst []float32, src []byte) error {
	nb, err := t.RowBytes(len(dst))
	if err != nil {
		return err
	}
	if len(src) != nb {
		return fmt.Errorf("quant: %d elements of %s take %d bytes, have %d", len(dst), t, nb, len(src))
	}
	dequantRow(t, dst, src)
	return nil
}

// dequantRow decodes len(dst) elements (a whole number of blocks, checked
// by the caller) from src.
func dequantRow(t Type, dst []float32, src []byte) {
	switch t {
	case F32:
		half.DecodeF32(dst, src, false)
		return
	case F16:
		half.DecodeF16(dst, src, false)
		return
	case BF16:
		half.DecodeBF16(dst, src, false)
		return
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	f := blockFunc(t)
	for len(dst) > 0 {
		f(dst[:bs], 1, src[:bb])
		dst, src = dst[bs:], src[bb:]
	}
}

// stridedType reports whether matMulRows decodes rows of t straight into
// a packed panel (dequantStrided) rather than row after row and then
// packed (dequantRow, kernel.BlockDots): the quantized types whose
// decoders write one element at a time. The float types' and Q8_0's
// vector decoding and the packing beat writing their elements one by one
// into the panel.
func stridedType(t Type) bool { return t.BlockSize() > 1 && t != Q8_0 }

// dequantStrided decodes the n elements of src (whole blocks of the
// quantized type t) into dst[0], dst[s], ..., dst[(n-1)*s]: a row of a
// panel packed with its rows side by side (kernel.BlockDotsPacked). The
// elements are dequantRow's bits.
func dequantStrided(t Type, dst []float32, s, n int, src []byte) {
	bs, bb := t.BlockSize(), t.BlockBytes()
	f := blockFunc(t)
	for i := 0; i < n; i += bs {
		f(dst[i*s:], s, src[:bb])
		src = src[bb:]
	}
}

// blockFunc is the decoder of one block of the quantized type t: element l
// of the block (l < t.BlockSize()) goes to y[l*s], and len(b) is the
// block bytes.
func blockFunc(t Type) func(y []float32, s int, b []byte) {
	switch t {
	case Q4_0:
		return dequantQ4_0
	case Q4_1:
		return dequantQ4_1
	case Q5_0:
		return dequantQ5_0
	case Q5_1:
		return dequantQ5_1
	case Q8_0:
		return dequantQ8_0
	case Q2_K:
		return dequantQ2_K
	case Q3_K:
		return dequantQ3_K
	case Q4_K:
		return dequantQ4_K
	case Q5_K:
		return dequantQ5_K
	case Q6_K:
		return dequantQ6_K
	}
	panic(fmt.Sprintf("quant: no decoder for %s", t))
}

// f16 reads the little-endian float16 at b[0:2].
func f16(b []byte) float32 { return half.F16ToF32(binary.LittleEndian.Uint16(b)) }

// out is where a block decoder writes: element l at p + 4*s*l, after the
// decoder checked that the block's last element is in its y.
type out struct {
	p unsafe.Pointer
	s uintptr // the stride in bytes
}

// outOf checks that y holds n elements at stride s and returns their out.
func outOf(y []float32, s, n int) out {
	_ = y[(n-1)*s]
	return out{unsafe.Pointer(&y[0]), uintptr(4 * s)}
}

// set writes v as element l.
func (o out) set(l int, v float32) { *(*float32)(unsafe.Add(o.p, uintptr(l)*o.s)) = v }

// Q4_0: d, then 16 bytes whose low nibbles are elements 0-15 and high
// nibbles elements 16-31; x = (q - 8) * d.
func dequantQ4_0(y []float32, s int, b []byte) {
	d, qs := f16(b), b[2:2+QK/2]
	o := outOf(y, s, QK)
	for j, q := range qs {
		o.set(j, float32(int(q&15)-8)*d)
		o.set(j+QK/2, float32(int(q>>4)-8)*d)
	}
}

// Q4_1: d, m, then nibbles as Q4_0; x = q*d + m.
func dequantQ4_1(y []float32, s int, b []byte) {
	d, m, qs := f16(b), f16(b[2:]), b[4:4+QK/2]
	o := outOf(y, s, QK)
	for j, q := range qs {
		o.set(j, float32(float32(q&15)*d)+m)
		o.set(j+QK/2, float32(float32(q>>4)*d)+m)
	}
}

// Q5_0: d, a 32-bit word of fifth bits (bit j for element j), nibbles as
// Q4_0; x = (q - 16) * d.
func dequantQ5_0(y []float32, s int, b []byte) {
	d, qh, qs := f16(b), binary.LittleEndian.Uint32(b[2:]), b[6:6+QK/2]
	o := outOf(y, s, QK)
	for j, q := range qs {
		lo := int(q&15) | int(qh>>uint(j)&1)<<4
		hi := int(q>>4) | int(qh>>uint(j+16)&1)<<4
		o.set(j, float32(lo-16)*d)
		o.set(j+QK/2, float32(hi-16)*d)
	}
}

// Q5_1: d, m, fifth bits and nibbles as Q5_0; x = q*d + m.
func dequantQ5_1(y []float32, s int, b []byte) {
	d, m, qh, qs := f16(b), f16(b[2:]), binary.LittleEndian.Uint32(b[4:]), b[8:8+QK/2]
	o := outOf(y, s, QK)
	for j, q := range qs {
		lo := q&15 | byte(qh>>uint(j)&1)<<4
		hi := q>>4 | byte(qh>>uint(j+16)&1)<<4
		o.set(j, float32(float32(lo)*d)+m)
		o.set(j+QK/2, float32(float32(hi)*d)+m)
	}
}

// Q8_0: d, then 32 signed bytes; x = q * d (in vectors where the build
// has them and the elements are contiguous, q8Widen: the same
// operations).
func dequantQ8_0(y []float32, s int, b []byte) {
	d, qs := f16(b), b[2:2+QK]
	if q8Vec && s == 1 {
		q8Widen(y, qs, d)
		return
	}
	o := outOf(y, s, QK)
	for j, q := range qs {
		o.set(j, float32(int8(q))*d)
	}
}

// Q2_K: 16 bytes of 4-bit scale (low) and min (high) for 16 groups of 16,
// 64 bytes of 2-bit quants, d, dmin; x = d*scale*q - dmin*min.
func dequantQ2_K(y []float32, s int, b []byte) {
	scales, qs := b[:16], b[16:80]
	d, dmin := f16(b[80:]), f16(b[82:])
	o := outOf(y, s, QKK)
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for j := 0; j < 4; j++ {
			shift := uint(2 * j)
			for h := 0; h < 2; h++ {
				sc := scales[8*n+2*j+h]
				dl := float32(d * float32(sc&15))
				ml := float32(dmin * float32(sc>>4))
				at := 128*n + 32*j + 16*h
				for l := 0; l < 16; l++ {
					o.set(at+l, float32(dl*float32(q[16*h+l]>>shift&3))-ml)
				}
			}
		}
	}
}

// q3Scale is the signed 6-bit scale i (0-15) of a Q3_K block: its low four
// bits in the nibbles of bytes 0-7, its high two bits in bytes 8-11.
func q3Scale(s []byte, i int) int {
	lo := s[i%8] >> (4 * uint(i/8)) & 15
	hi := s[8+i%4] >> (2 * uint(i/4)) & 3
	return int(lo|hi<<4) - 32
}

// Q3_K: 32 bytes of high bits, 64 bytes of 2-bit quants, 12 bytes of 16
// signed 6-bit scales, d; x = d*scale*(q - 4 if the high bit is clear).
func dequantQ3_K(y []float32, s int, b []byte) {
	hm, qs, sc := b[:32], b[32:96], b[96:108]
	d := f16(b[108:])
	o := outOf(y, s, QKK)
	for n := 0; n < 2; n++ {
		q := qs[32*n : 32*n+32]
		for j := 0; j < 4; j++ {
			shift := uint(2 * j)
			m := byte(1) << uint(4*n+j)
			for h := 0; h < 2; h++ {
				dl := float32(d * float32(q3Scale(sc, 8*n+2*j+h)))
				at := 128*n + 32*j + 16*h
				for l := 0; l < 16; l++ {
					v := int(q[16*h+l] >> shift & 3)
					if hm[16*h+l]&m == 0 {
						v -= 4
					}
					o.set(at+l, dl*float32(v))
				}
			}
		}
	}
}

// scaleMinK4 is the 6-bit scale and min j (0-7) of a Q4_K or Q5_K block
// from its 12 packed bytes.
func scaleMinK4(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | s[j-4]>>6<<4, s[j+4]>>4 | s[j]>>6<<4
}

// Q4_K: d, dmin, 12 bytes of eight 6-bit scales and mins, 128 bytes of
// nibbles (byte 32*j+l holds element 64*j+l low and 64*j+32+l high);
// x = d*scale*q - dmin*min.
func dequantQ4_K(y []float32, s int, b []byte) {
	d, dmin, sm, qs := f16(b), f16(b[2:]), b[4:16], b[16:144]
	o := outOf(y, s, QKK)
	for j := 0; j < 4; j++ {
		sc1, m1 := scaleMinK4(sm, 2*j)
		sc2, m2 := scaleMinK4(sm, 2*j+1)
		d1, dm1 := float32(d*float32(sc1)), float32(dmin*float32(m1))
		d2, dm2 := float32(d*float32(sc2)), float32(dmin*float32(m2))
		q := qs[32*j : 32*j+32]
		for l, v := range q {
			o.set(64*j+l, float32(d1*float32(v&15))-dm1)
			o.set(64*j+32+l, float32(d2*float32(v>>4))-dm2)
		}
	}
}

// Q5_K: as Q4_K with 32 bytes of fifth bits before the nibbles (bit 2*j
// of byte l for element 64*j+l, bit 2*j+1 for element 64*j+32+l).
func dequantQ5_K(y []float32, s int, b []byte) {
	d, dmin, sm, qh, qs := f16(b), f16(b[2:]), b[4:16], b[16:48], b[48:176]
	o := outOf(y, s, QKK)
	for j := 0; j < 4; j++ {
		sc1, m1 := scaleMinK4(sm, 2*j)
		sc2, m2 := scaleMinK4(sm, 2*j+1)
		d1, dm1 := float32(d*float32(sc1)), float32(dmin*float32(m1))
		d2, dm2 := float32(d*float32(sc2)), float32(dmin*float32(m2))
		q := qs[32*j : 32*j+32]
		u1, u2 := byte(1)<<uint(2*j), byte(2)<<uint(2*j)
		for l, v := range q {
			lo, hi := v&15, v>>4
			if qh[l]&u1 != 0 {
				lo += 16
			}
			if qh[l]&u2 != 0 {
				hi += 16
			}
			o.set(64*j+l, float32(d1*float32(lo))-dm1)
			o.set(64*j+32+l, float32(d2*float32(hi))-dm2)
		}
	}
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of high 2-bit pairs, 16 signed
// 8-bit scales, d; x = d*scale*(q - 32).
func dequantQ6_K(y []float32, s int, b []byte) {
	ql, qh, sc := b[:128], b[128:192], b[192:208]
	d := f16(b[208:])
	o := outOf(y, s, QKK)
	for n := 0; n < 2; n++ {
		l4, h2, sn := ql[64*n:64*n+64], qh[32*n:32*n+32], sc[8*n:8*n+8]
		at := 128 * n
		for is := 0; is < 2; is++ {
			// The scales of elements l, l+32, l+64 and l+96 for the 16
			// l of this half.
			d1 := float32(d * float32(int8(sn[is])))
			d2 := float32(d * float32(int8(sn[is+2])))
			d3 := float32(d * float32(int8(sn[is+4])))
			d4 := float32(d * float32(int8(sn[is+6])))
			for l := 16 * is; l < 16*is+16; l++ {
				lo, hi, h := l4[l], l4[l+32], h2[l]
				q1 := int(lo&15|(h&3)<<4) - 32
				q2 := int(hi&15|(h>>2&3)<<4) - 32
				q3 := int(lo>>4|(h>>4&3)<<4) - 32
				q4 := int(hi>>4|(h>>6&3)<<4) - 32
				o.set(at+l, d1*float32(q1))
				o.set(at+l+32, d2*float32(q2))
				o.set(at+l+64, d3*float32(q3))
				o.set(at+l+96, d4*float32(q4))
			}
		}
	}
}
