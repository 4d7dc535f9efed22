package gpu

import (
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kernel"
)

// selfTest runs every kernel once on a small fixed problem and compares
// with the CPU kernels. WebGPU reports shader and validation errors
// asynchronously (in the browser only to the console), so a device whose
// pipelines failed would otherwise return zeros; Open fails instead.
func (d *Device) selfTest() error {
	const m, n, dim = 5, 37, 8
	q, k, v := make([]float32, m*dim), make([]float32, n*dim), make([]float32, n*dim)
	for i := range q {
		q[i] = float32(math.Sin(float64(i)*0.7)) * 2
	}
	for i := range k {
		k[i] = float32(math.Cos(float64(i)*0.3)) * 2
		v[i] = float32(math.Sin(float64(i)*1.3 + 1))
	}
	cpu, gpu := kernel.NewStats(m, n, dim), kernel.NewStats(m, n, dim)
	kernel.Calibrate(cpu, q, m, k, v, n, dim, 0.35)
	if err := d.Calibrate(gpu, q, m, k, v, n, dim, 0.35); err != nil {
		return err
	}
	check := func(what string, got, want []float32) error {
		for i := range want {
			if !(math.Abs(float64(got[i]-want[i])) <= 1e-3*(1+math.Abs(float64(want[i])))) {
				return fmt.Errorf("gpu: self-test: %s[%d] is %g on the GPU, %g on the CPU (the device's kernels failed)", what, i, got[i], want[i])
			}
		}
		return nil
	}
	for _, c := range []struct {
		what      string
		got, want []float32
	}{
		{"logits", gpu.S, cpu.S}, {"softmax", gpu.A, cpu.A}, {"salience", gpu.Salience, cpu.Salience},
		{"key entropy", gpu.KeyEntropy, cpu.KeyEntropy}, {"row entropy", gpu.RowEntropy, cpu.RowEntropy}, {"outputs", gpu.O, cpu.O},
	} {
		if err := check(c.what, c.got, c.want); err != nil {
			return err
		}
	}
	idx := []int32{3, 1, 30}
	zc, yc, zg, yg := make([]float32, m), make([]float32, m*dim), make([]float32, m), make([]float32, m*dim)
	kernel.BinMass(zc, yc, cpu.A, m, n, idx, v, dim)
	if err := d.BinMass(zg, yg, cpu.A, m, n, idx, v, dim); err != nil {
		return err
	}
	if err := check("bin mass", append(zg, yg...), append(zc, yc...)); err != nil {
		return err
	}
	f := make([]float32, m*2)
	if err := d.Features(f, q, m, k[:2*dim], 2, dim, 0.35, cpu.Mu); err != nil {
		return err
	}
	fc := make([]float32, m*2)
	for i := range fc {
		fc[i] = kernel.Exp32(cpu.S[(i/2)*n+i%2] - cpu.Mu[i/2])
	}
	if err := check("features", f, fc); err != nil {
		return err
	}
	o := make([]float32, m*dim)
	if err := d.Attend(o, q, m, k, v, n, dim, 0.35, nil, 0, false); err != nil {
		return err
	}
	if err := check("attend", o, cpu.O); err != nil {
		return err
	}
	sums := make([]float32, 4*m)
	if err := d.RowErrors(sums, o, cpu.O, m, dim); err != nil {
		return err
	}
	for i := 0; i < m; i++ {
		var rr float64
		for c := 0; c < dim; c++ {
			rr += float64(cpu.O[i*dim+c]) * float64(cpu.O[i*dim+c])
		}
		if math.Abs(float64(sums[4*i+1])-rr) > 1e-3*(1+rr) {
			return fmt.Errorf("gpu: self-test: error sums of row %d are %g on the GPU, %g on the CPU", i, sums[4*i+1], rr)
		}
	}
	return nil
}
