//go:build !goexperiment.simd || !(amd64 || wasm) || purego

package solve

// vecLanes is 0 and vecAvail empty: without GOEXPERIMENT=simd (or on
// another architecture, or with -tags purego) there are no archsimd loops.
var (
	vecAvail []int
	vecLanes = 0
)

// The archsimd loops are never called when vecLanes is 0.

func axpyV2(dst []float64, n int, alpha float64, x []float64) {
	panic("solve: built without archsimd loops")
}

func axpy4V2(dst []float64, n int, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	panic("solve: built without archsimd loops")
}

func ger4V2(s []float64, n int, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	panic("solve: built without archsimd loops")
}

func reflectRowsV2(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	panic("solve: built without archsimd loops")
}

// dotsVec does nothing here: Dots runs dot per row (simd_wasm.go has
// an assembly one).
func dotsVec(dst, w, x []float64) bool { return false }

// hasVec4 is false: no archsimd loops.
const hasVec4 = false

func colMaxAbsV2(cm, a []float64, m, n, j0 int) bool {
	panic("solve: built without archsimd loops")
}

func scaleColsV2(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64, j0 int) {
	panic("solve: built without archsimd loops")
}

func colMaxAbsV4(cm, a []float64, m, n, j0 int) bool {
	panic("solve: built without archsimd loops")
}

func scaleColsV4(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64, j0 int) {
	panic("solve: built without archsimd loops")
}

func allFiniteV4(a []float64) bool { panic("solve: built without archsimd loops") }

func absMaxV4(a []float64) float64 { panic("solve: built without archsimd loops") }

func scaleToV4(dst, a []float64, f float64) { panic("solve: built without archsimd loops") }

func allFiniteV2(a []float64) bool { panic("solve: built without archsimd loops") }

func absMaxV2(a []float64) float64 { panic("solve: built without archsimd loops") }

func scaleToV2(dst, a []float64, f float64) { panic("solve: built without archsimd loops") }
