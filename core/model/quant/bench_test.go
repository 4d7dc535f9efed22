package quant

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMatVec: a 576x576 matrix (SmolLM2-135M's attention width)
// times a vector, per type; compare types as ratios of ns/op.
func BenchmarkMatVec(b *testing.B) {
	const n = 576
	r := rand.New(rand.NewPCG(1, 1))
	w := make([]float32, n*n)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()
	}
	y := make([]float32, n)
	for _, typ := range []Type{F32, F16, Q8_0, Q4_0, Q4_K, Q6_K} {
		cols := n
		if typ.BlockSize() == QKK {
			cols = 512 // a whole number of super-blocks
		}
		q, err := Quantize(typ, w[:n*cols])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(q)))
			for b.Loop() {
				MatVec(typ, y, q, n, cols, x)
			}
		})
	}
}

// BenchmarkMatMul: 64 vectors (a prefill block) through a 576x512 matrix
// per type, against 64 MatVec calls (MatVecLoop): the ratio is what
// decoding each block once for all vectors saves.
func BenchmarkMatMul(b *testing.B) {
	const rows, cols, n = 576, 512, 64
	r := rand.New(rand.NewPCG(2, 2))
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = r.Float32()
	}
	y := make([]float32, n*rows)
	for _, typ := range []Type{F32, Q8_0, Q4_K, Q6_K} {
		q, err := Quantize(typ, w)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(typ.String(), func(b *testing.B) {
			for b.Loop() {
				MatMul(typ, y, q, rows, cols, x, n)
			}
		})
		b.Run(typ.String()+"/MatVecLoop", func(b *testing.B) {
			for b.Loop() {
				for j := 0; j < n; j++ {
					MatVec(typ, y[j*rows:(j+1)*rows], q, rows, cols, x[j*cols:(j+1)*cols])
				}
			}
		})
	}
}
