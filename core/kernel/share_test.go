package kernel

import (
	"fmt"
	"math"
	"testing"
)

// TestShareKernels checks ShareTargets and ShareOut on every path against
// their scalar definitions bit for bit, at lengths around the 4-lane
// blocks, both signs, with and without acc, values over many magnitudes
// and special values (zeros of both signs, infinities, NaN).
func TestShareKernels(t *testing.T) {
	r := &rng{13}
	f64 := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(r.normish()) * math.Ldexp(1, i%50-25)
		}
		return x
	}
	f32 := func(n int) []float32 {
		x := r.vec(n)
		for i := range x {
			x[i] *= float32(math.Ldexp(1, i%30-15))
		}
		return x
	}
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e300, -1e-300}
	for _, n := range []int{0, 1, 3, 4, 5, 8, 13, 64, 67} {
		for _, sign := range []float64{1, -1} {
			for _, special := range []bool{false, true} {
				tot, p, nonY, by := f64(n), f64(n), f64(n), f64(n)
				x, sv, acc := f32(n), f32(n), f32(n)
				if special {
					for i := 0; i < n; i += 2 {
						s := specials[i%len(specials)]
						switch i % 4 {
						case 0:
							p[i], nonY[i] = s, s
						default:
							tot[i], by[i] = s, s
							x[i], sv[i] = float32(s), float32(-s)
						}
					}
				}
				f, g, den := 0.75, -1.5e-3, 3.25
				wantY := make([]float64, n)
				for k := range wantY {
					wantY[k] = f * (tot[k] - (p[k] + float64(sign*float64(x[k]))))
				}
				want := [2][]float32{make([]float32, n), make([]float32, n)}
				for a, withAcc := range []bool{false, true} {
					for e := range want[a] {
						ey := nonY[e] + (by[e] + float64(sign*float64(x[e])))
						num := float64(f*ey) + float64(sv[e])
						if withAcc {
							num += float64(g * float64(acc[e]))
						}
						want[a][e] = float32(num / den)
					}
				}
				for _, pa := range kernelPaths() {
					t.Run(fmt.Sprintf("%s/n=%d/sign=%g/special=%v", pa.name, n, sign, special), func(t *testing.T) {
						y := make([]float64, n)
						o := [2][]float32{make([]float32, n), make([]float32, n)}
						withPath(pa, func() {
							ShareTargets(y, f, tot, p, sign, x)
							ShareOut(o[0], nonY, by, sign, x, f, sv, g, nil, den)
							ShareOut(o[1], nonY, by, sign, x, f, sv, g, acc, den)
						})
						for k := range y {
							if math.Float64bits(y[k]) != math.Float64bits(wantY[k]) && !(y[k] != y[k] && wantY[k] != wantY[k]) {
								t.Fatalf("ShareTargets[%d] = %v, want %v", k, y[k], wantY[k])
							}
						}
						for a := range o {
							for e := range o[a] {
								if !sameFloat(o[a][e], want[a][e]) {
									t.Fatalf("ShareOut (acc %v)[%d] = %v, want %v", a == 1, e, o[a][e], want[a][e])
								}
							}
						}
					})
				}
			}
		}
	}
}
