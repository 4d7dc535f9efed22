package quant_test

import (
	"fmt"

	"github.com/haeols/haeols/core/model/quant"
)

// A 2x32 matrix quantized to Q8_0 (34 bytes a row) multiplies a vector
// block by block, never expanded to float32; the exact result is ±16.
func ExampleMatVec() {
	w := make([]float32, 2*32)
	for i := range w {
		w[i] = float32(i%32) / 31
	}
	for i := 32; i < 64; i++ {
		w[i] = -w[i]
	}
	b, err := quant.Quantize(quant.Q8_0, w)
	if err != nil {
		panic(err)
	}
	x := make([]float32, 32)
	for i := range x {
		x[i] = 1
	}
	y := make([]float32, 2)
	quant.MatVec(quant.Q8_0, y, b, 2, 32, x)
	fmt.Printf("%d bytes, y = [%.3f %.3f]\n", len(b), y[0], y[1])
	// Output: 68 bytes, y = [15.999 -15.999]
}
