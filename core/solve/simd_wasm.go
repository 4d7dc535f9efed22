//go:build goexperiment.simd && !purego

package solve

// vecLanes is 2: in wasm the archsimd loops of simd.go run (two float64s
// per SIMD128 register). vecAvail lists the widths this build runs.
var (
	vecAvail = []int{2}
	vecLanes = 2
)
