//go:build linux && cgo

package conformance

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/haeols/haeols/core/model/quant"
)

// TestDequantizeAsGGML checks that haeols decodes ggml's blocks of every
// type it reads to the same float32 bits as ggml's own dequantize_row_*
// (or its F16/BF16 row conversions): blocks that ggml_quantize_chunk wrote
// from rows of several scales, with outliers, zeros and sign runs.
func TestDequantizeAsGGML(t *testing.T) {
	_, g := references(t)
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 16, 512
	for _, typ := range MatrixTypes[1:] {
		t.Run(typ.String(), func(t *testing.T) {
			x := make([]float32, rows*cols)
			for i := range x {
				row := i / cols
				scale := math.Pow(10, float64(row%8)-4) // 1e-4 … 1e3
				v := float32(scale * r.NormFloat64())
				switch {
				case row == 8:
					v = 0 // an all-zero row
				case row == 9 && i%97 == 0:
					v *= 50 // outliers
				case row == 10:
					v = float32(math.Abs(float64(v))) // one sign
				}
				x[i] = v
			}
			b, err := g.Quantize(typ, rows, cols, x)
			if err != nil {
				t.Fatal(err)
			}
			want, err := g.Dequantize(typ, b, len(x))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, len(x))
			if err := quant.Dequantize(typ, got, b); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					if bad < 5 {
						t.Errorf("%s: value %d (row %d): haeols %v (%#08x), ggml %v (%#08x)", typ, i, i/cols, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d values differ from ggml's", typ, bad, len(got))
			}
		})
	}
}
