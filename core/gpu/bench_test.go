package gpu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/haeols/haeols/core/kernel"
)

// The benchmarks compare the CPU kernels (one core) with the GPU kernels,
// host slices in and out (uploads and read-backs included, as the analysis
// uses them), for one group of 4 query heads x 128 calibration rows
// (m = 512) against n prefix keys, d = 64. The sizes are 1K and 4K, or
// HAEOLS_BENCH_SIZES (e.g. "1K,4K,16K,64K" on a real GPU). Throughput is
// GFLOP/s of the logits and weighted-value products (4*m*n*d flops); the
// adapter is logged.

var (
	benchOnce sync.Once
	benchDev  *Device
	benchErr  error
)

func benchDevice(b *testing.B) *Device {
	benchOnce.Do(func() { benchDev, benchErr = Open(Options{}) })
	if benchErr != nil {
		b.Skipf("no GPU: %v", benchErr)
	}
	return benchDev
}

func benchSizes() []int {
	s := os.Getenv("HAEOLS_BENCH_SIZES")
	if s == "" {
		s = "1K,4K"
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		if strings.HasSuffix(f, "K") {
			fmt.Sscan(strings.TrimSuffix(f, "K"), &v)
			v *= 1024
		} else {
			fmt.Sscan(f, &v)
		}
		if v > 0 {
			out = append(out, v)
		}
	}
	return out
}

func BenchmarkCalibrate(b *testing.B) {
	const m, d = 512, 64
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(3, uint64(n)))
		q, k, v := randn(r, m*d, 1), randn(r, n*d, 1), randn(r, n*d, 1)
		st := kernel.NewStats(m, n, d)
		flops := 4 * float64(m) * float64(n) * float64(d)
		b.Run(fmt.Sprintf("cpu/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				kernel.Calibrate(st, q, m, k, v, n, d, 0.125)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("gpu/n=%d", n), func(b *testing.B) {
			dev := benchDevice(b)
			b.Logf("adapter: %s", dev.Info())
			for b.Loop() {
				if err := dev.Calibrate(st, q, m, k, v, n, d, 0.125); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkAttend is the output metric's kernel: 64 probe queries over a
// cache of n keys with biases.
func BenchmarkAttend(b *testing.B) {
	const m, d = 64, 64
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(4, uint64(n)))
		q, k, v, bias := randn(r, m*d, 1), randn(r, n*d, 1), randn(r, n*d, 1), randn(r, n, 1)
		out := make([]float32, m*d)
		flops := 4 * float64(m) * float64(n) * float64(d)
		b.Run(fmt.Sprintf("cpu/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				p := kernel.NewPartial(m, d)
				p.AddKeys(q, k, v, n, 0.125, bias, false, nil)
				p.Output(out)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("gpu/n=%d", n), func(b *testing.B) {
			dev := benchDevice(b)
			for b.Loop() {
				if err := dev.Attend(out, q, m, k, v, n, d, 0.125, bias, 0, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkLogits is the plain logits kernel, m = 512 rows.
func BenchmarkLogits(b *testing.B) {
	const m, d = 512, 64
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(5, uint64(n)))
		q, k := randn(r, m*d, 1), randn(r, n*d, 1)
		s := make([]float32, m*n)
		flops := 2 * float64(m) * float64(n) * float64(d)
		b.Run(fmt.Sprintf("cpu/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				kernel.Logits(s, q, m, k, n, d, 0.125)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("gpu/n=%d", n), func(b *testing.B) {
			dev := benchDevice(b)
			for b.Loop() {
				if err := dev.Logits(s, q, m, k, n, d, 0.125, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSoftmax is the row softmax of 512 rows of n logits.
func BenchmarkSoftmax(b *testing.B) {
	const m = 512
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(6, uint64(n)))
		s := randn(r, m*n, 3)
		a, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
		b.Run(fmt.Sprintf("cpu/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				kernel.SoftmaxRows(a, s, m, n, mu, sum)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6/(m/128), "ms/head")
		})
		b.Run(fmt.Sprintf("gpu/n=%d", n), func(b *testing.B) {
			dev := benchDevice(b)
			for b.Loop() {
				if err := dev.SoftmaxRows(a, s, m, n, mu, sum); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6/(m/128), "ms/head")
		})
	}
}

// BenchmarkBinMass is the bin mass and weighted values of 512 rows over
// the odd half of n keys (the least-squares targets).
func BenchmarkBinMass(b *testing.B) {
	const m, d = 512, 64
	for _, n := range benchSizes() {
		r := rand.New(rand.NewPCG(9, uint64(n)))
		a, v := randn(r, m*n, 0.01), randn(r, n*d, 1)
		var idx []int32
		for j := 1; j < n; j += 2 {
			idx = append(idx, int32(j))
		}
		z, y := make([]float32, m), make([]float32, m*d)
		flops := 2 * float64(m) * float64(len(idx)) * float64(d)
		b.Run(fmt.Sprintf("cpu/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				kernel.BinMass(z, y, a, m, n, idx, v, d)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("gpu/n=%d", n), func(b *testing.B) {
			dev := benchDevice(b)
			for b.Loop() {
				if err := dev.BinMass(z, y, a, m, n, idx, v, d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
