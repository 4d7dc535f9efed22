package solve

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them and
// names the function and the parameter involved, so callers can test the kind
// with errors.Is and still show a useful message.
var (
	// ErrShape reports a negative dimension or a slice whose length does not
	// match the dimensions.
	ErrShape = errors.New("dimension mismatch")

	// ErrNotFinite reports a NaN or an infinity in an input.
	ErrNotFinite = errors.New("non-finite value")

	// ErrInvalid reports a parameter outside its domain (e.g. a negative rcond).
	ErrInvalid = errors.New("invalid parameter")

	// ErrIterationLimit reports that NNLS hit its iteration cap. The x it
	// leaves behind is feasible (x >= 0) but not proven optimal.
	ErrIterationLimit = errors.New("iteration limit reached")

	// ErrNoConvergence reports that the SVD iteration did not converge.
	ErrNoConvergence = errors.New("SVD did not converge")
)
