package solve_test

import (
	"fmt"

	"github.com/haeols/haeols/core/solve"
)

// Fit b with non-negative weights on three columns; the unconstrained least
// squares solution, [0.93 1.93 -0.07], would give the third column a negative
// weight.
func ExampleNNLS() {
	a := []float64{ // 4 x 3, row-major
		1, 0, 1,
		1, 1, 0,
		0, 1, 1,
		1, 1, 1,
	}
	b := []float64{1, 3, 2, 2.5}
	x := make([]float64, 3)
	if err := solve.NNLS(a, 4, 3, b, x); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = [%.4f %.4f %.4f]\n", x[0], x[1], x[2])
	// Output:
	// x = [0.9000 1.9000 0.0000]
}

// Solve a rank-deficient system: the second column repeats the first, so the
// minimum-norm solution splits the weight evenly.
func ExamplePinvSolve() {
	a := []float64{ // 3 x 2, rank 1
		1, 1,
		2, 2,
		3, 3,
	}
	b := []float64{2, 4, 6} // 3 x 1
	x := make([]float64, 2)
	rank, err := solve.PinvSolve(a, 3, 2, b, 1, 1e-6, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("rank %d, x = [%.4f %.4f]\n", rank, x[0], x[1])
	// Output:
	// rank 1, x = [1.0000 1.0000]
}

// Keep 99% of the energy of a matrix whose rows are nearly proportional.
func ExampleSVD_RankForEnergy() {
	a := []float64{
		1, 2, 3,
		2, 4, 6.1,
		3, 6, 9,
	}
	d, err := solve.Decompose(a, 3, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := d.RankForEnergy(0.99)
	approx := make([]float64, 9)
	d.Reconstruct(r, approx)
	fmt.Printf("rank %d of %d, a[1][2] ~ %.2f\n", r, d.K, approx[5])
	// Output:
	// rank 1 of 3, a[1][2] ~ 6.07
}

// Project a vector onto the rows of a 2 x 4 matrix: each entry is the Dot
// of a row with x, the same bits as Dot gives.
func ExampleDots() {
	w := []float64{ // 2 x 4, row-major
		1, 0, 2, 0,
		0.5, 0.5, 0.5, 0.5,
	}
	x := []float64{1, 2, 3, 4}
	dst := make([]float64, 2)
	solve.Dots(dst, w, x)
	fmt.Println(dst, dst[0] == solve.Dot(w[:4], x))
	// Output:
	// [7 5] true
}
