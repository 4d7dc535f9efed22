//go:build goexperiment.simd && !purego

package solve

// vecLanes is 2: in wasm the archsimd loops of simd.go run (two float64s
// per SIMD128 register). vecAvail lists the widths this build runs.
var (
	vecAvail = []int{2}
	vecLanes = 2
)

// reflectRowsV2 is reflectRows over all the columns in the SIMD128
// assembly (reflectW: strips of 16, then 8, then 2 columns, then an odd
// last one, whose sums stay in registers over all the rows, where axpy4
// and ger4 pass them through memory four rows at a time), each lane the Go
// loops' multiplies and adds in their order. It returns the count of
// columns done; the caller has checked that every row is in bounds.
func reflectRowsV2(head []float64, v []float64, tau float64, rows []float64, stride int) int {
	n := len(head)
	if n == 0 || len(v) == 0 {
		return 0
	}
	reflectW(&head[0], n, &v[0], len(v), tau, &rows[0], stride)
	return n
}

//go:noescape
func reflectW(head *float64, n int, v *float64, nv int, tau float64, rows *float64, stride int)

// dotsVec is Dots in the SIMD128 assembly (dotsW) when len(x) is a
// positive multiple of 4, and reports whether it ran: lanes 0 and 1 of one
// register hold Dot's partial sums s0 and s1, those of another s2 and s3.
func dotsVec(dst, w, x []float64) bool {
	n := len(x)
	if n == 0 || n%4 != 0 {
		return false
	}
	dotsW(&dst[0], &w[0], &x[0], n, len(dst))
	return true
}

//go:noescape
func dotsW(dst, w, x *float64, n, rows int)

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
