// Package solve holds the small float64 solves of HAE-OLS (HAE-OLS.md §3):
// non-negative least squares (Lawson–Hanson), least squares through the
// Moore–Penrose pseudoinverse with a relative cutoff, and truncated SVD by
// energy. Matrices are row-major []float64.
//
// Slice lengths must match the dimensions exactly. Errors wrap one of the
// sentinels ErrShape, ErrNotFinite, ErrInvalid, ErrIterationLimit and
// ErrNoConvergence and name the parameter involved.
//
// Results are deterministic and portable: everything is plain Go with a
// fixed order of operations, every product rounded explicitly (float64(x*y))
// so that no platform may fuse it into an FMA, and no elementary function
// other than math.Sqrt (correctly rounded everywhere), so NNLS, PinvSolve
// and Decompose give the same bits on amd64 (any GOAMD64 level), arm64 and
// js/wasm. The SVD is LAPACK's xGESVD method reimplemented that way:
// Householder QR first (in Decompose for non-square matrices; in PinvSolve
// always, with column pivoting and a rounding-level rank cutoff), then
// Golub–Kahan bidiagonalization and implicit-shift bidiagonal QR
// (Demmel–Kahan). Gonum serves only as the reference in the tests.
package solve
