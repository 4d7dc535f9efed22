package kernel

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"
)

// TestDot4 checks MatMul4 on every path of this build against the portable
// loops bit for bit (the lanes are the four accumulators) and against a
// float64 reference within 1e-5 relative to the sum of |products|, for
// lengths around the lane width and blocks of 1 to 5 rows; the results'
// hash is pinned, the same on every platform and path.
func TestDot4(t *testing.T) {
	r := &rng{23}
	h := fnv.New64a()
	for _, n := range []int{1, 3, 4, 5, 7, 8, 13, 64, 255, 256, 769} {
		for _, nb := range []int{1, 2, 5} {
			rows := 7
			w, x := r.vec(rows*n), r.vec(nb*n)
			want := matMul4Paths(t, w, x, nb, n, rows)
			for b := 0; b < nb; b++ {
				for i := 0; i < rows; i++ {
					var s, mag float64
					for j := 0; j < n; j++ {
						p := float64(w[i*n+j]) * float64(x[b*n+j])
						s += p
						mag += math.Abs(p)
					}
					if d := math.Abs(float64(want[b*rows+i]) - s); d > 1e-5*mag+1e-30 {
						t.Errorf("n %d: row %d of x %d: %v, float64 %v", n, i, b, want[b*rows+i], s)
					}
				}
			}
			one := make([]float32, rows)
			MatVec4(one, w, x[:n])
			for i := range one {
				if one[i] != want[i] || Dot4(w[i*n:(i+1)*n], x[:n]) != want[i] {
					t.Fatalf("n %d: MatVec4/Dot4 differ from MatMul4's first row", n)
				}
			}
			for _, v := range want {
				fmt.Fprintf(h, "%08x", math.Float32bits(v))
			}
		}
	}
	// Blocks of 4, 8 and 9 rows of x (four dots in flight, and a remainder)
	// and 4 to 9 weight rows of one (four rows in flight), every path
	// against the portable loops.
	r2 := &rng{29}
	for _, n := range []int{3, 4, 9, 64, 257} {
		for _, nb := range []int{1, 4, 8, 9} {
			for rows := 4; rows <= 9; rows++ {
				w, x := r2.vec(rows*n), r2.vec(nb*n)
				matMul4Paths(t, w, x, nb, n, rows)
			}
		}
	}
	const golden = 0xf3c71c30b2a747bb
	if got := h.Sum64(); got != golden {
		t.Errorf("hash %#x, want %#x", got, uint64(golden))
	}
}

// matMul4Paths runs MatMul4 on every path of this build and requires the
// portable loops' bits; it returns them.
func matMul4Paths(t *testing.T, w, x []float32, nb, n, rows int) []float32 {
	t.Helper()
	want := make([]float32, nb*rows)
	dot4Go(want, w, x, nb, n, rows)
	for _, p := range kernelPaths() {
		got := make([]float32, nb*rows)
		withPath(p, func() { MatMul4(got, w, x, nb) })
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d, %d rows of x, %d weight rows, path %s: out[%d] = %v, portable %v", n, nb, rows, p.name, i, got[i], want[i])
			}
		}
	}
	return want
}
