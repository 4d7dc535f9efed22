//go:build goexperiment.simd && !purego

package core

import (
	"simd/archsimd"
	"unsafe"
)

// magVecWidth is the number of float32s maxMagVec takes at a time: two
// SIMD128 registers of four. (A variable, so that tests can set it to 0
// to run maxAbs's portable loop alone.)
var magVecWidth = 8

// maxMagVec returns the largest of the bits without the sign of
// x[:len(x)&^7] (0 for none) and that count.
func maxMagVec(x []float32) (uint32, int) {
	n := len(x) &^ 7
	if n == 0 || magVecWidth == 0 {
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
