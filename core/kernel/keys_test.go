package kernel

import (
	"math"
	"testing"
)

// TestKeyDots packs keys with PackKey and checks KeyDots on every path of
// this build against Dot bit for bit (the order of an attention logit) and
// against a float64 reference within 1e-5 of the sum of |products|, for key
// counts around the block size, head sizes from 1 to 65 and 1 to 6 query
// rows (the vector kernels take them 4 and 2 at a time).
func TestKeyDots(t *testing.T) {
	r := &rng{41}
	for _, d := range []int{1, 3, 8, 64, 65} {
		for _, n := range []int{1, 7, 8, 9, 16, 23, 40} {
			for _, m := range []int{1, 2, 3, 5, 6} {
				q, k := r.vec(m*d), r.vec(n*d)
				kt := make([]float32, PackedLen(n, d))
				for i := range kt {
					kt[i] = float32(math.NaN()) // the padding is never read into a result
				}
				for j := 0; j < n; j++ {
					PackKey(kt, j, k[j*d:(j+1)*d])
				}
				for _, p := range kernelPaths() {
					ldd := n + 3 // rows apart, as an attention's rows of prefix and continuation
					got := make([]float32, m*ldd)
					withPath(p, func() { KeyDots(got, ldd, q, m, kt, n, d) })
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							want := Dot(q[i*d:(i+1)*d], k[j*d:])
							if g := got[i*ldd+j]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("d %d, n %d, m %d, path %s: row %d key %d = %v, Dot %v", d, n, m, p.name, i, j, g, want)
							}
							var s, mag float64
							for c := 0; c < d; c++ {
								pr := float64(q[i*d+c]) * float64(k[j*d+c])
								s += pr
								mag += math.Abs(pr)
							}
							if e := math.Abs(float64(want) - s); e > 1e-5*mag+1e-30 {
								t.Fatalf("d %d, n %d: row %d key %d = %v, float64 %v", d, n, i, j, want, s)
							}
						}
					}
				}
			}
		}
	}
}

// TestPackedLen checks the packed length of whole blocks.
func TestPackedLen(t *testing.T) {
	for _, c := range []struct{ n, d, want int }{{0, 64, 0}, {1, 64, 512}, {8, 3, 24}, {9, 3, 48}} {
		if got := PackedLen(c.n, c.d); got != c.want {
			t.Errorf("PackedLen(%d, %d) = %d, want %d", c.n, c.d, got, c.want)
		}
	}
}
