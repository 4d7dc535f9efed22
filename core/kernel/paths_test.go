package kernel

import (
	"fmt"
	"math"
	"testing"
)

// kernelPath is one way this build and CPU can run the kernels: an archsimd
// width (vecLanes), the SSE assembly (useAsm) or the portable loops.
type kernelPath struct {
	name  string
	lanes int
	asm   bool
	zmm   bool // with 8 lanes, the 16-lane AVX-512 blocks too (wide16)
}

// asmBuilt is whether this build has the SSE assembly.
var asmBuilt = useAsm

// portable is the path of the portable Go loops, which define the bits.
var portable = kernelPath{"portable", 0, false, false}

// kernelPaths lists every path of this build and CPU, the portable loops
// last: each archsimd width of vecAvail (8 and 4 on amd64 with AVX2 and
// GOEXPERIMENT=simd, 4 in wasm), 8 lanes with and without the AVX-512
// blocks where the CPU has AVX-512, then the SSE assembly on amd64.
func kernelPaths() []kernelPath {
	var ps []kernelPath
	for _, w := range vecAvail {
		if w == 8 && zmmAvail {
			ps = append(ps, kernelPath{"archsimd16", w, false, true})
		}
		ps = append(ps, kernelPath{fmt.Sprintf("archsimd%d", w), w, false, false})
	}
	if asmBuilt {
		ps = append(ps, kernelPath{"sse", 0, true, false})
	}
	return append(ps, portable)
}

// withPath runs f on the kernel path p.
func withPath(p kernelPath, f func()) {
	lanes, asm, zmm := vecLanes, useAsm, wide16
	vecLanes, useAsm, wide16 = p.lanes, p.asm, p.zmm
	defer func() { vecLanes, useAsm, wide16 = lanes, asm, zmm }()
	f()
}

// withGo runs f on the portable loops.
func withGo(f func()) { withPath(portable, f) }

// TestPathsMatch runs every kernel on every path of this build (see
// kernelPaths) and requires the portable loops' bits, over shapes around
// every block size (rows by 8 and 4, keys by 4, columns by 32, 16, 8 and
// 4); every path must also give the golden hash.
func TestPathsMatch(t *testing.T) {
	r := &rng{16}
	all := append([]shape{{128, 1024, 64}, {64, 257, 128}, {5, 301, 96}, {4, 4, 256}, {3, 5, 257}, {2, 7, 44},
		{9, 31, 52}, {13, 9, 36}, {12, 8, 12}, {7, 6, 40}, {1, 5, 4}, {17, 33, 3}}, shapes...)
	paths := kernelPaths()
	t.Logf("paths: %v", paths)
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
			var want [][]float32
			withGo(func() { want = run() })
			for _, p := range paths[:len(paths)-1] {
				var got [][]float32
				withPath(p, func() { got = run() })
				for i, name := range []string{"Logits", "MatMul", "BinMass z", "BinMass y", "Partial", "Partial sums", "SoftmaxRows", "SoftmaxRows sum", "KeyEntropy", "RowEntropy"} {
					sameBits(t, p.name+": "+name, got[i], want[i])
				}
			}
		})
	}
	for _, p := range paths {
		var h uint64
		withPath(p, func() { h = goldenHash(0) })
		if h != golden {
			t.Errorf("%s: golden hash %#x, want %#x", p.name, h, golden)
		}
	}
}

// TestElementwiseMatchPaths runs TestElementwiseMatch on every path (the
// default run covers the default one).
func TestElementwiseMatchPaths(t *testing.T) {
	for _, p := range kernelPaths() {
		t.Run(p.name, func(t *testing.T) { withPath(p, func() { TestElementwiseMatch(t) }) })
	}
}

// TestAxpyBounds: on every path the weighted-sum kernels panic (instead of
// reading out of bounds) on a key index past the end of b or a negative
// one, and on too short a b.
func TestAxpyBounds(t *testing.T) {
	b := make([]float32, 4*8)
	for _, p := range kernelPaths() {
		for _, tc := range []struct {
			idx  []int32
			nt   int
			cols int
		}{{[]int32{0, 4}, 2, 8}, {[]int32{-1}, 1, 8}, {[]int32{3, 1 << 30}, 2, 8}, {nil, 5, 8}, {nil, 4, 12}} {
			for _, two := range []bool{false, true} {
				withPath(p, func() {
					defer func() {
						if recover() == nil {
							t.Errorf("%s: axpy (two rows %v) with idx %v, %d terms, %d columns did not panic", p.name, two, tc.idx, tc.nt, tc.cols)
						}
					}()
					c := make([]float32, tc.nt)
					if two {
						axpy2(make([]float32, tc.cols), make([]float32, tc.cols), c, c, tc.idx, b, 8)
					} else {
						axpy(make([]float32, tc.cols), c, tc.idx, b, 8)
					}
				})
			}
		}
	}
}

// benchPaths runs the benchmark f on every kernel path.
func benchPaths(b *testing.B, f func(*testing.B)) {
	for _, p := range kernelPaths() {
		b.Run("path="+p.name, func(b *testing.B) { withPath(p, func() { f(b) }) })
	}
}

func BenchmarkLogitsPaths(b *testing.B) { benchPaths(b, BenchmarkLogits) }

func BenchmarkMatMulPaths(b *testing.B) { benchPaths(b, BenchmarkMatMul) }

func BenchmarkBinMassPaths(b *testing.B) { benchPaths(b, BenchmarkBinMass) }

func BenchmarkSoftmaxRowsPaths(b *testing.B) { benchPaths(b, BenchmarkSoftmaxRows) }

func BenchmarkKeyEntropyPaths(b *testing.B) { benchPaths(b, BenchmarkKeyEntropy) }

func BenchmarkRowEntropyPaths(b *testing.B) { benchPaths(b, BenchmarkRowEntropy) }

func BenchmarkPartialAddKeysPaths(b *testing.B) { benchPaths(b, BenchmarkPartialAddKeys) }

func BenchmarkPartialAddLogitsPaths(b *testing.B) { benchPaths(b, BenchmarkPartialAddLogits) }

// rowMax agrees, on every path, with both loops that find a softmax row's
// maximum (SoftmaxRows's x > mx and Partial's max) whenever it says ok,
// and says ok whenever the answer does not hang on their order: rows of
// every length to 40 with NaNs, signed zeros and infinities planted.
func TestRowMaxMatchesLoops(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	specials := []float32{nan, 0, negZero, inf, -inf}
	r := rng{s: 3}
	for _, p := range kernelPaths() {
		withPath(p, func() {
			for n := 0; n <= 40; n++ {
				for trial := 0; trial < 30; trial++ {
					x := make([]float32, n)
					for i := range x {
						x[i] = r.unif() - 0.5
					}
					switch {
					case trial == 1:
						for i := range x {
							x[i] = -inf
						}
					case trial == 2:
						for i := range x {
							x[i] = float32(math.Copysign(0, float64(r.unif())))
						}
					case trial >= 3 && n > 0:
						x[r.intn(n)] = specials[trial%len(specials)]
					}
					greater := float32(math.Inf(-1))
					maxed := float32(math.Inf(-1))
					hasNaN := false
					for _, v := range x {
						if v > greater {
							greater = v
						}
						maxed = max(maxed, v)
						hasNaN = hasNaN || v != v
					}
					mx, ok := rowMax(x)
					if !ok {
						if p.lanes > 0 && n >= 4 && !hasNaN && maxed != 0 {
							t.Errorf("%s n=%d trial %d: not ok for %v (max %v)", p.name, n, trial, x, maxed)
						}
						continue
					}
					if math.Float32bits(mx) != math.Float32bits(greater) || math.Float32bits(mx) != math.Float32bits(maxed) {
						t.Errorf("%s n=%d trial %d: rowMax %v, loops %v and %v, for %v", p.name, n, trial, mx, greater, maxed, x)
					}
				}
			}
		})
	}
}
