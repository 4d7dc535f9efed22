//go:build goexperiment.simd && !purego

package half

import (
	"simd/archsimd"
	"unsafe"
)

// vecWidth is the number of 16-bit floats the vector loops take at a time:
// one SIMD128 register of eight, widened in two halves of four float32s.
// (A variable, so that tests can set it to 0 to run the portable loops.)
var vecWidth = 8

// decodeF16Vec widens the first len(dst) &^ 7 float16s of src into dst,
// eight at a time, and returns how many it widened. In each 16-bit lane
// e = h & 0x7fff: e << 13, read as a float32, is the float16's value
// times 2^-112 for every finite h (normal or subnormal, each exactly a
// float32), so a multiplication by 2^112 (a power of two: exact) gives
// its magnitude; the sign, and for exponent 31 (infinity, NaN) the
// float32 exponent 0xff, are ORed into the top 16 bits. Same bits as
// F16ToF32.
func decodeF16Vec(dst []float32, src []byte, bigEndian bool) int {
	n := len(dst) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0
	}
	_ = src[2*n-1]
	_ = dst[n-1]
	ps, pd := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	mag, sign := archsimd.BroadcastUint16x8(0x7fff), archsimd.BroadcastUint16x8(0x8000)
	one, top := archsimd.BroadcastUint16x8(0x0400), archsimd.BroadcastUint16x8(0x7f80)
	scale := archsimd.BroadcastFloat32x4(0x1p112)
	for i := 0; i < n; i += 8 {
		x := archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(ps, 2*i)))
		if bigEndian {
			x = x.ShiftAllLeft(8).Or(x.ShiftAllRight(8))
		}
		e := x.And(mag)
		// e >= 0x7c00 (exponent 31) exactly when e + 0x400 has its top bit.
		inf := e.Add(one).BitsToInt16().ShiftAllRight(15).ToBits()
		hi := x.And(sign).Or(inf.And(top))
		lo4 := e.ExtendLo4ToUint32().ShiftAllLeft(13).BitsToFloat32().Mul(scale).ToBits()
		hi4 := e.ExtendHi4ToUint32().ShiftAllLeft(13).BitsToFloat32().Mul(scale).ToBits()
		lo4 = lo4.Or(hi.ExtendLo4ToUint32().ShiftAllLeft(16))
		hi4 = hi4.Or(hi.ExtendHi4ToUint32().ShiftAllLeft(16))
		lo4.StoreArray((*[4]uint32)(unsafe.Add(pd, 4*i)))
		hi4.StoreArray((*[4]uint32)(unsafe.Add(pd, 4*i+16)))
	}
	return n
}

// decodeBF16Vec widens the first len(dst) &^ 7 bfloat16s of src into dst,
// eight at a time (each the top half of its float32), and returns how
// many it widened.
func decodeBF16Vec(dst []float32, src []byte, bigEndian bool) int {
	n := len(dst) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0
	}
	_ = src[2*n-1]
	_ = dst[n-1]
	ps, pd := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	for i := 0; i < n; i += 8 {
		x := archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(ps, 2*i)))
		if bigEndian {
			x = x.ShiftAllLeft(8).Or(x.ShiftAllRight(8))
		}
		x.ExtendLo4ToUint32().ShiftAllLeft(16).StoreArray((*[4]uint32)(unsafe.Add(pd, 4*i)))
		x.ExtendHi4ToUint32().ShiftAllLeft(16).StoreArray((*[4]uint32)(unsafe.Add(pd, 4*i+16)))
	}
	return n
}
