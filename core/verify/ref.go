package verify

import "math"

// The float64 references: the kernels of HAE-OLS.md §1 written as plain
// loops in float64 on the float32 inputs, the yardstick of both the CPU and
// the GPU kernels.

// refLogits returns scale*q[i].k[j] and, per element, the condition
// scale*|q[i]|*|k[j]| that bounds the rounding error of a float32 sum.
func refLogits(q []float32, m int, k []float32, n, d int, scale float64) (s, cond []float64) {
	s, cond = make([]float64, m*n), make([]float64, m*n)
	kn := make([]float64, n)
	for j := range kn {
		kn[j] = norm(k[j*d : (j+1)*d])
	}
	for i := 0; i < m; i++ {
		qi := q[i*d : (i+1)*d]
		qn := norm(qi)
		for j := 0; j < n; j++ {
			kj := k[j*d : (j+1)*d]
			var acc float64
			for c := range qi {
				acc += float64(qi[c]) * float64(kj[c])
			}
			s[i*n+j] = scale * acc
			cond[i*n+j] = scale * qn * kn[j]
		}
	}
	return s, cond
}

func norm(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// refSoftmax returns the row softmax of s (m x n, row i over its first
// rowLen(i) columns), the row maxima and the sums of exp(s - max).
func refSoftmax(s []float64, m, n int, rowLen func(int) int) (a, mu, sum []float64) {
	a, mu, sum = make([]float64, m*n), make([]float64, m), make([]float64, m)
	for i := 0; i < m; i++ {
		l := rowLen(i)
		row := s[i*n : i*n+l]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = max(mx, x)
		}
		var t float64
		for j, x := range row {
			e := math.Exp(x - mx)
			a[i*n+j] = e
			t += e
		}
		for j := range row {
			a[i*n+j] /= t
		}
		mu[i], sum[i] = mx, t
	}
	return a, mu, sum
}

// refColumns returns the salience and the normalized key entropy of the
// m x n attention a.
func refColumns(a []float64, m, n int) (sal, ke []float64) {
	sal, ke = make([]float64, n), make([]float64, n)
	for j := 0; j < n; j++ {
		var c float64
		for i := 0; i < m; i++ {
			c += a[i*n+j]
		}
		sal[j] = c / float64(m)
		if m == 1 || c <= 0 {
			ke[j] = 1
			continue
		}
		var h float64
		for i := 0; i < m; i++ {
			if p := a[i*n+j] / c; p > 0 {
				h -= p * math.Log(p)
			}
		}
		ke[j] = min(max(h/math.Log(float64(m)), 0), 1)
	}
	return sal, ke
}

// refRowEntropy returns the normalized entropy of each row of a.
func refRowEntropy(a []float64, m, n int) []float64 {
	out := make([]float64, m)
	for i := range out {
		if n == 1 {
			out[i] = 1
			continue
		}
		var h float64
		for _, x := range a[i*n : (i+1)*n] {
			if x > 0 {
				h -= x * math.Log(x)
			}
		}
		out[i] = min(max(h/math.Log(float64(n)), 0), 1)
	}
	return out
}

// refWeighted returns z[i] = sum over idx of a[i,j] and y[i,:] = sum over
// idx of a[i,j] v[j,:] (idx nil: all n keys).
func refWeighted(a []float64, m, n int, idx []int32, v []float32, d int) (z, y []float64) {
	z, y = make([]float64, m), make([]float64, m*d)
	keys := idx
	if keys == nil {
		keys = make([]int32, n)
		for j := range keys {
			keys[j] = int32(j)
		}
	}
	for i := 0; i < m; i++ {
		for _, j := range keys {
			x := a[i*n+int(j)]
			z[i] += x
			vj := v[int(j)*d : int(j+1)*d]
			for c, vv := range vj {
				y[i*d+c] += x * float64(vv)
			}
		}
	}
	return z, y
}
