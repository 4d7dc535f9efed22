//go:build goexperiment.simd && !purego

package solve

// vecLanes is 2: in wasm the archsimd loops of simd.go run (two float64s
// per SIMD128 register). vecAvail lists the widths this build runs.
var (
	vecAvail = []int{2}
	vecLanes = 2
)

// hasVec4 is false: the four-lane loops are amd64's (simd_amd64.go).
const hasVec4 = false

func colMaxAbsV4(cm, a []float64, m, n, j0 int) bool {
	panic("solve: no four-lane loops in this build")
}

func scaleColsV4(dst []float64, ld int, a []float64, m, n int, scl, nrm []float64, j0 int) {
	panic("solve: no four-lane loops in this build")
}

func allFiniteV4(a []float64) bool { panic("solve: no four-lane loops in this build") }

func absMaxV4(a []float64) float64 { panic("solve: no four-lane loops in this build") }

func scaleToV4(dst, a []float64, f float64) { panic("solve: no four-lane loops in this build") }
