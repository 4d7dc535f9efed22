//go:build goexperiment.simd && !purego

package sample

import (
	"simd/archsimd"
	"unsafe"
)

// vecWidth is the number of float32s maxMagVec takes at a time: two
// SIMD128 registers of four. (A variable, so that tests can set it to 0
// to run the portable loop.)
var vecWidth = 8

// maxMagVec returns the largest of the bits without the sign of
// x[:len(x)&^7] (0 for none) and that count.
func maxMagVec(x []float32) (uint32, int) {
	n := len(x) &^ 7
	if n == 0 || vecWidth == 0 {
		return 0, 0
	}
	_ = x[n-1]
	p := unsafe.Pointer(&x[0])
	mask := archsimd.BroadcastUint32x4(0x7fffffff)
	var m0, m1 archsimd.Uint32x4
	for i := 0; i < n; i += 8 {
		m0 = m0.Max(archsimd.LoadUint32x4Array((*[4]uint32)(unsafe.Add(p, 4*i))).And(mask))
		m1 = m1.Max(archsimd.LoadUint32x4Array((*[4]uint32)(unsafe.Add(p, 4*i+16))).And(mask))
	}
	var l [4]uint32
	m0.Max(m1).StoreArray(&l)
	return max(l[0], l[1], l[2], l[3]), n
}

// maxMag16Vec returns the largest of the little-endian 16-bit values of
// b[:len(b)&^31] without their top bit (0 for none) and that count of
// bytes.
func maxMag16Vec(b []byte) (uint16, int) {
	n := len(b) &^ 31
	if n == 0 || vecWidth == 0 {
		return 0, 0
	}
	_ = b[n-1]
	p := unsafe.Pointer(&b[0])
	mask := archsimd.BroadcastUint16x8(0x7fff)
	var m0, m1 archsimd.Uint16x8
	for i := 0; i < n; i += 32 {
		m0 = m0.Max(archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(p, i))).And(mask))
		m1 = m1.Max(archsimd.LoadUint16x8Array((*[8]uint16)(unsafe.Add(p, i+16))).And(mask))
	}
	var l [8]uint16
	m0.Max(m1).StoreArray(&l)
	return max(l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]), n
}
