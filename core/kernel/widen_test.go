package kernel

import (
	"fmt"
	"math"
	"testing"
)

// TestAxpyWidenRows checks AxpyWidenRows on every path of this build
// against the scalar definition (dst[c] += float64(w[t] * float64(x[j_t,
// c])) for t in turn) bit for bit, at widths around its strips of 32, 16
// and 4 columns, rows in any order (repeats too), weights and values over
// many magnitudes, and that it leaves dst past its length alone.
func TestAxpyWidenRows(t *testing.T) {
	r := &rng{11}
	for _, n := range []int{0, 1, 3, 4, 5, 15, 16, 17, 31, 32, 33, 36, 48, 63, 64, 65, 97} {
		for _, rows := range []int{0, 1, 2, 7, 40} {
			ld := n + r.intn(5)
			nx := 50
			x := r.vec(nx * ld)
			for i := range x {
				x[i] *= float32(math.Ldexp(1, i%40-20))
			}
			idx := make([]int32, rows)
			w := make([]float64, rows)
			for t := range idx {
				idx[t] = int32(r.intn(nx))
				w[t] = float64(r.vec(1)[0]) * math.Ldexp(1, t%30-15)
			}
			dst0 := make([]float64, n+3)
			for i := range dst0 {
				dst0[i] = float64(r.vec(1)[0])
			}
			want := append([]float64(nil), dst0...)
			for t, j := range idx {
				for c := 0; c < n; c++ {
					want[c] += float64(w[t] * float64(x[int(j)*ld+c]))
				}
			}
			for _, p := range kernelPaths() {
				t.Run(fmt.Sprintf("%s/n=%d/rows=%d", p.name, n, rows), func(t *testing.T) {
					dst := append([]float64(nil), dst0...)
					withPath(p, func() { AxpyWidenRows(dst[:n], w, idx, x, ld) })
					for i := range dst {
						if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
							t.Fatalf("dst[%d] = %v, want %v", i, dst[i], want[i])
						}
					}
				})
			}
		}
	}
}
