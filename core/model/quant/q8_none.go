//go:build !goexperiment.simd || purego || !(amd64 || wasm)

package quant

// q8Vec is false: this build has no vector widening of Q8_0 blocks.
var q8Vec = false

func q8Widen(y []float32, qs []byte, d float32) { panic("quant: built without archsimd") }
