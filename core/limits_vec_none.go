//go:build !goexperiment.simd || !(amd64 || wasm) || purego

package core

// magVecWidth is 0: without GOEXPERIMENT=simd (or on another architecture,
// or with -tags purego) there is no vector loop. (A variable, as where
// there is, so that tests can set it.)
var magVecWidth = 0

// maxMagVec takes nothing: maxAbs's portable loop does it all.
func maxMagVec(x []float32) (uint32, int) { return 0, 0 }
