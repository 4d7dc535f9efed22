package kernel

import (
	"math"
	"testing"
)

// u is the unit roundoff of float32 (half an ulp of 1).
const u = 0x1p-24

// epsExp and epsLog bound the relative errors of Exp32 and Log32 (measured:
// 8.1e-8, see TestExp32Accuracy and TestLog32Accuracy).
const (
	epsExp = 1.2e-7
	epsLog = 1.2e-7
)

// gamma returns gamma_k = k u / (1 - k u), the classic bound on the relative
// error of k successive float32 roundings (Higham, Accuracy and Stability of
// Numerical Algorithms, Lemma 3.1): a sum or dot product of k terms computed
// in order has absolute error at most gamma_k times the sum of the absolute
// values of its terms.
func gamma(k int) float64 {
	return float64(k) * u / (1 - float64(k)*u)
}

// rng is a small deterministic generator (splitmix64). Its floats are
// integers times a power of 2, so the inputs are the same bits on every
// platform (no math library calls).
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unif returns a float32 uniform in [-1, 1).
func (r *rng) unif() float32 {
	return float32(int32(r.next()>>40)-1<<23) * 0x1p-23
}

// normish returns a float32 with mean 0 and variance 1 (sum of 3 uniforms).
func (r *rng) normish() float32 {
	return r.unif() + r.unif() + r.unif()
}

// intn returns an int in [0, n).
func (r *rng) intn(n int) int {
	return int(r.next() % uint64(n))
}

// vec returns n values of normish.
func (r *rng) vec(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.normish()
	}
	return v
}

// subset returns a random subset of [0, n) of size about n*frac, in random
// order when shuffle is true, else increasing.
func (r *rng) subset(n int, frac float64, shuffle bool) []int32 {
	idx := []int32{} // never nil: nil means all keys
	for j := 0; j < n; j++ {
		if float64(r.next()>>11)*0x1p-53 < frac {
			idx = append(idx, int32(j))
		}
	}
	if shuffle {
		for i := len(idx) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			idx[i], idx[j] = idx[j], idx[i]
		}
	}
	return idx
}

// shape is one test shape: m query rows, n keys, d columns.
type shape struct{ m, n, d int }

// shapes covers odd sizes around every block size of the kernels (4 rows,
// 4 keys, 32/16/4/1 columns, 128-key blocks), m = n = d = 1, and a d beyond
// maxPackD.
var shapes = []shape{
	{1, 1, 1}, {1, 5, 3}, {2, 4, 4}, {3, 7, 5}, {4, 8, 16}, {5, 13, 64},
	{6, 130, 33}, {8, 33, 17}, {9, 3, 2}, {16, 100, 64}, {7, 9, 300},
	{1, 257, 64}, {33, 65, 80}, {13, 1, 7}, {2, 2, 1},
}

// checkClose fails unless |got[i] - want[i]| <= tol[i] for all i.
func checkClose(t *testing.T, what string, got []float32, want, tol []float64) {
	t.Helper()
	bad := 0
	for i := range want {
		g := float64(got[i])
		if !(math.Abs(g-want[i]) <= tol[i]) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.9g, want %.9g (tolerance %.3g)", what, i, g, want[i], tol[i])
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements outside tolerance", what, bad, len(want))
	}
}

// sameFloat reports whether a and b have the same bits or are both NaN: the
// bits of a NaN (sign, payload) depend on operand order and are unspecified
// in WebAssembly, so they are not part of the determinism contract.
func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// sameBits fails unless a and b have identical bits (any NaN equals any
// NaN, see sameFloat).
func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d and %d", what, len(a), len(b))
	}
	for i := range a {
		if !sameFloat(a[i], b[i]) {
			t.Fatalf("%s[%d]: %x (%g) and %x (%g) differ", what, i, math.Float32bits(a[i]), a[i], math.Float32bits(b[i]), b[i])
		}
	}
}

// refLogits returns scale*dot(q[i],k[j]) in float64 and the error bound
// gamma_{d+1}*|scale|*sum_c |q[i,c] k[j,c]|: d roundings of the dot product
// plus the rounding of the scaling.
func refLogits(q []float32, m int, k []float32, n, d int, scale float32) (want, tol []float64) {
	want, tol = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, a float64
			for c := 0; c < d; c++ {
				p := float64(q[i*d+c]) * float64(k[j*d+c])
				s += p
				a += math.Abs(p)
			}
			want[i*n+j] = float64(scale) * s
			tol[i*n+j] = gamma(d+1) * math.Abs(float64(scale)) * a
		}
	}
	return want, tol
}

// refAttn is one-shot softmax attention in float64 for one query row over
// the keys with logits l (-Inf: masked) and values v (rows of d), with the
// error bound of the float32 online computation: if every logit has
// absolute error at most dl, the weights have relative error at most
// eps = 2dl + u*spread + epsExp (spread = largest |logit - max|: the rounding
// of the subtraction), which moves the output by at most 2eps*max|v|; the
// sums of n terms add gamma_n; each of the steps (blocks, merges) adds a
// rescaling by one more Exp32 and two roundings.
func refAttn(l []float64, v []float32, d int, dl float64, steps int) (want []float64, tol float64) {
	want = make([]float64, d)
	mx := math.Inf(-1)
	for _, x := range l {
		mx = max(mx, x)
	}
	if math.IsInf(mx, -1) {
		return want, 0
	}
	var sum, spread, vmax float64
	for j, x := range l {
		if math.IsInf(x, -1) {
			continue
		}
		w := math.Exp(x - mx)
		sum += w
		spread = max(spread, mx-x)
		for c := 0; c < d; c++ {
			want[c] += w * float64(v[j*d+c])
			vmax = max(vmax, math.Abs(float64(v[j*d+c])))
		}
	}
	for c := range want {
		want[c] /= sum
	}
	eps := 2*dl + u*spread + epsExp + float64(steps)*(epsExp+u*spread+2*u)
	return want, (2*eps + 2*gamma(len(l)+2)) * vmax
}
