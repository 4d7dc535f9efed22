//go:build amd64 && !purego

package kernel

import (
	"fmt"
	"testing"
)

// withGo runs f with the portable Go kernels.
func withGo(f func()) {
	useAsm = false
	defer func() { useAsm = true }()
	f()
}

// TestAsmMatchesGo runs every kernel that has an SSE path with and without
// it and requires identical bits.
func TestAsmMatchesGo(t *testing.T) {
	r := &rng{16}
	all := append([]shape{{128, 1024, 64}, {64, 257, 128}, {5, 301, 96}, {4, 4, 256}, {3, 5, 257}, {2, 7, 44}, {9, 31, 52}}, shapes...)
	for _, s := range all {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.n, s.d), func(t *testing.T) {
			m, n, d := s.m, s.n, s.d
			q, k, v := r.vec(m*d), r.vec(n*d), r.vec(n*d)
			a := attention(r, m, n, 4)
			idx := r.subset(n, 0.5, true)
			bias := r.vec(n)
			run := func() [][]float32 {
				sl, mm, z, y := make([]float32, m*n), make([]float32, m*d), make([]float32, m), make([]float32, m*d)
				Logits(sl, q, m, k, n, d, 0.3)
				MatMul(mm, a, m, n, v, d)
				BinMass(z, y, a, m, n, idx, v, d)
				p := NewPartial(m, d)
				p.AddKeys(q, k, v, n, 0.3, bias, true, nil)
				p2 := NewPartial(m, d)
				p2.AddLogits(sl, n, idx, v)
				p3 := NewPartial(m, d)
				p3.AddLogits(sl, n, nil, v)
				p.Merge(p2)
				p.Merge(p3)
				out := make([]float32, m*d)
				p.Output(out)
				sm, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
				SoftmaxRows(sm, sl, m, n, mu, sum)
				ke, re := make([]float32, n), make([]float32, m)
				KeyEntropy(ke, sm, m, n, make([]float32, 2*n))
				RowEntropy(re, sm, m, n)
				return [][]float32{sl, mm, z, y, out, p.Sum, sm, sum, ke, re}
			}
			fast := run()
			var slow [][]float32
			withGo(func() { slow = run() })
			for i, name := range []string{"Logits", "MatMul", "BinMass z", "BinMass y", "Partial", "Partial sums", "SoftmaxRows", "SoftmaxRows sum", "KeyEntropy", "RowEntropy"} {
				sameBits(t, name, fast[i], slow[i])
			}
		})
	}
	var h uint64
	withGo(func() { h = goldenHash(0) })
	if h != golden {
		t.Errorf("portable kernels: golden hash %#x, want %#x", h, golden)
	}
}

// TestElementwiseMatchGo runs TestElementwiseMatch on the portable loops
// (the default run covers the SSE loops).
func TestElementwiseMatchGo(t *testing.T) {
	withGo(func() { TestElementwiseMatch(t) })
}

// TestAsmBounds: the Go wrapper of the SSE weighted-sum kernel panics
// (instead of reading out of bounds) on a key index past the end of b or a
// negative one, and on too short a b.
func TestAsmBounds(t *testing.T) {
	b := make([]float32, 4*8)
	for _, tc := range []struct {
		idx  []int32
		nt   int
		cols int
	}{{[]int32{0, 4}, 2, 8}, {[]int32{-1}, 1, 8}, {[]int32{3, 1 << 30}, 2, 8}, {nil, 5, 8}, {nil, 4, 12}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("axpy with idx %v, %d terms, %d columns did not panic", tc.idx, tc.nt, tc.cols)
				}
			}()
			axpy(make([]float32, tc.cols), make([]float32, tc.nt), tc.idx, b, 8)
		}()
	}
}

func BenchmarkLogitsGo(b *testing.B) {
	useAsm = false
	defer func() { useAsm = true }()
	BenchmarkLogits(b)
}

func BenchmarkMatMulGo(b *testing.B) {
	useAsm = false
	defer func() { useAsm = true }()
	BenchmarkMatMul(b)
}
