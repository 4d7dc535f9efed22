package gen

import (
	"github.com/haeols/haeols/core/xmath"
	"math"
	"math/bits"
	"math/rand/v2"
)

// The generator's output is hashed in a test that must pass natively and
// under WebAssembly, so its elementary functions come from core/xmath (the
// same bits on every platform, unlike math.Exp and math.Log, which use
// assembly on amd64), every product that feeds an addition is rounded by an
// explicit float64 conversion (which forbids fused multiply-adds), and
// otherwise only correctly rounded operations (+, -, *, /, math.Sqrt) and
// exact bit manipulations are used.

// rng is a seeded xoshiro256** source with a deterministic Gaussian
// sampler: the ziggurat method of Marsaglia and Tsang (2000), as in
// math/rand, but with its tables built and its rare branches computed by
// xmath.Exp and xmath.Log, so it is bit-identical everywhere (rand.NormFloat64's
// rare branches call math.Exp and math.Log).
type rng struct {
	r *rand.Rand
	// x is r's source, drawn from directly where r.Uint64 would only
	// pass the call on through an interface (no inlining, a call per
	// draw that costs most in V8's baseline code).
	x    *xoshiro
	bits uint64 // the unused half of the last 64-bit draw
	has  bool
}

// uint32 returns 32 random bits, taking two from each 64-bit draw.
func (g *rng) uint32() uint32 {
	if g.has {
		g.has = false
		return uint32(g.bits >> 32)
	}
	g.bits, g.has = g.x.Uint64(), true
	return uint32(g.bits)
}

// Ziggurat tables (128 layers).
var zigK [128]uint32
var zigW, zigF [128]float64

const zigR = 3.442619855899

func init() {
	const m1 = 1 << 31
	const vn = 9.91256303526217e-3
	dn, tn := zigR, zigR
	q := vn / xmath.Exp(-0.5*float64(dn*dn))
	zigK[0] = uint32(float64(dn / q * m1))
	zigK[1] = 0
	zigW[0] = q / m1
	zigW[127] = dn / m1
	zigF[0] = 1
	zigF[127] = xmath.Exp(-0.5 * float64(dn*dn))
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * xmath.Log(vn/dn+xmath.Exp(-0.5*float64(dn*dn))))
		zigK[i+1] = uint32(float64(dn / tn * m1))
		tn = dn
		zigF[i] = xmath.Exp(-0.5 * float64(dn*dn))
		zigW[i] = dn / m1
	}
}

// splitmix64 is one step of the SplitMix64 mixer, used to derive independent
// stream seeds from the user's seed and a stream label.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// xoshiro is the xoshiro256** generator of Blackman and Vigna (2018): 64-bit
// shifts, rotations and multiplications only, so it is as fast in
// WebAssembly as natively (PCG needs a 128-bit product, which WebAssembly
// lacks).
type xoshiro struct{ s [4]uint64 }

// Uint64 returns the next 64 random bits (rand.Source).
func (x *xoshiro) Uint64() uint64 {
	s0, s1, s2, s3 := x.s[0], x.s[1], x.s[2], x.s[3]
	r := bits.RotateLeft64(s1*5, 7) * 9
	s2 ^= s0
	s3 ^= s1
	x.s = [4]uint64{s0 ^ s3, s1 ^ s2, s2 ^ s1<<17, bits.RotateLeft64(s3, 45)}
	return r
}

// newRNG returns the generator of the stream labelled by ids under seed.
// Streams with different labels are independent, so changing, say, the
// number of layers does not change the token text.
func newRNG(seed uint64, ids ...uint64) *rng {
	h := splitmix64(seed ^ 0x6861656f6c73) // "haeols"
	for _, id := range ids {
		h = splitmix64(h ^ splitmix64(id+0x51))
	}
	x := &xoshiro{}
	for i := range x.s {
		h = splitmix64(h + uint64(i))
		x.s[i] = h
	}
	return &rng{r: rand.New(x), x: x}
}

// float returns a uniform number in [0, 1).
func (g *rng) float() float64 { return g.r.Float64() }

// uniform returns a uniform number in [lo, hi).
func (g *rng) uniform(lo, hi float64) float64 { return lo + float64((hi-lo)*g.r.Float64()) }

// intn returns a uniform integer in [0, n).
func (g *rng) intn(n int) int { return g.r.IntN(n) }

// norm returns a standard normal number: the ziggurat's fast path, about
// 99 % of draws, else normSlow. uint32's draw is written out (the
// compiler does not inline uint32; it inlines xoshiro's step), so that the
// fast path calls nothing: a call per draw cost most of the generator's
// time in V8's baseline code.
func (g *rng) norm() float64 {
	var u uint32
	if g.has {
		g.has = false
		u = uint32(g.bits >> 32)
	} else {
		g.bits, g.has = g.x.Uint64(), true
		u = uint32(g.bits)
	}
	j := int32(u)
	i, x, fast := zigLayer(j)
	if fast {
		return x
	}
	return g.normSlow(j, i, x)
}

// zigLayer is the ziggurat's step for the 32-bit draw j: its layer i, the
// candidate x, and whether x is accepted at once (inside the layer's
// rectangle).
func zigLayer(j int32) (i int32, x float64, fast bool) {
	i = j & 127
	x = float64(float64(j) * zigW[i])
	aj := uint32(j)
	if j < 0 {
		aj = uint32(-j)
	}
	return i, x, aj < zigK[i]
}

// normSlow is norm past its fast path for the draw j (layer i, x).
func (g *rng) normSlow(j, i int32, x float64) float64 {
	for {
		if i == 0 {
			// The tail beyond zigR.
			for {
				x = -xmath.Log(1-float64(g.r.Float64())) / zigR
				y := -xmath.Log(1 - float64(g.r.Float64()))
				if y+y >= float64(x*x) {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zigF[i]+float64(g.r.Float64()*(zigF[i-1]-zigF[i])) < xmath.Exp(-0.5*float64(x*x)) {
			return x
		}
		var fast bool
		j = int32(g.uint32())
		if i, x, fast = zigLayer(j); fast {
			return x
		}
	}
}
