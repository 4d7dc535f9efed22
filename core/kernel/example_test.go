package kernel_test

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kernel"
)

// Two calibration queries attend over three cached keys (d = 2): logits,
// row softmax, salience and key entropy.
func ExampleLogits() {
	const m, n, d = 2, 3, 2
	q := []float32{
		1, 0,
		0, 1,
	}
	k := []float32{
		2, 0, // matches query 0
		0, 2, // matches query 1
		1, 1, // matches both
	}
	s := make([]float32, m*n)
	kernel.Logits(s, q, m, k, n, d, float32(1/math.Sqrt(d)))

	a, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
	kernel.SoftmaxRows(a, s, m, n, mu, sum)

	sal, h := make([]float32, n), make([]float32, n)
	kernel.ColMean(sal, a, m, n)
	kernel.KeyEntropy(h, a, m, n, make([]float32, 2*n))

	fmt.Printf("logits  %.3f\n", s)
	fmt.Printf("softmax %.3f\n", a)
	fmt.Printf("salience %.3f\n", sal)
	fmt.Printf("entropy  %.3f\n", h)
	// Output:
	// logits  [1.414 0.000 0.707 0.000 1.414 0.707]
	// softmax [0.576 0.140 0.284 0.140 0.576 0.284]
	// salience [0.358 0.358 0.284]
	// entropy  [0.713 0.713 1.000]
}

// Attention of one query over four keys that arrive in two blocks (online
// softmax), merged with a third block computed separately, equals attention
// over all six keys at once.
func ExamplePartial() {
	const d = 2
	q := []float32{1, 1}
	k := []float32{1, 0, 0, 1, -1, 0, 0, -1, 2, 2, 0, 0}
	v := []float32{1, 0, 0, 1, -1, 0, 0, -1, 3, 3, 5, 5}

	p := kernel.NewPartial(1, d)
	p.AddKeys(q, k[:4], v[:4], 2, 1, nil, false, nil)   // keys 0, 1
	p.AddKeys(q, k[4:8], v[4:8], 2, 1, nil, false, nil) // keys 2, 3
	other := kernel.NewPartial(1, d)
	other.AddKeys(q, k[8:], v[8:], 2, 1, nil, false, nil) // keys 4, 5
	p.Merge(other)

	all := kernel.NewPartial(1, d)
	all.AddKeys(q, k, v, 6, 1, nil, false, nil)

	out, ref := make([]float32, d), make([]float32, d)
	p.Output(out)
	all.Output(ref)
	fmt.Printf("blocks %.4f\nonce   %.4f\n", out, ref)
	// Output:
	// blocks [2.7707 2.7707]
	// once   [2.7707 2.7707]
}

// Exp32 and Log32 are the float32 exponential and logarithm of the kernels:
// within one ulp, exactly 0 far below, the same bits on every platform.
func ExampleExp32() {
	fmt.Println(kernel.Exp32(0), kernel.Exp32(1), kernel.Exp32(-200), kernel.Exp32(float32(math.Inf(-1))))
	fmt.Println(kernel.Log32(1), kernel.Log32(float32(math.E)), kernel.Log32(0))
	// Output:
	// 1 2.7182817 0 0
	// 0 1 -Inf
}
