//go:build goexperiment.simd && !purego

package sample

import (
	"simd/archsimd"
	"unsafe"
)

// vecWidth is the number of float32s maxMagVec takes at a time: one AVX2
// register of eight on a CPU with AVX2 (archsimd's Broadcast needs it), 0
// without (then the portable loop runs). (A variable, so that tests can
// set it to 0.)
var vecWidth = widthAMD64()

func widthAMD64() int {
	if archsimd.X86.AVX2() {
		return 8
	}
	return 0
}

// maxMagVec returns the largest of the bits without the sign of
// x[:len(x)&^7] (0 for none) and that count.
func maxMagVec(x []float32) (uint32, int) {
	n := len(x) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0, 0
	}
	_ = x[n-1]
	defer archsimd.ClearAVXUpperBits()
	p := unsafe.Pointer(&x[0])
	mask := archsimd.BroadcastUint32x8(0x7fffffff)
	var m archsimd.Uint32x8
	for i := 0; i < n; i += 8 {
		m = m.Max(archsimd.LoadUint32x8Array((*[8]uint32)(unsafe.Add(p, 4*i))).And(mask))
	}
	var l [8]uint32
	m.StoreArray(&l)
	return max(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]), n
}

// maxMag16Vec returns the largest of the little-endian 16-bit values of
// b[:len(b)&^31] without their top bit (0 for none) and that count of
// bytes: sixteen at a time in one AVX2 register.
func maxMag16Vec(b []byte) (uint16, int) {
	n := len(b) &^ 31
	if n == 0 || vecWidth == 0 {
		return 0, 0
	}
	_ = b[n-1]
	defer archsimd.ClearAVXUpperBits()
	p := unsafe.Pointer(&b[0])
	mask := archsimd.BroadcastUint16x16(0x7fff)
	var m archsimd.Uint16x16
	for i := 0; i < n; i += 32 {
		m = m.Max(archsimd.LoadUint16x16Array((*[16]uint16)(unsafe.Add(p, i))).And(mask))
	}
	var l [16]uint16
	m.StoreArray(&l)
	return max(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10], l[11], l[12], l[13], l[14], l[15]), n
}
