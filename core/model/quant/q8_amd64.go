//go:build goexperiment.simd && !purego

package quant

import (
	"simd/archsimd"
	"unsafe"
)

// q8Vec says whether dequantQ8_0 widens its 32 signed bytes in vectors:
// on a CPU with AVX2 (archsimd's Broadcast needs it). A variable, so that
// tests can turn it off.
var q8Vec = archsimd.X86.AVX2()

// q8Widen sets y[j] = float32(int8(qs[j])) * d for the 32 elements of a
// Q8_0 block: 16 bytes sign-extended to 16-bit lanes, each half to eight
// 32-bit ones, converted (exactly) and multiplied by d, the scalar loop's
// operations.
func q8Widen(y []float32, qs []byte, d float32) {
	_ = y[31]
	_ = qs[31]
	defer archsimd.ClearAVXUpperBits()
	dv := archsimd.BroadcastFloat32x8(d)
	py, pq := unsafe.Pointer(&y[0]), unsafe.Pointer(&qs[0])
	for k := 0; k < 32; k += 16 {
		w := archsimd.LoadInt8x16Array((*[16]int8)(unsafe.Add(pq, k))).ExtendToInt16()
		w.GetLo().ExtendToInt32().ConvertToFloat32().Mul(dv).StoreArray((*[8]float32)(unsafe.Add(py, 4*k)))
		w.GetHi().ExtendToInt32().ConvertToFloat32().Mul(dv).StoreArray((*[8]float32)(unsafe.Add(py, 4*k+32)))
	}
}
