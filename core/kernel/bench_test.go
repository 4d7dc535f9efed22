package kernel

import (
	"fmt"
	"testing"
)

// benchShapes are the calibration shape (w = 128 query rows against a
// prefix of n = 1024 keys, d = 64) and the probe shape (t = 64 rows).
var benchShapes = []shape{{128, 1024, 64}, {64, 1024, 64}}

// benchData holds the inputs of one benchmark shape.
type benchData struct {
	q, k, v, s, a, bias []float32
	idx                 []int32
}

func newBenchData(s shape) *benchData {
	r := &rng{99}
	b := &benchData{q: r.vec(s.m * s.d), k: r.vec(s.n * s.d), v: r.vec(s.n * s.d), bias: r.vec(s.n)}
	b.s = make([]float32, s.m*s.n)
	Logits(b.s, b.q, s.m, b.k, s.n, s.d, 0.125)
	b.a = attention(r, s.m, s.n, 4)
	b.idx = r.subset(s.n, 0.5, false)
	return b
}

// benchEach runs f as a sub-benchmark per shape and reports work/ns as unit
// (work is the count of one call: flops for GFLOP/s, elements for Gelem/s).
func benchEach(b *testing.B, unit string, work func(s shape, d *benchData) float64, f func(s shape, d *benchData)) {
	for _, s := range benchShapes {
		b.Run(fmt.Sprintf("m=%d/n=%d/d=%d", s.m, s.n, s.d), func(b *testing.B) {
			data := newBenchData(s)
			for b.Loop() {
				f(s, data)
			}
			b.ReportMetric(work(s, data)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), unit)
		})
	}
}

// mnd2 is the flop count 2*m*n*d of a logits or weighted-sum product.
func mnd2(s shape, _ *benchData) float64 { return 2 * float64(s.m*s.n*s.d) }

// mn is the element count m*n of an elementwise kernel.
func mn(s shape, _ *benchData) float64 { return float64(s.m * s.n) }

func BenchmarkLogits(b *testing.B) {
	benchEach(b, "GFLOP/s", mnd2, func(s shape, d *benchData) {
		Logits(d.s, d.q, s.m, d.k, s.n, s.d, 0.125)
	})
}

// BenchmarkLogitsDecode is Logits for the few query rows of a decoding
// step (one token; a KV head's group of 4 or 8 query heads) against 1024
// cached keys: the row-packed kernels (logitsQ4, logitsQ8).
func BenchmarkLogitsDecode(b *testing.B) {
	for _, m := range []int{1, 4, 8} {
		s := shape{m, 1024, 64}
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			d := newBenchData(s)
			for b.Loop() {
				Logits(d.s, d.q, s.m, d.k, s.n, s.d, 0.125)
			}
			b.ReportMetric(mnd2(s, d)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}

// logitsNaive is the plain loop Logits replaced (the same bits).
func logitsNaive(dst, q []float32, m int, k []float32, n, d int, scale float32) {
	for i := 0; i < m; i++ {
		qi := q[i*d : i*d+d]
		row := dst[i*n : i*n+n]
		for j := 0; j < n; j++ {
			kj := k[j*d : j*d+d]
			var s float32
			for c, x := range qi {
				s += float32(x * kj[c])
			}
			row[j] = scale * s
		}
	}
}

func BenchmarkLogitsNaive(b *testing.B) {
	benchEach(b, "GFLOP/s", mnd2, func(s shape, d *benchData) {
		logitsNaive(d.s, d.q, s.m, d.k, s.n, s.d, 0.125)
	})
}

func BenchmarkMatMul(b *testing.B) {
	out := make([]float32, 128*64)
	benchEach(b, "GFLOP/s", mnd2, func(s shape, d *benchData) {
		MatMul(out, d.a, s.m, s.n, d.v, s.d)
	})
}

// matMulNaive is the plain loop MatMul replaced (the same bits).
func matMulNaive(dst, a []float32, m, n int, b []float32, d int) {
	clear(dst[:m*d])
	for i := 0; i < m; i++ {
		o := dst[i*d : i*d+d]
		for j, x := range a[i*n : i*n+n] {
			bj := b[j*d : j*d+d]
			for c := range o {
				o[c] += float32(x * bj[c])
			}
		}
	}
}

func BenchmarkMatMulNaive(b *testing.B) {
	out := make([]float32, 128*64)
	benchEach(b, "GFLOP/s", mnd2, func(s shape, d *benchData) {
		matMulNaive(out, d.a, s.m, s.n, d.v, s.d)
	})
}

func BenchmarkBinMass(b *testing.B) {
	z, y := make([]float32, 128), make([]float32, 128*64)
	benchEach(b, "GFLOP/s", func(s shape, d *benchData) float64 { return 2 * float64(s.m*len(d.idx)*s.d) }, func(s shape, d *benchData) {
		BinMass(z, y, d.a, s.m, s.n, d.idx, d.v, s.d)
	})
}

func BenchmarkSoftmaxRows(b *testing.B) {
	a, mu, sum := make([]float32, 128*1024), make([]float32, 128), make([]float32, 128)
	benchEach(b, "Gelem/s", mn, func(s shape, d *benchData) {
		SoftmaxRows(a, d.s, s.m, s.n, mu, sum)
	})
}

func BenchmarkColMean(b *testing.B) {
	dst := make([]float32, 1024)
	benchEach(b, "Gelem/s", mn, func(s shape, d *benchData) {
		ColMean(dst, d.a, s.m, s.n)
	})
}

func BenchmarkKeyEntropy(b *testing.B) {
	dst, work := make([]float32, 1024), make([]float32, 2048)
	benchEach(b, "Gelem/s", mn, func(s shape, d *benchData) {
		KeyEntropy(dst, d.a, s.m, s.n, work)
	})
}

func BenchmarkRowEntropy(b *testing.B) {
	dst := make([]float32, 128)
	benchEach(b, "Gelem/s", mn, func(s shape, d *benchData) {
		RowEntropy(dst, d.a, s.m, s.n)
	})
}

// BenchmarkPartialAddKeys is causal-free attention of m rows over n keys
// with bias: logits and weighted values, 4*m*n*d flops.
func BenchmarkPartialAddKeys(b *testing.B) {
	p := NewPartial(128, 64)
	benchEach(b, "GFLOP/s", func(s shape, _ *benchData) float64 { return 4 * float64(s.m*s.n*s.d) }, func(s shape, d *benchData) {
		p.M = s.m
		p.Reset()
		p.AddKeys(d.q, d.k, d.v, s.n, 0.125, d.bias, false, nil)
	})
}

// BenchmarkPartialAddLogits adds precomputed logits of all keys: the
// weighted values, 2*m*n*d flops.
func BenchmarkPartialAddLogits(b *testing.B) {
	p := NewPartial(128, 64)
	benchEach(b, "GFLOP/s", mnd2, func(s shape, d *benchData) {
		p.M = s.m
		p.Reset()
		p.AddLogits(d.s, s.n, nil, d.v)
	})
}

var sink32 float32

func BenchmarkExp32(b *testing.B) {
	xs := (&rng{5}).vec(1024)
	for i := range xs {
		xs[i] *= 10
	}
	for b.Loop() {
		var s float32
		for _, x := range xs {
			s += Exp32(x)
		}
		sink32 = s
	}
	b.ReportMetric(float64(len(xs))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "Gelem/s")
}

func BenchmarkLog32(b *testing.B) {
	xs := attention(&rng{6}, 1, 1024, 4)
	for b.Loop() {
		var s float32
		for _, x := range xs {
			s += Log32(x)
		}
		sink32 = s
	}
	b.ReportMetric(float64(len(xs))*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "Gelem/s")
}

// BenchmarkMatMul4 is the forward pass's matrix product (kernel.MatMul4):
// a 768 x 256 weight matrix (the byte model's FFN) against one row of x
// (a token at a time) and against a block of 32 rows (teacher-forced).
func BenchmarkMatMul4(b *testing.B) {
	r := &rng{5}
	const rows, n = 768, 256
	w := r.vec(rows * n)
	for _, nb := range []int{1, 32} {
		b.Run(fmt.Sprintf("rows=%d/n=%d/nb=%d", rows, n, nb), func(b *testing.B) {
			x, out := r.vec(nb*n), make([]float32, nb*rows)
			for b.Loop() {
				MatMul4(out, w, x, nb)
			}
			b.ReportMetric(2*rows*n*float64(nb)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}
