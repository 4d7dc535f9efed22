package solve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// vecPaths lists the ways this build and CPU can run colMaxAbs and
// scaleCols (the four-lane archsimd loops with the AVX assembly, the
// two-lane ones, the Go loops) with a function that selects each.
func vecPaths() []struct {
	name string
	set  func()
} {
	type path = struct {
		name string
		set  func()
	}
	var ps []path
	if hasVec4 && useAVX {
		ps = append(ps, path{"lanes=4", func() { useAsm, useAVX, vecLanes = true, true, 0 }})
	}
	for _, w := range vecAvail {
		ps = append(ps, path{fmt.Sprintf("lanes=%d", w), func() { useAsm, vecLanes = false, w }})
	}
	return append(ps, path{"go", func() { useAsm, vecLanes = false, 0 }})
}

// TestColMaxAbsScaleColsPaths checks colMaxAbs and scaleCols on every
// path against the Go loops bit for bit (the maxima, the NaN report, the
// scaled rows and the column sums of squares, of the scaled rows and of
// a itself), at widths around the
// vector blocks, with zeros of both signs, infinities and NaNs placed in
// every column; and that NNLS names a NaN or an infinity anywhere in a.
func TestColMaxAbsScaleColsPaths(t *testing.T) {
	asm, avx, lanes := useAsm, useAVX, vecLanes
	defer func() { useAsm, useAVX, vecLanes = asm, avx, lanes }()
	r := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 65} {
		for _, m := range []int{1, 2, 5, 33} {
			for _, special := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310} {
				a := make([]float64, m*n)
				for i := range a {
					a[i] = r.NormFloat64() * math.Exp(5*r.NormFloat64())
				}
				a[r.IntN(m)*n+r.IntN(n)] = special
				scl := make([]float64, n)
				for j := range scl {
					scl[j] = math.Ldexp(1, r.IntN(40)-20)
				}
				run := func() ([]float64, bool) {
					cm := make([]float64, n)
					ok := colMaxAbs(cm, a, m, n)
					ld := n + 2
					dst := make([]float64, m*ld)
					nrm := make([]float64, n)
					for j := range nrm {
						nrm[j] = float64(j)
					}
					scaleCols(dst, ld, a, m, n, scl, nrm)
					sq := make([]float64, n)
					scaleCols(nil, 0, a, m, n, nil, sq)
					if !ok {
						cm = nil // unspecified
					}
					return append(append(append(cm, dst...), nrm...), sq...), ok
				}
				useAsm, vecLanes = false, 0
				want, wantOK := run()
				for _, p := range vecPaths() {
					p.set()
					got, ok := run()
					useAsm, useAVX, vecLanes = asm, avx, lanes
					if ok != wantOK {
						t.Fatalf("%s m=%d n=%d special %v: colMaxAbs reports %v, Go %v", p.name, m, n, special, ok, wantOK)
					}
					for i := range want {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s m=%d n=%d special %v: element %d is %v, Go %v", p.name, m, n, special, i, got[i], want[i])
						}
					}
				}
				if math.IsNaN(special) || math.IsInf(special, 0) {
					err := NNLS(a, m, n, make([]float64, m), make([]float64, n))
					if err == nil {
						t.Fatalf("m=%d n=%d: NNLS took a with %v", m, n, special)
					}
				}
			}
		}
	}
}

// TestFiniteMaxScalePaths checks allFinite, absMax and scaleTo on every
// path against the Go loops bit for bit, at lengths around the vector
// blocks, with a zero of either sign, a denormal, an infinity or a NaN
// (allFinite only) at every position.
func TestFiniteMaxScalePaths(t *testing.T) {
	asm, avx, lanes := useAsm, useAVX, vecLanes
	defer func() { useAsm, useAVX, vecLanes = asm, avx, lanes }()
	r := rand.New(rand.NewPCG(6, 1))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 33} {
		for pos := -1; pos < n; pos++ {
			for _, special := range []float64{0, math.Copysign(0, -1), 4e-320, math.Inf(-1), math.NaN()} {
				a := make([]float64, n)
				for i := range a {
					a[i] = r.NormFloat64() * math.Exp(5*r.NormFloat64())
				}
				if pos >= 0 {
					a[pos] = special
				}
				finite := pos < 0 || !(math.IsInf(special, 0) || math.IsNaN(special))
				run := func() ([]float64, bool) {
					ok := allFinite(a)
					if !finite {
						return nil, ok
					}
					dst := make([]float64, n)
					scaleTo(dst, a, 0x1p-7)
					return append(dst, absMax(a)), ok
				}
				useAsm, vecLanes = false, 0
				want, wantOK := run()
				if wantOK != finite {
					t.Fatalf("n=%d pos %d %v: allFinite %v on the Go path", n, pos, special, wantOK)
				}
				for _, p := range vecPaths() {
					p.set()
					got, ok := run()
					useAsm, useAVX, vecLanes = asm, avx, lanes
					if ok != wantOK {
						t.Fatalf("%s n=%d pos %d %v: allFinite %v, Go %v", p.name, n, pos, special, ok, wantOK)
					}
					for i := range want {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s n=%d pos %d %v: element %d is %v, Go %v", p.name, n, pos, special, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestInvFrob2 checks invFrob2 (four columns of R^-1 side by side) bit for
// bit against the column-by-column back substitution it replaces, for
// every n up to 13 and a few larger, on triangles whose entries span many
// magnitudes.
func TestInvFrob2(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 7))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 36, 64, 65} {
		ra := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				ra[i*n+j] = r.NormFloat64() * math.Exp(2*r.NormFloat64())
			}
		}
		z := make([]float64, n)
		var want float64
		for c := range n {
			clear(z)
			z[c] = 1 / ra[c*n+c]
			want += float64(z[c] * z[c])
			for i := c - 1; i >= 0; i-- {
				var acc float64
				row := ra[i*n : i*n+n]
				for j := i + 1; j <= c; j++ {
					acc += float64(row[j] * z[j])
				}
				z[i] = -acc / row[i]
				want += float64(z[i] * z[i])
			}
		}
		if got := invFrob2(ra, n, make([]float64, 4*n)); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("n=%d: %v, want %v", n, got, want)
		}
	}
}

// TestDots checks Dots, a row's Dot at a time (in wasm SIMD128 assembly
// where the row length is a multiple of 4), against Dot on each row, bit
// for bit, for row lengths around the assembly's multiples of 4.
func TestDots(t *testing.T) {
	rng := newRand(7)
	for _, tc := range []struct{ rows, n int }{{1, 4}, {3, 8}, {64, 24}, {5, 1}, {7, 3}, {2, 5}, {9, 6}, {4, 12}, {1, 0}, {0, 4}} {
		w, x := randNormal(rng, tc.rows, tc.n), randNormal(rng, tc.n, 1)
		if tc.rows > 0 && tc.n > 0 {
			w[0] = math.Copysign(0, -1) // a signed zero among the products
			x[len(x)-1] *= 1e300        // and an overflow where the row has it
		}
		dst := make([]float64, tc.rows)
		Dots(dst, w, x)
		for r := range tc.rows {
			want := Dot(w[r*tc.n:r*tc.n+tc.n], x)
			if math.Float64bits(dst[r]) != math.Float64bits(want) {
				t.Errorf("rows %d, n %d: row %d is %v, Dot gives %v", tc.rows, tc.n, r, dst[r], want)
			}
		}
	}
}
