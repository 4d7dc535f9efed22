// Package half converts between float32 and the two 16-bit float formats used
// to store tensors: IEEE 754 binary16 ("float16", safetensors F16, NumPy <f2)
// and bfloat16 (safetensors BF16); DecodeF32 reads stored float32s beside
// them, so that every reader decodes tensor bytes here.
//
// Narrowing conversions round to nearest, ties to even, the way hardware and
// NumPy do. Values too large for the target become infinities, values too
// small become subnormals or signed zeros, infinities stay infinities, and NaN
// stays NaN (made quiet, with the sign and as much payload as fits). Widening
// conversions are exact.
package half

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// Bit layouts.
const (
	f16SignMask = 0x8000
	f16ExpMask  = 0x7c00
	f16QuietBit = 0x0200

	// MaxF16 is the largest finite float16, 65504.
	MaxF16 = 65504
	// SmallestNormalF16 is the smallest positive normal float16, 2^-14.
	SmallestNormalF16 = 1.0 / (1 << 14)
	// SmallestF16 is the smallest positive (subnormal) float16, 2^-24.
	SmallestF16 = 1.0 / (1 << 24)
	// MaxBF16 is the largest finite bfloat16, (2 - 2^-7) * 2^127.
	MaxBF16 = 0x1.fep127
)

// F16ToF32 returns the float32 value of the float16 with bits h. It is exact.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&f16SignMask) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		// Zero or subnormal: mant * 2^-24, exact in float32.
		v := float32(mant) * SmallestF16
		return math.Float32frombits(sign | math.Float32bits(v))
	case 0x1f:
		// Infinity or NaN; the payload moves to the top of the mantissa.
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// F32ToF16 returns the float16 nearest to f (ties to even) as bits.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & f16SignMask
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | f16ExpMask
		}
		return sign | f16ExpMask | f16QuietBit | uint16(mant>>13)
	}
	e := exp - 127 + 15 // biased float16 exponent
	if e >= 0x1f {
		return sign | f16ExpMask
	}
	if e <= 0 {
		// The result is subnormal (or rounds up to the smallest normal):
		// f = m * 2^(exp-150) and a subnormal is k * 2^-24, so k = m >> (14-e).
		shift := uint(14 - e)
		if shift > 24 {
			// f < 2^-25: at most half the smallest subnormal (exactly half only
			// when shift is 24), so it rounds to zero.
			return sign
		}
		m := mant | 0x800000 // exp > 0 here: float32 subnormals took the branch above
		k := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || rem == halfway && k&1 == 1 {
			k++ // may carry into the exponent: the smallest normal, correct
		}
		return sign | uint16(k)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to infinity: correct
	}
	return sign | uint16(h)
}

// RoundF16 returns f rounded to the nearest float16 (ties to even), as a
// float32: F16ToF32(F32ToF16(f)).
func RoundF16(f float32) float32 { return F16ToF32(F32ToF16(f)) }

// BF16ToF32 returns the float32 value of the bfloat16 with bits b. It is exact.
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 returns the bfloat16 nearest to f (ties to even) as bits.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign and top payload, make quiet
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// RoundBF16 returns f rounded to the nearest bfloat16 (ties to even), as a
// float32: BF16ToF32(F32ToBF16(f)).
func RoundBF16(f float32) float32 { return BF16ToF32(F32ToBF16(f)) }

// f16Table holds F16ToF32 of every float16 (256 KiB), made on first use.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for h := range t {
		t[h] = F16ToF32(uint16(h))
	}
	return t
})

// DecodeF16 widens len(dst) float16s stored in src (2 bytes each, little
// endian unless bigEndian) into dst, exactly: F16ToF32 of each. With
// GOEXPERIMENT=simd (WebAssembly SIMD128, amd64 with AVX2) it takes eight
// at a time in vector registers, by integer shifts and a multiplication
// by a power of two; the rest, and other builds, look each up in a table.
// Both give F16ToF32's bits, NaN payloads too.
func DecodeF16(dst []float32, src []byte, bigEndian bool) {
	src = src[:2*len(dst)]
	i := decodeF16Vec(dst, src, bigEndian)
	dst, src = dst[i:], src[2*i:]
	if len(dst) == 0 {
		return
	}
	t := f16Table()
	src = src[:2*len(dst)]
	if bigEndian {
		for i := range dst {
			dst[i] = t[uint16(src[2*i])<<8|uint16(src[2*i+1])]
		}
		return
	}
	for i := range dst {
		dst[i] = t[uint16(src[2*i])|uint16(src[2*i+1])<<8]
	}
}

// DecodeBF16 widens len(dst) bfloat16s stored in src (2 bytes each, little
// endian unless bigEndian) into dst, exactly: BF16ToF32 of each (eight at
// a time in vector registers where DecodeF16 uses them).
func DecodeBF16(dst []float32, src []byte, bigEndian bool) {
	src = src[:2*len(dst)]
	i := decodeBF16Vec(dst, src, bigEndian)
	dst, src = dst[i:], src[2*i:]
	src = src[:2*len(dst)]
	if bigEndian {
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(src[2*i])<<24 | uint32(src[2*i+1])<<16)
		}
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(uint32(src[2*i])<<16 | uint32(src[2*i+1])<<24)
	}
}

// LittleEndian reports whether this machine stores numbers little-endian
// (amd64, arm64, wasm): then a float32's 4 bytes in memory are its
// little-endian encoding.
var LittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// DecodeF32 reads len(dst) float32s stored in src (4 bytes each, little
// endian unless bigEndian) into dst: one copy of the bytes when their order
// is the machine's, each converted otherwise. Both give the stored bits.
func DecodeF32(dst []float32, src []byte, bigEndian bool) {
	if len(dst) == 0 {
		return
	}
	src = src[:4*len(dst)]
	if bigEndian != LittleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*len(dst)), src)
		return
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		bo = binary.BigEndian
	}
	for i := range dst {
		dst[i] = math.Float32frombits(bo.Uint32(src[4*i:]))
	}
}
