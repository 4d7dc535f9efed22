//go:build goexperiment.simd && !purego

package solve

import "simd/archsimd"

// vecLanes is 0 on amd64: the AVX and SSE2 assembly of kernel_amd64.s runs
// axpy, axpy4 and ger4. vecAvail lists the width of the archsimd loops of
// simd.go that this CPU could run (2, with AVX2, which archsimd's
// Broadcast needs), for tests.
var (
	vecAvail = availAMD64()
	vecLanes = 0
)

func availAMD64() []int {
	if archsimd.X86.AVX2() {
		return []int{2}
	}
	return nil
}
