// Package solve holds the small float64 solves of HAE-OLS (HAE-OLS.md §3):
// non-negative least squares (Lawson–Hanson), least squares through the
// Moore–Penrose pseudoinverse with a relative cutoff, and truncated SVD by
// energy. Matrices are row-major []float64.
//
// Slice lengths must match the dimensions exactly. Errors wrap one of the
// sentinels ErrShape, ErrNotFinite, ErrInvalid, ErrIterationLimit and
// ErrNoConvergence and name the parameter involved.
//
// Results are deterministic. NNLS is plain Go with explicitly rounded
// products and gives the same bits on every platform, js/wasm included;
// PinvSolve and Decompose use gonum's SVD, whose amd64 assembly kernels may
// differ from the pure-Go ones (js/wasm) in the last bits.
package solve
