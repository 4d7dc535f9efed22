//go:build !goexperiment.simd || !(amd64 || wasm) || purego

package half

// vecWidth is 0: without GOEXPERIMENT=simd (or on another architecture, or
// with -tags purego) there are no vector loops. (A variable, as where
// there are, so that tests can set it.)
var vecWidth = 0

// decodeF16Vec widens nothing: the portable loop does it all.
func decodeF16Vec(dst []float32, src []byte, bigEndian bool) int { return 0 }

// decodeBF16Vec widens nothing: the portable loop does it all.
func decodeBF16Vec(dst []float32, src []byte, bigEndian bool) int { return 0 }
