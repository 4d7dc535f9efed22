package solve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestVecMatchesGo runs the kernels with vector loops, and the solves built
// on them, with each archsimd width this build and CPU have (vecAvail: in
// wasm the loops that run; on amd64 with AVX2 the same source, which the
// assembly replaces there; TestAsmMatchesGo checks the assembly) and with
// the Go loops, and requires identical bits.
func TestVecMatchesGo(t *testing.T) {
	if len(vecAvail) == 0 {
		t.Skip("no archsimd loops in this build (GOEXPERIMENT=simd, amd64 with AVX2 or wasm)")
	}
	for _, w := range vecAvail {
		t.Run(fmt.Sprintf("lanes=%d", w), func(t *testing.T) {
			lanes, asm := vecLanes, useAsm
			defer func() { vecLanes, useAsm = lanes, asm }()
			pathsMatch(t, func(vec bool) {
				if vec {
					vecLanes, useAsm = w, false
				} else {
					vecLanes, useAsm = 0, false
				}
			})
		})
	}
}

// pathsMatch runs the kernels and the solves with set(true) and with
// set(false) and requires identical bits.
func pathsMatch(t *testing.T, set func(vec bool)) {
	r := rand.New(rand.NewPCG(3, 9))
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
		}
		return x
	}
	both := func(what string, f func() []float64) {
		t.Helper()
		set(true)
		fast := f()
		set(false)
		slow := f()
		for i := range fast {
			if math.Float64bits(fast[i]) != math.Float64bits(slow[i]) {
				t.Fatalf("%s[%d]: %v with vector loops, %v without", what, i, fast[i], slow[i])
			}
		}
	}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 64, 65, 130} {
		x := [][]float64{vec(n), vec(n), vec(n), vec(n)}
		d0, a := vec(n), vec(4)
		both("kernels", func() []float64 {
			d := append([]float64(nil), d0...)
			axpy(d, a[0], x[0])
			axpy4(d, a[0], a[1], a[2], a[3], x[0], x[1], x[2], x[3])
			xs := [][]float64{append([]float64(nil), x[0]...), append([]float64(nil), x[1]...), append([]float64(nil), x[2]...), append([]float64(nil), x[3]...)}
			ger4(d, a[0], a[1], a[2], a[3], xs[0], xs[1], xs[2], xs[3])
			out := append(d, xs[0]...)
			for _, v := range xs[1:] {
				out = append(out, v...)
			}
			return out
		})
	}
	for w := 0; w <= 21; w++ {
		for _, nv := range []int{0, 1, 2, 3, 4, 5, 9, 64} {
			stride := w + 3
			head0, rows0, v, tau := vec(w), vec(nv*stride), vec(nv), r.Float64()*2
			both("reflectRows", func() []float64 {
				head := append([]float64(nil), head0...)
				rows := append([]float64(nil), rows0...)
				reflectRows(head, v, tau, rows, stride, make([]float64, w))
				return append(head, rows...)
			})
		}
	}
	for _, sh := range [][2]int{{128, 68}, {512, 70}, {33, 17}, {9, 9}, {64, 3}} {
		m, n := sh[0], sh[1]
		a := make([]float64, m*n)
		for i := range a {
			a[i] = math.Exp(r.NormFloat64())
		}
		b := vec(m)
		y := vec(m * 5)
		both("solves", func() []float64 {
			x := make([]float64, n)
			if err := NNLS(a, m, n, b, x); err != nil {
				t.Fatal(err)
			}
			out := make([]float64, n*5)
			if _, err := PinvSolve(a, m, n, y, 5, 1e-6, out); err != nil {
				t.Fatal(err)
			}
			s, err := Decompose(append([]float64(nil), a...), m, n)
			if err != nil {
				t.Fatal(err)
			}
			return append(append(x, out...), s.S...)
		})
	}
}
