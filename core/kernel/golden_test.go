package kernel

import (
	"hash/fnv"
	"math"
	"testing"
)

// goldenHash runs every kernel on fixed inputs (odd shapes around the block
// sizes) and returns an FNV-1a hash of the bits of all outputs. Output
// buffers start filled with junk, which the kernels must overwrite.
func goldenHash(junk float32) uint64 {
	h := fnv.New64a()
	var b4 [4]byte
	put := func(v ...float32) {
		for _, x := range v {
			bits := math.Float32bits(x)
			if x != x {
				bits = 0x7fc00000 // NaN bits are not pinned (see sameFloat)
			}
			b4[0], b4[1], b4[2], b4[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
			h.Write(b4[:])
		}
	}
	buf := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = junk
		}
		return s
	}
	for _, s := range []shape{{37, 70, 24}, {5, 9, 3}, {64, 130, 64}, {3, 6, 260}} {
		r := &rng{uint64(s.m*1000 + s.n)}
		m, n, d := s.m, s.n, s.d
		q, k, v := r.vec(m*d), r.vec(n*d), r.vec(n*d)
		scale := float32(1 / math.Sqrt(float64(d)))
		put(Dot(q[:d], k[:d]))

		sl := buf(m * n)
		Logits(sl, q, m, k, n, d, scale)
		put(sl...)

		a, mu, sum := buf(m*n), buf(m), buf(m)
		SoftmaxRows(a, sl, m, n, mu, sum)
		put(a...)
		put(mu...)
		put(sum...)

		cm, ke, re := buf(n), buf(n), buf(m)
		ColMean(cm, a, m, n)
		KeyEntropy(ke, a, m, n, buf(2*n))
		RowEntropy(re, a, m, n)
		put(cm...)
		put(ke...)
		put(re...)

		mm := buf(m * d)
		MatMul(mm, a, m, n, v, d)
		put(mm...)

		idx := r.subset(n, 0.6, true)
		z, y := buf(m), buf(m*d)
		BinMass(z, y, a, m, n, idx, v, d)
		put(z...)
		put(y...)

		bias := r.vec(n)
		p := NewPartial(m, d)
		p.AddKeys(q, k, v, n/2, scale, bias, true, nil)
		p2 := NewPartial(m, d)
		p2.AddLogits(sl, n, idx, v)
		p.Merge(p2)
		p3 := NewPartial(m, d) // several online steps: rescaling
		p3.AddKeys(q, k, v, n, scale, nil, false, nil)
		for i := range sl {
			sl[i] *= 3
		}
		p3.AddLogits(sl, n, nil, v)
		p.Merge(p3)
		out := buf(m * d)
		p.Output(out)
		put(out...)
		put(p.Max...)
		put(p.Sum...)
	}
	for x := float32(-110); x < 90; x += 0.0123 {
		put(Exp32(x), Log32(x+110))
	}
	return h.Sum64()
}

// golden is goldenHash(0) as computed on linux/amd64 with the SSE kernels.
// The same value is expected with -tags purego, with GOAMD64=v3 (where Go
// could fuse multiply-adds if the code allowed it) and under
// GOOS=js GOARCH=wasm: the kernels must give the same bits everywhere. A
// deliberate change of a kernel's order of operations changes it; update it
// then, and say so in the change.
const golden uint64 = 0xf8f8b64be306560d

func TestGolden(t *testing.T) {
	got := goldenHash(0)
	if got != golden {
		t.Errorf("golden hash %#x, want %#x: some kernel changed its bits on this platform", got, golden)
	}
}

// TestDeterministic: the same inputs twice, into output buffers holding
// different junk, give the same bits.
func TestDeterministic(t *testing.T) {
	for _, junk := range []float32{1, float32(math.NaN()), -3e38} {
		if a, b := goldenHash(0), goldenHash(junk); a != b {
			t.Errorf("junk %g in the output buffers: hash %#x, want %#x", junk, b, a)
		}
	}
}

func TestZeroAlloc(t *testing.T) {
	r := &rng{15}
	const m, n, d = 9, 300, 64
	q, k, v := r.vec(m*d), r.vec(n*d), r.vec(n*d)
	sl, a := make([]float32, m*n), attention(r, m, n, 3)
	mu, sum, cm, ke, re := make([]float32, m), make([]float32, m), make([]float32, n), make([]float32, n), make([]float32, m)
	work, mm, z, y := make([]float32, 2*n), make([]float32, m*d), make([]float32, m), make([]float32, m*d)
	idx := r.subset(n, 0.5, true)
	bias := r.vec(n)
	p, p2 := NewPartial(m, d), NewPartial(m, d)
	out := make([]float32, m*d)
	var sink float32
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Dot", func() { sink += Dot(q[:d], k[:d]) }},
		{"Logits", func() { Logits(sl, q, m, k, n, d, 0.125) }},
		{"Logits d>maxPackD", func() { Logits(sl[:4], q, 1, k, 4, 4*d, 0.125) }},
		{"SoftmaxRows", func() { SoftmaxRows(a, sl, m, n, mu, sum) }},
		{"ColMean", func() { ColMean(cm, a, m, n) }},
		{"KeyEntropy", func() { KeyEntropy(ke, a, m, n, work) }},
		{"RowEntropy", func() { RowEntropy(re, a, m, n) }},
		{"MatMul", func() { MatMul(mm, a, m, n, v, d) }},
		{"BinMass", func() { BinMass(z, y, a, m, n, idx, v, d) }},
		{"AddKeys", func() { p.Reset(); p.AddKeys(q, k, v, n, 0.125, bias, true, nil) }},
		{"AddLogits", func() { p2.Reset(); p2.AddLogits(sl, n, idx, v) }},
		{"Merge+Output", func() { p.Merge(p2); p.Output(out) }},
		{"CopyFrom", func() { p2.CopyFrom(p) }},
		{"Exp32+Log32", func() { sink += Exp32(sink) + Log32(sink) }},
	} {
		if allocs := testing.AllocsPerRun(20, tc.f); allocs != 0 {
			t.Errorf("%s: %g allocations per call, want 0", tc.name, allocs)
		}
	}
	_ = sink
}
