//go:build !goexperiment.simd || !(amd64 || wasm) || purego

package sample

// vecWidth is 0: without GOEXPERIMENT=simd (or on another architecture, or
// with -tags purego) there is no vector loop. (A variable, as where there
// is, so that tests can set it.)
var vecWidth = 0

// maxMagVec takes nothing: the portable loop does it all.
func maxMagVec(x []float32) (uint32, int) { return 0, 0 }

// maxMag16Vec takes nothing: the portable loop does it all.
func maxMag16Vec(b []byte) (uint16, int) { return 0, 0 }
