//go:build goexperiment.simd && !purego

package quant

import (
	"simd/archsimd"
	"unsafe"
)

// q8Vec says whether dequantQ8_0 widens its 32 signed bytes in SIMD128
// vectors. A variable, so that tests can turn it off.
var q8Vec = true

// q8Widen sets y[j] = float32(int8(qs[j])) * d for the 32 elements of a
// Q8_0 block: each 16 bytes sign-extended to two halves of 16-bit lanes,
// each of those to two of 32-bit lanes, converted (exactly) and
// multiplied by d, the scalar loop's operations.
func q8Widen(y []float32, qs []byte, d float32) {
	_ = y[31]
	_ = qs[31]
	dv := archsimd.BroadcastFloat32x4(d)
	py, pq := unsafe.Pointer(&y[0]), unsafe.Pointer(&qs[0])
	store := func(off int, v archsimd.Int32x4) {
		v.ConvertToFloat32().Mul(dv).StoreArray((*[4]float32)(unsafe.Add(py, 4*off)))
	}
	for k := 0; k < 32; k += 16 {
		b := archsimd.LoadInt8x16Array((*[16]int8)(unsafe.Add(pq, k)))
		lo, hi := b.ExtendLo8ToInt16(), b.ExtendHi8ToInt16()
		store(k, lo.ExtendLo4ToInt32())
		store(k+4, lo.ExtendHi4ToInt32())
		store(k+8, hi.ExtendLo4ToInt32())
		store(k+12, hi.ExtendHi4ToInt32())
	}
}
