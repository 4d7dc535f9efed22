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

// TestExpShiftTo checks ExpShiftTo on every path against Exp32 element by
// element (the bits ExpShift gives): rows mostly in the fast range with
// arguments out of it (zero results, denormals, overflow, infinities,
// NaN) at every offset within groups of 4 and 8, at lengths around them,
// aliased and not, and the sweep over all float32 bit patterns of
// TestElementwiseMatch.
func TestExpShiftTo(t *testing.T) {
	r := &rng{5}
	special := []float32{expFastMin, expFastMax, math.Nextafter32(expFastMin, -100), math.Nextafter32(expFastMax, 100),
		expMin, expMax, -1e30, 1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0}
	var rows [][]float32
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 64, 100} {
		base := make([]float32, n)
		for i := range base {
			base[i] = 20 * r.normish()
		}
		rows = append(rows, base)
		for k := 0; k < n; k += 3 {
			x := append([]float32(nil), base...)
			x[k] = special[(k/3)%len(special)]
			rows = append(rows, x)
		}
	}
	var sweep []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		sweep = append(sweep, math.Float32frombits(uint32(b)))
	}
	rows = append(rows, sweep)
	for _, p := range kernelPaths() {
		t.Run(p.name, func(t *testing.T) {
			for _, x := range rows {
				for _, mx := range []float32{0, 3, -50} {
					got := make([]float32, len(x))
					withPath(p, func() { ExpShiftTo(got, x, mx) })
					same := append([]float32(nil), x...)
					withPath(p, func() { ExpShiftTo(same, same, mx) })
					for j, v := range x {
						w := Exp32(v - mx)
						if !sameFloat(got[j], w) || !sameFloat(same[j], w) {
							t.Fatalf("n=%d: ExpShiftTo(%g - %g) = %g, %g in place (%#x), Exp32 %g (%#x)", len(x), v, mx, got[j], same[j], math.Float32bits(got[j]), w, math.Float32bits(w))
						}
					}
				}
			}
		})
	}
}
