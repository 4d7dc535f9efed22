// Package attnmap holds a compressed cache's attention map in the factored
// form the core computes it in, small enough to send on every slider move,
// and expands it to the full map given the original one. It has no
// dependencies, so that the heatmap page (which does not import core) can
// expand maps the worker sends.
//
// A compressed attention row is the original row's exactly kept
// probabilities scaled by one factor, plus each synthetic token's
// (summary's or approximate copy's) probability spread over the columns it
// stands for. So for rows r and columns j, with orig the original map:
//
//	Source[j] == Exact:  map[r,j] = orig[r,j] * Scale[r]
//	Source[j] == k >= 0: map[r,j] = Syn[r*C+k] * Share[j] * Inv[r]
//	Source[j] == None:   map[r,j] = 0
//
// and a row with Scale[r] < 0 is all 0 (it keeps no attention). Each
// product is a float32 product, rounded in this order: the expansion gives
// the same bits as core.Group.Maps.
package attnmap

import "fmt"

// Column sources other than a synthetic token's index.
const (
	Exact = -1 // the token is kept exactly
	None  = -2 // the token is evicted (or its summary was dropped)
)

// Factored is a Rows x Cols compressed attention map in factored form.
type Factored struct {
	Rows, Cols int
	C          int       // synthetic tokens
	Scale      []float32 // per row: the factor of the exact columns; < 0: an empty row
	Inv        []float32 // per row: the factor of the synthetic tokens' columns
	Syn        []float32 // Rows x C: each synthetic token's weight in the row
	Source     []int32   // per column: Exact, None or a synthetic token
	Share      []float32 // per column: its part of its synthetic token's probability
}

// Check reports the first inconsistency of f's shape or sources.
func (f *Factored) Check() error {
	switch {
	case f.Rows < 0 || f.Cols < 0 || f.C < 0:
		return fmt.Errorf("attnmap: %d x %d map with %d synthetic tokens: negative size", f.Rows, f.Cols, f.C)
	case len(f.Scale) != f.Rows || len(f.Inv) != f.Rows:
		return fmt.Errorf("attnmap: %d row scales and %d row weights for %d rows", len(f.Scale), len(f.Inv), f.Rows)
	case f.C > 0 && f.Rows > len(f.Syn)/f.C || len(f.Syn) != f.Rows*f.C:
		return fmt.Errorf("attnmap: %d synthetic weights for %d rows x %d tokens", len(f.Syn), f.Rows, f.C)
	case len(f.Source) != f.Cols || len(f.Share) != f.Cols:
		return fmt.Errorf("attnmap: %d column sources and %d shares for %d columns", len(f.Source), len(f.Share), f.Cols)
	}
	for j, s := range f.Source {
		if s < None || s >= int32(f.C) {
			return fmt.Errorf("attnmap: column %d: source %d outside [%d, %d)", j, s, None, f.C)
		}
	}
	return nil
}

// Expand writes the map into dst (Rows x Cols, row-major) from the
// original map orig (the same shape). f must pass Check.
func (f *Factored) Expand(dst, orig []float32) {
	n, c := f.Cols, f.C
	dst, orig = dst[:f.Rows*n], orig[:f.Rows*n]
	// The columns of each kind, once: the rows then take no branch per
	// cell (which costs more than the product in Go's wasm code).
	var exact, syn []int32
	for j, s := range f.Source[:n] {
		switch {
		case s == Exact:
			exact = append(exact, int32(j))
		case s >= 0:
			syn = append(syn, int32(j))
		}
	}
	for r := 0; r < f.Rows; r++ {
		out, o := dst[r*n:(r+1)*n], orig[r*n:(r+1)*n]
		clear(out)
		fe, inv := f.Scale[r], f.Inv[r]
		if fe < 0 {
			continue
		}
		for _, j := range exact {
			out[j] = o[j] * fe
		}
		sr := f.Syn[r*c : (r+1)*c]
		for _, j := range syn {
			out[j] = sr[f.Source[j]] * f.Share[j] * inv
		}
	}
}
