package gpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	"github.com/haeols/haeols/core/kernel"
)

// Tolerances of the GPU kernels against the CPU kernels (and both against
// float64), stated once for the tests and for `haeols verify`:
//
//   - dot products (logits, features' exponent): |x - ref| <= 4*d*eps32 *
//     scale * sum_c |q_c k_c| (the textbook bound of a d-term sum, doubled
//     for the products; GPUs may fuse multiply-adds, which only shrinks it);
//   - probabilities and normalized entropies (attention, salience, key and
//     row entropy): |x - ref| <= 2e-5 * max(|ref|, 1/n) + 1e-7 (GPU exp
//     and log are accurate to a few ulp near 0 but not correctly rounded;
//     the tree sums differ in order);
//   - outputs and weighted values: |x - ref| <= 1e-5 * (max_j |v_j| + |ref|).
//
// These are the numbers TestKernelsAgree enforces on random inputs with
// realistic logit ranges.

// requireGPU reports whether a missing adapter fails the tests: set
// HAEOLS_REQUIRE_GPU=1 natively (CI does; under js/wasm the tests run in
// Node, which has no WebGPU).
func requireGPU() bool { return os.Getenv("HAEOLS_REQUIRE_GPU") == "1" && runtime.GOOS != "js" }

// open returns a device or skips the test when no adapter exists, unless
// HAEOLS_REQUIRE_GPU=1 (CI sets it: there a software Vulkan adapter exists,
// and a missing one is a failure).
func open(t testing.TB) *Device {
	t.Helper()
	d, err := Open(Options{})
	if err != nil {
		if errors.Is(err, ErrUnavailable) && !requireGPU() {
			t.Skipf("no GPU: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	t.Logf("adapter: %s", d.Info())
	return d
}

func randn(r *rand.Rand, n int, s float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * s)
	}
	return x
}

// maxDev returns the largest |a-b| / tol(b, i) and where it happens.
func maxDev(a, b []float32, tol func(i int) float64) (float64, int) {
	worst, at := 0.0, -1
	for i := range b {
		x, y := float64(a[i]), float64(b[i])
		dev := math.Abs(x-y) / tol(i)
		if math.IsNaN(x) != math.IsNaN(y) || dev > worst {
			worst, at = dev, i
			if math.IsNaN(x) != math.IsNaN(y) {
				worst = math.Inf(1)
			}
		}
	}
	return worst, at
}

func check(t *testing.T, what string, got, want []float32, tol func(i int) float64) {
	t.Helper()
	if dev, at := maxDev(got, want, tol); dev > 1 {
		t.Errorf("%s: element %d: gpu %g, cpu %g: %.2f x the tolerance", what, at, got[at], want[at], dev)
	}
}

type shape struct{ m, n, d int }

func TestKernelsAgree(t *testing.T) {
	dev := open(t)
	for _, sh := range []shape{{1, 1, 1}, {3, 5, 7}, {16, 16, 16}, {37, 300, 64}, {128, 1024, 64}, {70, 513, 130}} {
		r := rand.New(rand.NewPCG(uint64(sh.m), uint64(sh.n*sh.d)))
		m, n, d := sh.m, sh.n, sh.d
		scale := float32(1 / math.Sqrt(float64(d)))
		q, k, v := randn(r, m*d, 2), randn(r, n*d, 2), randn(r, n*d, 1)
		bias := randn(r, n, 1)

		// Logits, with and without bias.
		want, got := make([]float32, m*n), make([]float32, m*n)
		kernel.Logits(want, q, m, k, n, d, scale)
		if err := dev.Logits(got, q, m, k, n, d, scale, nil); err != nil {
			t.Fatal(err)
		}
		dotTol := func(i int) float64 {
			a, b := q[(i/n)*d:(i/n+1)*d], k[(i%n)*d:(i%n+1)*d]
			var s float64
			for c := range a {
				s += math.Abs(float64(a[c]) * float64(b[c]))
			}
			return 4*float64(d)*0x1p-24*float64(scale)*s + 1e-30
		}
		check(t, "logits", got, want, dotTol)
		for i := range want {
			want[i] += bias[i%n]
		}
		if err := dev.Logits(got, q, m, k, n, d, scale, bias); err != nil {
			t.Fatal(err)
		}
		check(t, "logits+bias", got, want, func(i int) float64 { return dotTol(i) + 0x1p-23*math.Abs(float64(want[i])) })

		// Calibration statistics through the chained GPU pipeline against
		// the CPU's.
		cpu, gpu := kernel.NewStats(m, n, d), kernel.NewStats(m, n, d)
		kernel.Calibrate(cpu, q, m, k, v, n, d, scale)
		if err := dev.Calibrate(gpu, q, m, k, v, n, d, scale); err != nil {
			t.Fatal(err)
		}
		prob := func(x []float32, cnt int) func(int) float64 {
			return func(i int) float64 { return 2e-5*max(math.Abs(float64(x[i])), 1/float64(cnt)) + 1e-7 }
		}
		check(t, "S", gpu.S, cpu.S, dotTol)
		check(t, "A", gpu.A, cpu.A, prob(cpu.A, n))
		check(t, "Mu", gpu.Mu, cpu.Mu, func(i int) float64 { return dotTol(i*n) + 1e-30 })
		check(t, "RowSum", gpu.RowSum, cpu.RowSum, func(i int) float64 { return 2e-5 * float64(cpu.RowSum[i]) })
		check(t, "Salience", gpu.Salience, cpu.Salience, prob(cpu.Salience, n))
		check(t, "KeyEntropy", gpu.KeyEntropy, cpu.KeyEntropy, func(int) float64 { return 2e-5 })
		check(t, "RowEntropy", gpu.RowEntropy, cpu.RowEntropy, func(int) float64 { return 2e-5 })
		vmax := 0.0
		for _, x := range v {
			vmax = max(vmax, math.Abs(float64(x)))
		}
		outTol := func(ref []float32) func(int) float64 {
			return func(i int) float64 { return 1e-5 * (vmax + math.Abs(float64(ref[i]))) }
		}
		check(t, "O", gpu.O, cpu.O, outTol(cpu.O))

		// The separate kernels on the CPU's attention.
		sal, ke, re := make([]float32, n), make([]float32, n), make([]float32, m)
		if err := dev.Columns(sal, ke, cpu.A, m, n); err != nil {
			t.Fatal(err)
		}
		check(t, "Columns salience", sal, cpu.Salience, prob(cpu.Salience, n))
		check(t, "Columns key entropy", ke, cpu.KeyEntropy, func(int) float64 { return 2e-5 })
		if err := dev.RowEntropy(re, cpu.A, m, n); err != nil {
			t.Fatal(err)
		}
		check(t, "RowEntropy", re, cpu.RowEntropy, func(int) float64 { return 2e-5 })
		a, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
		if err := dev.SoftmaxRows(a, cpu.S, m, n, mu, sum); err != nil {
			t.Fatal(err)
		}
		check(t, "SoftmaxRows", a, cpu.A, prob(cpu.A, n))

		// Bin mass over every other key, in reverse order.
		var idx []int32
		for j := n - 1; j >= 0; j -= 2 {
			idx = append(idx, int32(j))
		}
		zc, yc := make([]float32, m), make([]float32, m*d)
		zg, yg := make([]float32, m), make([]float32, m*d)
		kernel.BinMass(zc, yc, cpu.A, m, n, idx, v, d)
		if err := dev.BinMass(zg, yg, cpu.A, m, n, idx, v, d); err != nil {
			t.Fatal(err)
		}
		check(t, "BinMass z", zg, zc, func(int) float64 { return 1e-6 })
		check(t, "BinMass y", yg, yc, outTol(yc))

		// Features of 5 summary keys.
		ns := 5
		khat := randn(r, ns*d, 1)
		fg := make([]float32, m*ns)
		if err := dev.Features(fg, q, m, khat, ns, d, scale, cpu.Mu); err != nil {
			t.Fatal(err)
		}
		s := make([]float32, m*ns)
		kernel.Logits(s, q, m, khat, ns, d, scale)
		fc := make([]float32, m*ns)
		for i := range fc {
			fc[i] = float32(math.Exp(float64(s[i]) - float64(cpu.Mu[i/ns])))
		}
		check(t, "Features", fg, fc, func(i int) float64 { return 1e-5*float64(fc[i]) + 1e-30 })

		// Attention over a cache: bias on every key, then a causal suffix.
		og, oc := make([]float32, m*d), make([]float32, m*d)
		if err := dev.Attend(og, q, m, k, v, n, d, scale, bias, 0, false); err != nil {
			t.Fatal(err)
		}
		p := kernel.NewPartial(m, d)
		p.AddKeys(q, k, v, n, scale, bias, false, nil)
		p.Output(oc)
		check(t, "Attend", og, oc, outTol(oc))
		base := n / 2
		if err := dev.Attend(og, q, m, k, v, n, d, scale, nil, base, true); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			c := min(n, base+i+1)
			p := kernel.NewPartial(1, d)
			p.AddKeys(q[i*d:(i+1)*d], k, v, c, scale, nil, false, nil)
			p.Output(oc[i*d : (i+1)*d])
		}
		check(t, "Attend causal", og, oc, outTol(oc))

		// Error sums.
		sums := make([]float32, 4*m)
		if err := dev.RowErrors(sums, og, cpu.O, m, d); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			var dd, rr, oo, or float64
			for c := 0; c < d; c++ {
				x, y := float64(og[i*d+c]), float64(cpu.O[i*d+c])
				dd += (x - y) * (x - y)
				rr += y * y
				oo += x * x
				or += x * y
			}
			for j, w := range []float64{dd, rr, oo, or} {
				if g := float64(sums[4*i+j]); math.Abs(g-w) > 1e-5*(math.Abs(w)+rr+oo)+1e-30 {
					t.Errorf("RowErrors row %d sum %d: gpu %g, float64 %g", i, j, g, w)
				}
			}
		}
	}
}

// TestAttendFullIsReference checks the property the evaluation relies on:
// attention over a cache that keeps every key, through Attend, reproduces
// the outputs of Calibrate bit for bit.
func TestAttendFullIsReference(t *testing.T) {
	dev := open(t)
	r := rand.New(rand.NewPCG(1, 2))
	m, n, d := 40, 700, 64
	q, k, v := randn(r, m*d, 2), randn(r, n*d, 2), randn(r, n*d, 1)
	st := kernel.NewStats(m, n, d)
	if err := dev.Calibrate(st, q, m, k, v, n, d, 0.125); err != nil {
		t.Fatal(err)
	}
	o := make([]float32, m*d)
	if err := dev.Attend(o, q, m, k, v, n, d, 0.125, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	for i := range o {
		if math.Float32bits(o[i]) != math.Float32bits(st.O[i]) {
			t.Fatalf("output %d: Attend %g, Calibrate %g", i, o[i], st.O[i])
		}
	}
}

func TestBadShapes(t *testing.T) {
	dev := open(t)
	if err := dev.Logits(make([]float32, 3), make([]float32, 4), 2, make([]float32, 4), 2, 2, 1, nil); err == nil {
		t.Error("Logits with a short dst: no error")
	}
	if err := dev.BinMass(make([]float32, 1), make([]float32, 2), make([]float32, 2), 1, 2, []int32{5}, make([]float32, 4), 2); err == nil {
		t.Error("BinMass with an index out of range: no error")
	}
	if err := dev.Attend(make([]float32, 2), make([]float32, 2), 1, nil, nil, 0, 2, 1, nil, 0, false); err == nil {
		t.Error("Attend over no keys: no error")
	}
}

// TestNoAdapter asks for a backend this machine does not have: Open must
// report ErrUnavailable, not crash. (On macOS, Metal exists: DX12 is asked
// for there.)
func TestNoAdapter(t *testing.T) {
	backend := "metal"
	if runtime.GOOS == "darwin" {
		backend = "dx12"
	}
	d, err := Open(Options{Backend: backend})
	if err == nil {
		d.Close()
		t.Skipf("this machine has a %s adapter", backend)
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open(%s): %v, want ErrUnavailable", backend, err)
	}
	if _, err := Open(Options{Backend: "nope"}); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("Open with an unknown backend: %v", err)
	}
}

// TestRowChunks forces a binding limit of 16 rows, so that Calibrate,
// Logits, SoftmaxRows, Columns, RowEntropy, BinMass and Attend split their
// matrices into row chunks (as at long contexts), and checks that the
// results do not change.
func TestRowChunks(t *testing.T) {
	dev := open(t)
	r := rand.New(rand.NewPCG(7, 8))
	m, n, d := 45, 300, 16
	q, k, v := randn(r, m*d, 2), randn(r, n*d, 2), randn(r, n*d, 1)
	whole := kernel.NewStats(m, n, d)
	if err := dev.Calibrate(whole, q, m, k, v, n, d, 0.25); err != nil {
		t.Fatal(err)
	}
	oWhole := make([]float32, m*d)
	if err := dev.Attend(oWhole, q, m, k, v, n, d, 0.25, nil, n/2, true); err != nil {
		t.Fatal(err)
	}
	saved := dev.maxBind
	dev.maxBind = uint64(16*n*4 + 100) // 16 rows of n floats per binding (K and V still fit)
	dev.info.MaxBinding = dev.maxBind
	defer func() { dev.maxBind, dev.info.MaxBinding = saved, saved }()
	chunked := kernel.NewStats(m, n, d)
	if err := dev.Calibrate(chunked, q, m, k, v, n, d, 0.25); err != nil {
		t.Fatal(err)
	}
	same := func(what string, a, b []float32) {
		t.Helper()
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s[%d]: chunked %g, whole %g", what, i, b[i], a[i])
			}
		}
	}
	same("S", whole.S, chunked.S)
	same("A", whole.A, chunked.A)
	same("RowSum", whole.RowSum, chunked.RowSum)
	same("Salience", whole.Salience, chunked.Salience)
	same("KeyEntropy", whole.KeyEntropy, chunked.KeyEntropy)
	same("RowEntropy", whole.RowEntropy, chunked.RowEntropy)
	same("O", whole.O, chunked.O)
	o := make([]float32, m*d)
	if err := dev.Attend(o, q, m, k, v, n, d, 0.25, nil, n/2, true); err != nil {
		t.Fatal(err)
	}
	same("Attend causal", oWhole, o)
	s := make([]float32, m*n)
	if err := dev.Logits(s, q, m, k, n, d, 0.25, nil); err != nil {
		t.Fatal(err)
	}
	same("Logits", whole.S, s)
	sal, ke, re := make([]float32, n), make([]float32, n), make([]float32, m)
	if err := dev.Columns(sal, ke, whole.A, m, n); err != nil {
		t.Fatal(err)
	}
	same("Columns salience", whole.Salience, sal)
	same("Columns key entropy", whole.KeyEntropy, ke)
	if err := dev.RowEntropy(re, whole.A, m, n); err != nil {
		t.Fatal(err)
	}
	same("RowEntropy", whole.RowEntropy, re)
	idx := []int32{5, 0, 299, 17}
	z0, y0, z1, y1 := make([]float32, m), make([]float32, m*d), make([]float32, m), make([]float32, m*d)
	if err := dev.BinMass(z1, y1, whole.A, m, n, idx, v, d); err != nil {
		t.Fatal(err)
	}
	dev.maxBind, dev.info.MaxBinding = saved, saved
	if err := dev.BinMass(z0, y0, whole.A, m, n, idx, v, d); err != nil {
		t.Fatal(err)
	}
	same("BinMass z", z0, z1)
	same("BinMass y", y0, y1)
	// A binding too small for one row is an error, not a crash.
	dev.maxBind = 16
	dev.info.MaxBinding = 16
	if err := dev.Calibrate(chunked, q, m, k, v, n, d, 0.25); err == nil {
		t.Error("Calibrate with a binding smaller than a row: no error")
	}
}

// TestHardwareOnly: on a machine whose adapter is a software one (CI's
// llvmpipe), HardwareOnly refuses it with ErrSoftware; with a hardware
// adapter it opens.
func TestHardwareOnly(t *testing.T) {
	dev := open(t)
	d, err := Open(Options{HardwareOnly: true})
	if dev.Info().Software {
		if !errors.Is(err, ErrSoftware) || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("HardwareOnly with only %s: %v, want ErrSoftware", dev.Info(), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("HardwareOnly with %s: %v", dev.Info(), err)
	}
	d.Close()
}
