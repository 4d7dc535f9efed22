package solve

import "sync"

// nnlsPool recycles workspaces for the package-level NNLS.
var nnlsPool = sync.Pool{New: func() any { return new(NNLSWorkspace) }}

// NNLS solves min ||A x - b||_2 subject to x >= 0 by Lawson–Hanson, for the
// m x n row-major matrix a and the m-vector b, writing the n-vector x.
//
// Lengths must be exactly len(a) = m*n, len(b) = m, len(x) = n, a and b
// must be finite, and x must not overlap a or b. Zero columns get x = 0;
// b = 0 and m = 0 give x = 0; m < n is allowed. The method and its
// tolerances are described at NNLSWorkspace; use a workspace to control the
// iteration cap or to solve many problems without allocating. NNLS itself
// draws workspaces from a sync.Pool and is safe for concurrent use. If the cap (3n entering columns) is hit, NNLS returns an error
// wrapping ErrIterationLimit and leaves the last feasible iterate in x.
func NNLS(a []float64, m, n int, b []float64, x []float64) error {
	ws := nnlsPool.Get().(*NNLSWorkspace)
	defer nnlsPool.Put(ws)
	return ws.NNLS(a, m, n, b, x)
}

// PinvSolve sets x = pinv(A) B, the minimum-norm least-squares solution, for
// the m x n matrix a and the m x k matrix b (x is n x k). Singular values
// below rcond times the largest are treated as zero. It returns the rank used.
//
// Precisely, x = V_r diag(1/s) U_r^T B over the r singular values
// s_i > rcond*s_0 (and > 0), in the package's own thin SVD (see Decompose).
// rcond must be finite and >= 0 (HAE-OLS uses 1e-6); rcond >= 1 gives
// rank 0. For m >= n the SVD is that of the pivoted QR factor of A after
// discarding its trailing block once that block's Frobenius norm is below
// eps*||A||_F, a perturbation of A smaller than the rounding error of the
// factorization itself: directions at the rounding level never count,
// even with rcond = 0. A zero matrix gives x = 0 and rank 0. Lengths must
// be exactly m*n, m*k and n*k, x must not overlap a or b, and inputs must
// be finite. The result is the same bits on every platform, js/wasm
// included. PinvSolve is safe for concurrent use.
func PinvSolve(a []float64, m, n int, b []float64, k int, rcond float64, x []float64) (int, error) {
	return pinvSolve(a, m, n, b, k, rcond, x)
}

// SVD is a thin singular value decomposition A = U diag(S) VT of an M x N
// matrix, K = min(M, N), singular values in decreasing order.
type SVD struct {
	M, N, K int
	U       []float64 // M x K
	S       []float64 // K
	VT      []float64 // K x N
}
