//go:build goexperiment.simd && !purego

package half

import (
	"simd/archsimd"
	"unsafe"
)

// vecWidth is the number of 16-bit floats the vector loops take at a time:
// eight, widened to one AVX2 register of float32s, on a CPU with AVX2
// (archsimd's Broadcast needs it); 0 without, and then the portable loops
// run. (A variable, so that tests can set it to 0.)
var vecWidth = widthAMD64()

func widthAMD64() int {
	if archsimd.X86.AVX2() {
		return 8
	}
	return 0
}

// decodeF16Vec widens the first len(dst) &^ 7 float16s of src into dst,
// eight at a time, and returns how many it widened (see vec_wasm.go for
// how).
func decodeF16Vec(dst []float32, src []byte, bigEndian bool) int {
	n := len(dst) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0
	}
	_ = src[2*n-1]
	_ = dst[n-1]
	defer archsimd.ClearAVXUpperBits()
	ps, pd := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	mag, sign := archsimd.BroadcastUint16x8(0x7fff), archsimd.BroadcastUint16x8(0x8000)
	one, top := archsimd.BroadcastUint16x8(0x0400), archsimd.BroadcastUint16x8(0x7f80)
	scale := archsimd.BroadcastFloat32x8(0x1p112)
	for i := 0; i < n; i += 8 {
		x := archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(ps, 2*i)))
		if bigEndian {
			x = x.ShiftAllLeft(8).Or(x.ShiftAllRight(8))
		}
		e := x.And(mag)
		inf := e.Add(one).BitsToInt16().ShiftAllRight(15).ToBits()
		hi := x.And(sign).Or(inf.And(top))
		v := e.ExtendToUint32().ShiftAllLeft(13).BitsToFloat32().Mul(scale).ToBits()
		v = v.Or(hi.ExtendToUint32().ShiftAllLeft(16))
		v.StoreArray((*[8]uint32)(unsafe.Add(pd, 4*i)))
	}
	return n
}

// decodeBF16Vec widens the first len(dst) &^ 7 bfloat16s of src into dst,
// eight at a time, and returns how many it widened.
func decodeBF16Vec(dst []float32, src []byte, bigEndian bool) int {
	n := len(dst) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0
	}
	_ = src[2*n-1]
	_ = dst[n-1]
	defer archsimd.ClearAVXUpperBits()
	ps, pd := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[0])
	for i := 0; i < n; i += 8 {
		x := archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(ps, 2*i)))
		if bigEndian {
			x = x.ShiftAllLeft(8).Or(x.ShiftAllRight(8))
		}
		x.ExtendToUint32().ShiftAllLeft(16).StoreArray((*[8]uint32)(unsafe.Add(pd, 4*i)))
	}
	return n
}
