package kernel

import (
	"fmt"
	"math"
	"testing"
)

func TestDot(t *testing.T) {
	r := &rng{1}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 17, 64, 1000} {
		a, b := r.vec(n), r.vec(n+3) // len(b) > len(a) is allowed
		var want, abs float64
		var seq float32
		for i := range a {
			p := float64(a[i]) * float64(b[i])
			want += p
			abs += math.Abs(p)
			seq += float32(a[i] * b[i])
		}
		got := Dot(a, b)
		// Tolerance: n roundings of a sum in order, gamma_n * sum |a_i b_i|.
		if math.Abs(float64(got)-want) > gamma(n)*abs {
			t.Errorf("n=%d: Dot = %g, want %g (tolerance %g)", n, got, want, gamma(n)*abs)
		}
		// The documented order: exactly the plain loop.
		if math.Float32bits(got) != math.Float32bits(seq) {
			t.Errorf("n=%d: Dot = %g, plain loop %g", n, got, seq)
		}
	}
}

func TestLogits(t *testing.T) {
	r := &rng{2}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.n, s.d), func(t *testing.T) {
			q, k := r.vec(s.m*s.d), r.vec(s.n*s.d)
			scale := float32(1 / math.Sqrt(float64(s.d)))
			got := make([]float32, s.m*s.n)
			Logits(got, q, s.m, k, s.n, s.d, scale)
			want, tol := refLogits(q, s.m, k, s.n, s.d, scale)
			checkClose(t, "Logits", got, want, tol)
			// Documented: element (i,j) has the bits of scale*Dot(q[i], k[j]).
			for i := 0; i < s.m; i++ {
				for j := 0; j < s.n; j++ {
					w := scale * Dot(q[i*s.d:i*s.d+s.d], k[j*s.d:j*s.d+s.d])
					if math.Float32bits(got[i*s.n+j]) != math.Float32bits(w) {
						t.Fatalf("Logits[%d,%d] = %g, scale*Dot = %g", i, j, got[i*s.n+j], w)
					}
				}
			}
		})
	}
}

// TestLogitsRowsIndependent checks that a row's logits do not depend on the
// other rows or keys in the call (the blocking changes nothing).
func TestLogitsRowsIndependent(t *testing.T) {
	r := &rng{3}
	m, n, d := 11, 23, 19
	q, k := r.vec(m*d), r.vec(n*d)
	all := make([]float32, m*n)
	Logits(all, q, m, k, n, d, 0.3)
	for i0 := 0; i0 < m; i0 += 3 {
		rows := min(3, m-i0)
		for j0 := 0; j0 < n; j0 += 5 {
			cols := min(5, n-j0)
			part := make([]float32, rows*cols)
			Logits(part, q[i0*d:], rows, k[j0*d:], cols, d, 0.3)
			for i := 0; i < rows; i++ {
				sameBits(t, "Logits block", part[i*cols:i*cols+cols], all[(i0+i)*n+j0:(i0+i)*n+j0+cols])
			}
		}
	}
}

func TestSoftmaxRows(t *testing.T) {
	r := &rng{4}
	for _, s := range shapes {
		for _, spread := range []float32{1, 10, 60} {
			m, n := s.m, s.n
			src := make([]float32, m*n)
			for i := range src {
				src[i] = spread * r.unif()
			}
			if m > 1 {
				for j := 0; j < n; j++ { // a row of large logits
					src[n+j] = 80 + r.unif()
				}
			}
			if n > 2 {
				src[1] = float32(math.Inf(-1)) // a masked key
			}
			dst, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
			SoftmaxRows(dst, src, m, n, mu, sum)
			want, tol := make([]float64, m*n), make([]float64, m*n)
			wsum, tsum := make([]float64, m), make([]float64, m)
			for i := 0; i < m; i++ {
				mx := math.Inf(-1)
				for _, x := range src[i*n : i*n+n] {
					mx = max(mx, float64(x))
				}
				if float64(mu[i]) != mx {
					t.Errorf("%v: mu[%d] = %g, want %g", s, i, mu[i], mx)
				}
				var tot, sp float64
				for _, x := range src[i*n : i*n+n] {
					tot += math.Exp(float64(x) - mx)
					if !math.IsInf(float64(x), -1) {
						sp = max(sp, mx-float64(x))
					}
				}
				// Tolerance: each exponential has relative error
				// u*spread (the rounded subtraction) + epsExp; the sum
				// adds gamma_n, the normalization 2u.
				e := u*sp + epsExp
				wsum[i], tsum[i] = tot, (e+gamma(n))*tot
				for j, x := range src[i*n : i*n+n] {
					w := math.Exp(float64(x)-mx) / tot
					want[i*n+j] = w
					tol[i*n+j] = (2*e+gamma(n)+2*u)*w + 0x1p-149
				}
			}
			checkClose(t, fmt.Sprintf("%v spread %g: SoftmaxRows", s, spread), dst, want, tol)
			checkClose(t, fmt.Sprintf("%v spread %g: sum", s, spread), sum, wsum, tsum)
			// In place (dst aliases src) gives the same bits.
			SoftmaxRows(src, src, m, n, mu, sum)
			sameBits(t, "SoftmaxRows in place", src, dst)
		}
	}
}

func TestColMean(t *testing.T) {
	r := &rng{5}
	for _, s := range shapes {
		m, n := s.m, s.n
		a := r.vec(m * n)
		dst := make([]float32, n)
		for j := range dst {
			dst[j] = 7 // overwritten
		}
		ColMean(dst, a, m, n)
		want, tol := make([]float64, n), make([]float64, n)
		for j := 0; j < n; j++ {
			var sum, abs float64
			for i := 0; i < m; i++ {
				sum += float64(a[i*n+j])
				abs += math.Abs(float64(a[i*n+j]))
			}
			// Tolerance: m-1 roundings of the sum, 2 of the mean (1/m, product).
			want[j], tol[j] = sum/float64(m), gamma(m+2)*abs/float64(m)
		}
		checkClose(t, fmt.Sprintf("%v: ColMean", s), dst, want, tol)
	}
}

// attention returns the m x n row softmax of random logits (float32).
func attention(r *rng, m, n int, spread float32) []float32 {
	a := make([]float32, m*n)
	for i := range a {
		a[i] = spread * r.unif()
	}
	SoftmaxRows(a, a, m, n, make([]float32, m), make([]float32, m))
	return a
}

// entropyTol is the absolute tolerance of a normalized entropy over k terms:
// the column (or row) sum has relative error gamma_k, which moves each p by
// that much and -sum p ln p by at most (gamma_k + u) (sum p = 1, d(-p ln p) =
// -(ln p + 1) dp, divided by ln k); each term's Log32 and product add
// (epsLog + u) relative, the sum gamma_k relative, the normalization
// epsLog + 2u relative, and H <= 1.
func entropyTol(k int) float64 {
	return 2*epsLog + 4*u + 2*gamma(k) + (gamma(k)+u)/math.Log(float64(k))
}

func TestKeyEntropy(t *testing.T) {
	r := &rng{6}
	for _, s := range shapes {
		for _, spread := range []float32{0.5, 5, 30} {
			m, n := s.m, s.n
			a := attention(r, m, n, spread)
			dst := make([]float32, n)
			KeyEntropy(dst, a, m, n, make([]float32, 2*n))
			want, tol := make([]float64, n), make([]float64, n)
			for j := 0; j < n; j++ {
				want[j] = 1
				if m == 1 {
					continue
				}
				var c, h float64
				for i := 0; i < m; i++ {
					c += float64(a[i*n+j])
				}
				for i := 0; i < m; i++ {
					if p := float64(a[i*n+j]) / c; p > 0 {
						h -= p * math.Log(p)
					}
				}
				want[j] = h / math.Log(float64(m))
				tol[j] = entropyTol(m)
			}
			checkClose(t, fmt.Sprintf("%v spread %g: KeyEntropy", s, spread), dst, want, tol)
		}
	}
}

// TestKeyStats checks that KeyStats gives the bits of ColMean and
// KeyEntropy called apart.
func TestKeyStats(t *testing.T) {
	r := &rng{23}
	for _, s := range shapes {
		m, n := s.m, s.n
		a := attention(r, m, n, 5)
		sal, ent := make([]float32, n), make([]float32, n)
		KeyStats(sal, ent, a, m, n, make([]float32, 2*n))
		wantSal, wantEnt := make([]float32, n), make([]float32, n)
		ColMean(wantSal, a, m, n)
		KeyEntropy(wantEnt, a, m, n, make([]float32, 2*n))
		sameBits(t, fmt.Sprintf("%v: salience", s), sal, wantSal)
		sameBits(t, fmt.Sprintf("%v: key entropy", s), ent, wantEnt)
	}
}

func TestKeyEntropyEdges(t *testing.T) {
	const m, n = 8, 5
	a := make([]float32, m*n)
	for i := 0; i < m; i++ {
		a[i*n+1] = 0.25       // uniform column: entropy 1
		a[i*n+3] = 1e-30      // uniform and tiny
		a[i*n+4] = float32(i) // graded
	}
	a[5*n+2] = 0.7 // one-hot column: entropy 0; column 0 has zero mass: 1
	dst := make([]float32, n)
	KeyEntropy(dst, a, m, n, make([]float32, 2*n))
	var h4 float64
	for i := 1; i < m; i++ {
		p := float64(i) / 28
		h4 -= p * math.Log(p)
	}
	h4 /= math.Log(m)
	want := []float64{1, 1, 0, 1, h4}
	// Zero mass and one-hot columns are exact (p = 1, ln 1 = 0); the
	// uniform ones are 1 up to the rounding of the sum and of 1/ln m.
	tol := []float64{0, entropyTol(m), 0, entropyTol(m), entropyTol(m)}
	checkClose(t, "KeyEntropy edges", dst, want, tol)

	one := []float32{0.2, 0, 0.8}
	dst = make([]float32, 3)
	KeyEntropy(dst, one, 1, 3, make([]float32, 6))
	checkClose(t, "KeyEntropy m=1", dst, []float64{1, 1, 1}, []float64{0, 0, 0})
}

func TestRowEntropy(t *testing.T) {
	r := &rng{7}
	for _, s := range shapes {
		m, n := s.m, s.n
		a := attention(r, m, n, 4)
		dst := make([]float32, m)
		RowEntropy(dst, a, m, n)
		want, tol := make([]float64, m), make([]float64, m)
		for i := 0; i < m; i++ {
			want[i] = 1
			if n == 1 {
				continue
			}
			var h, tot float64
			for _, x := range a[i*n : i*n+n] {
				tot += float64(x)
				if x > 0 {
					h -= float64(x) * math.Log(float64(x))
				}
			}
			want[i] = h / math.Log(float64(n))
			// The row sums to 1 within gamma_n; the terms are as in
			// entropyTol, without the division by the column sum.
			tol[i] = 2*epsLog + 4*u + 2*gamma(n) + math.Abs(tot-1)
		}
		checkClose(t, fmt.Sprintf("%v: RowEntropy", s), dst, want, tol)
		// Rows taken two at a time give each row's bits alone.
		for i := 0; i < m; i++ {
			one := make([]float32, 1)
			RowEntropy(one, a[i*n:i*n+n], 1, n)
			sameBits(t, fmt.Sprintf("%v: RowEntropy of row %d alone", s, i), one, dst[i:i+1])
		}
	}
	// Edges: one-hot row 0, uniform row 1, n == 1 gives 1.
	dst := make([]float32, 2)
	RowEntropy(dst, []float32{0, 1, 0, 0, 0.25, 0.25, 0.25, 0.25}, 2, 4)
	checkClose(t, "RowEntropy edges", dst, []float64{0, 1}, []float64{0, 2*epsLog + 4*u})
	RowEntropy(dst, []float32{1, 1}, 2, 1)
	checkClose(t, "RowEntropy n=1", dst, []float64{1, 1}, []float64{0, 0})
}

func TestMatMul(t *testing.T) {
	r := &rng{8}
	for _, s := range shapes {
		m, n, d := s.m, s.n, s.d
		a, b := r.vec(m*n), r.vec(n*d)
		if len(a) > 2 {
			a[2] = 0 // exact zeros are ordinary terms
		}
		dst := make([]float32, m*d)
		for i := range dst {
			dst[i] = 9 // overwritten
		}
		MatMul(dst, a, m, n, b, d)
		want, tol := make([]float64, m*d), make([]float64, m*d)
		for i := 0; i < m; i++ {
			for c := 0; c < d; c++ {
				var sum, abs float64
				for j := 0; j < n; j++ {
					p := float64(a[i*n+j]) * float64(b[j*d+c])
					sum += p
					abs += math.Abs(p)
				}
				// Tolerance: a dot product of length n, gamma_n.
				want[i*d+c], tol[i*d+c] = sum, gamma(n)*abs
			}
		}
		checkClose(t, fmt.Sprintf("%v: MatMul", s), dst, want, tol)
	}
}

func TestBinMass(t *testing.T) {
	r := &rng{9}
	for _, s := range shapes {
		for _, tc := range []struct {
			name    string
			frac    float64
			shuffle bool
		}{{"empty", 0, false}, {"half", 0.5, false}, {"shuffled", 0.7, true}, {"all", 1, false}} {
			m, n, d := s.m, s.n, s.d
			a, v := attention(r, m, n, 3), r.vec(n*d)
			idx := r.subset(n, tc.frac, tc.shuffle)
			if tc.name == "all" && n > 300 {
				idx = append(idx, idx...) // more than one gather chunk, repeats
			}
			z, y := make([]float32, m), make([]float32, m*d)
			for i := range y {
				y[i] = 5 // overwritten
			}
			BinMass(z, y, a, m, n, idx, v, d)
			wz, tz := make([]float64, m), make([]float64, m)
			wy, ty := make([]float64, m*d), make([]float64, m*d)
			for i := 0; i < m; i++ {
				for _, j := range idx {
					x := float64(a[i*n+int(j)])
					wz[i] += x
					tz[i] += x
					for c := 0; c < d; c++ {
						wy[i*d+c] += x * float64(v[int(j)*d+c])
						ty[i*d+c] += math.Abs(x * float64(v[int(j)*d+c]))
					}
				}
				// Tolerance: sums of len(idx) terms, gamma_len.
				tz[i] *= gamma(len(idx))
				for c := 0; c < d; c++ {
					ty[i*d+c] *= gamma(len(idx))
				}
			}
			name := fmt.Sprintf("%v %s", s, tc.name)
			checkClose(t, name+": z", z, wz, tz)
			checkClose(t, name+": y", y, wy, ty)
		}
	}
}

// rowLogits returns the float64 logits of query row i against the keys of
// the partial test (with bias and causal mask), with their error bound.
func rowLogits(q, k []float32, i, c, d int, scale float32, bias []float32, causal bool) (l []float64, dl float64) {
	l = make([]float64, c)
	for j := range l {
		if causal && j > i {
			l[j] = math.Inf(-1)
			continue
		}
		var s, a float64
		for e := 0; e < d; e++ {
			p := float64(q[i*d+e]) * float64(k[j*d+e])
			s += p
			a += math.Abs(p)
		}
		l[j] = float64(scale) * s
		// Dot product and scaling, then the rounded bias addition.
		err := gamma(d+1) * math.Abs(float64(scale)) * a
		if bias != nil {
			l[j] += float64(bias[j])
			err += u * (math.Abs(l[j]) + err)
		}
		dl = max(dl, err)
	}
	return l, dl
}

func TestPartialAddKeys(t *testing.T) {
	r := &rng{10}
	for _, s := range shapes {
		for _, tc := range []struct {
			name         string
			causal, bias bool
			shift        float32
		}{{"plain", false, false, 0}, {"bias", false, true, 0}, {"causal", true, false, 0}, {"causal+bias", true, true, 0}, {"large", false, true, 80}} {
			m, c, d := s.m, s.n, s.d
			q, k, v := r.vec(m*d), r.vec(c*d), r.vec(c*d)
			scale := float32(1 / math.Sqrt(float64(d)))
			var bias []float32
			if tc.bias {
				bias = make([]float32, c)
				for j := range bias {
					bias[j] = tc.shift + 2*r.unif()
				}
			}
			p := NewPartial(m, d)
			p.AddKeys(q, k, v, c, scale, bias, tc.causal, make([]float32, c))
			got := make([]float32, m*d)
			p.Output(got)
			want, tol := make([]float64, m*d), make([]float64, m*d)
			for i := 0; i < m; i++ {
				l, dl := rowLogits(q, k, i, c, d, scale, bias, tc.causal)
				w, e := refAttn(l, v, d, dl, (c+partKeys-1)/partKeys)
				copy(want[i*d:], w)
				for cc := 0; cc < d; cc++ {
					tol[i*d+cc] = e
				}
			}
			checkClose(t, fmt.Sprintf("%v %s", s, tc.name), got, want, tol)
		}
	}
}

func TestPartialAddLogits(t *testing.T) {
	r := &rng{11}
	for _, s := range shapes {
		for _, tc := range []struct {
			name    string
			frac    float64
			shuffle bool
			nilIdx  bool
		}{{"nil", 1, false, true}, {"all", 1, false, false}, {"half", 0.5, false, false}, {"shuffled", 0.6, true, false}, {"none", 0, false, false}} {
			m, n, d := s.m, s.n, s.d
			sl, v := make([]float32, m*n), r.vec(n*d)
			for i := range sl {
				sl[i] = 6 * r.unif()
			}
			if n > 3 {
				sl[3] = float32(math.Inf(-1))
			}
			var idx []int32
			if !tc.nilIdx {
				idx = r.subset(n, tc.frac, tc.shuffle)
				if tc.frac == 0 {
					idx = []int32{}
				}
			}
			p := NewPartial(m, d)
			p.AddLogits(sl, n, idx, v)
			got := make([]float32, m*d)
			p.Output(got)
			want, tol := make([]float64, m*d), make([]float64, m*d)
			for i := 0; i < m; i++ {
				l := make([]float64, n)
				for j := range l {
					l[j] = math.Inf(-1)
				}
				if tc.nilIdx {
					for j := range l {
						l[j] = float64(sl[i*n+j])
					}
				} else {
					for _, j := range idx {
						l[j] = float64(sl[i*n+int(j)])
					}
				}
				w, e := refAttn(l, v, d, 0, 0)
				copy(want[i*d:], w)
				for c := 0; c < d; c++ {
					tol[i*d+c] = e
				}
			}
			checkClose(t, fmt.Sprintf("%v %s", s, tc.name), got, want, tol)
		}
	}
}

// TestPartialAddLogitsRowsIndependent checks that AddLogits over many rows
// (two at a time where it can) gives each row the bits of that row added
// alone, twice in a row so that the second call rescales, over all keys and
// over a shuffled subset: rows with -Inf logits, a row of -Inf only, a row
// with a NaN and a lone last row.
func TestPartialAddLogitsRowsIndependent(t *testing.T) {
	r := &rng{17}
	const m, d = 7, 20
	for _, n := range []int{1, 5, 300, 700} {
		v := r.vec(n * d)
		logits := func(shift float32) []float32 {
			sl := make([]float32, m*n)
			for i := range sl {
				sl[i] = 8*r.unif() + shift
			}
			sl[n-1] = float32(math.Inf(-1)) // row 0, last key
			for j := 0; j < n; j++ {
				sl[2*n+j] = float32(math.Inf(-1)) // row 2: no key
			}
			sl[4*n+n/2] = float32(math.NaN())
			return sl
		}
		s1, s2 := logits(0), logits(3)
		for _, idx := range [][]int32{nil, r.subset(n, 0.6, true)} {
			p := NewPartial(m, d)
			p.AddLogits(s1, n, idx, v)
			p.AddLogits(s2, n, idx, v)
			for i := 0; i < m; i++ {
				q := NewPartial(1, d)
				q.AddLogits(s1[i*n:(i+1)*n], n, idx, v)
				q.AddLogits(s2[i*n:(i+1)*n], n, idx, v)
				name := fmt.Sprintf("n=%d indexed=%v row %d", n, idx != nil, i)
				sameBits(t, name+" max", p.Max[i:i+1], q.Max)
				sameBits(t, name+" sum", p.Sum[i:i+1], q.Sum)
				sameBits(t, name+" acc", p.Acc[i*d:(i+1)*d], q.Acc)
			}
		}
	}
}

// TestPartialAddKeysRowsIndependent checks that AddKeys over many rows (two
// at a time where they see the same keys) gives each row the bits of that
// row added alone: without and with causality (row i alone over keys 0..i)
// and biases, and with a -Inf bias on one key.
func TestPartialAddKeysRowsIndependent(t *testing.T) {
	r := &rng{19}
	const m, d = 9, 12
	for _, c := range []int{3, 130, 300} {
		q, k, v := r.vec(m*d), r.vec(c*d), r.vec(c*d)
		bias := r.vec(c)
		bias[c/2] = float32(math.Inf(-1))
		for _, causal := range []bool{false, true} {
			for _, b := range [][]float32{nil, bias} {
				p := NewPartial(m, d)
				p.AddKeys(q, k, v, c, 0.7, b, causal, nil)
				for i := 0; i < m; i++ {
					ci := c
					if causal {
						ci = min(c, i+1)
					}
					var bi []float32
					if b != nil {
						bi = b[:ci]
					}
					one := NewPartial(1, d)
					one.AddKeys(q[i*d:(i+1)*d], k[:ci*d], v[:ci*d], ci, 0.7, bi, false, nil)
					name := fmt.Sprintf("c=%d causal=%v bias=%v row %d", c, causal, b != nil, i)
					sameBits(t, name+" max", p.Max[i:i+1], one.Max)
					sameBits(t, name+" sum", p.Sum[i:i+1], one.Sum)
					sameBits(t, name+" acc", p.Acc[i*d:(i+1)*d], one.Acc)
				}
			}
		}
	}
}

// TestPartialMerge splits the keys at random points into parts, adds each
// part to its own partial (alternating AddKeys and AddLogits), merges them in
// a random order (including empty parts) and compares with one-shot
// attention over all keys.
func TestPartialMerge(t *testing.T) {
	r := &rng{12}
	for _, s := range shapes {
		for trial := 0; trial < 3; trial++ {
			m, c, d := s.m, s.n, s.d
			q, k, v := r.vec(m*d), r.vec(c*d), r.vec(c*d)
			bias := make([]float32, c)
			for j := range bias {
				bias[j] = r.unif()
			}
			scale := float32(0.7)
			cuts := []int{0, c}
			for range 1 + r.intn(4) {
				cuts = append(cuts, r.intn(c+1))
			}
			sortInts(cuts)
			var parts []*Partial
			for pi := 0; pi+1 < len(cuts); pi++ {
				j0, j1 := cuts[pi], cuts[pi+1]
				p := NewPartial(m, d)
				if pi%2 == 0 {
					p.AddKeys(q, k[j0*d:j1*d], v[j0*d:j1*d], j1-j0, scale, bias[j0:j1], false, nil)
				} else {
					sl := make([]float32, m*(j1-j0))
					Logits(sl, q, m, k[j0*d:j1*d], j1-j0, d, scale)
					for i := 0; i < m; i++ {
						for j := j0; j < j1; j++ {
							sl[i*(j1-j0)+j-j0] += bias[j]
						}
					}
					p.AddLogits(sl, j1-j0, nil, v[j0*d:j1*d])
				}
				parts = append(parts, p)
			}
			for i := len(parts) - 1; i > 0; i-- {
				j := r.intn(i + 1)
				parts[i], parts[j] = parts[j], parts[i]
			}
			acc := NewPartial(m, d)
			for _, p := range parts {
				acc.Merge(p)
			}
			got := make([]float32, m*d)
			acc.Output(got)
			want, tol := make([]float64, m*d), make([]float64, m*d)
			for i := 0; i < m; i++ {
				l, dl := rowLogits(q, k, i, c, d, scale, bias, false)
				w, e := refAttn(l, v, d, dl, len(parts)+(c+partKeys-1)/partKeys)
				copy(want[i*d:], w)
				for cc := 0; cc < d; cc++ {
					tol[i*d+cc] = e
				}
			}
			checkClose(t, fmt.Sprintf("%v cuts %v", s, cuts), got, want, tol)

			// CopyFrom then Merge of an empty partial changes nothing.
			cp := NewPartial(m, d)
			cp.CopyFrom(acc)
			cp.Merge(NewPartial(m, d))
			out := make([]float32, m*d)
			cp.Output(out)
			sameBits(t, "CopyFrom+Merge(empty)", out, got)
		}
	}
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestPartialEmptyAndReset(t *testing.T) {
	const m, d = 3, 5
	r := &rng{13}
	q, k, v := r.vec(m*d), r.vec(4*d), r.vec(4*d)
	out := make([]float32, m*d)
	for i := range out {
		out[i] = 1
	}
	p := NewPartial(m, d)
	p.AddKeys(q, k, v, 0, 1, nil, true, nil) // no keys
	neg := []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
	p.AddLogits(append(append(append([]float32{}, neg...), neg...), neg...), 2, nil, v) // all masked
	p.Output(out)
	sameBits(t, "empty partial", out, make([]float32, m*d))

	// Causal with fewer keys than rows: row 0 sees key 0 only, so its output
	// is v[0] exactly (weight 1).
	p.AddKeys(q, k, v, 2, 1, nil, true, nil)
	p.Output(out)
	sameBits(t, "causal row 0", out[:d], v[:d])

	p.Reset()
	p.Output(out)
	sameBits(t, "after Reset", out, make([]float32, m*d))
	for _, x := range p.Max {
		if !math.IsInf(float64(x), -1) {
			t.Fatalf("Reset: Max = %v", p.Max)
		}
	}
}

// TestPartialState checks the documented state after several online steps:
// Max[i] is the largest logit seen, exactly, and Sum[i] is
// sum_j exp(l[j] - Max[i]) within epsExp + u*spread per weight, one more
// Exp32 and rounding per step, and gamma_n for the sum.
func TestPartialState(t *testing.T) {
	r := &rng{17}
	const m, n, d, steps = 3, 40, 5, 4
	v := r.vec(n * d)
	s := make([]float32, m*n)
	for i := range s {
		s[i] = 6*r.unif() + float32(i%n)/4 // later keys larger: a rescale per step
	}
	p := NewPartial(m, d)
	w := n / steps
	part := make([]float32, m*w)
	for st := 0; st < steps; st++ {
		for i := 0; i < m; i++ {
			copy(part[i*w:], s[i*n+st*w:i*n+st*w+w])
		}
		p.AddLogits(part, w, nil, v[st*w*d:])
	}
	for i := 0; i < m; i++ {
		mx := math.Inf(-1)
		for _, x := range s[i*n : i*n+n] {
			mx = max(mx, float64(x))
		}
		var sum, spread float64
		for _, x := range s[i*n : i*n+n] {
			sum += math.Exp(float64(x) - mx)
			spread = max(spread, mx-float64(x))
		}
		if float64(p.Max[i]) != mx {
			t.Errorf("Max[%d] = %g, want %g", i, p.Max[i], mx)
		}
		tol := (epsExp + u*spread + steps*(epsExp+u*spread+u) + gamma(n)) * sum
		checkClose(t, fmt.Sprintf("Sum[%d]", i), p.Sum[i:i+1], []float64{sum}, []float64{tol})
	}
}

// TestPartialLargeLogits: logits near 80 and 1e4 (whose exponentials
// overflow float32) give the same attention as logits shifted to 0.
func TestPartialLargeLogits(t *testing.T) {
	r := &rng{14}
	const m, n, d = 2, 40, 8
	v := r.vec(n * d)
	base := make([]float32, m*n)
	for i := range base {
		base[i] = 3 * r.unif()
	}
	for _, shift := range []float32{80, 1e4, -1e4} {
		sl := make([]float32, m*n)
		for i := range sl {
			sl[i] = base[i] + shift
		}
		// The keys in two halves (two online steps), then in one call.
		h1, h2 := make([]float32, m*n/2), make([]float32, m*n/2)
		for i := 0; i < m; i++ {
			copy(h1[i*n/2:], sl[i*n:i*n+n/2])
			copy(h2[i*n/2:], sl[i*n+n/2:i*n+n])
		}
		p := NewPartial(m, d)
		p.AddLogits(h1, n/2, nil, v)
		p.AddLogits(h2, n/2, nil, v[n/2*d:])
		p2 := NewPartial(m, d)
		p2.AddLogits(sl, n, nil, v)
		got, got2 := make([]float32, m*d), make([]float32, m*d)
		p.Output(got)
		p2.Output(got2)
		want, tol := make([]float64, m*d), make([]float64, m*d)
		for i := 0; i < m; i++ {
			l := make([]float64, n)
			for j := range l {
				l[j] = float64(base[i*n+j])
			}
			// The shifted logits are rounded: absolute error u*|shift|.
			w, e := refAttn(l, v, d, u*math.Abs(float64(shift)), 1)
			copy(want[i*d:], w)
			for c := 0; c < d; c++ {
				tol[i*d+c] = e
			}
		}
		for _, x := range got {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("shift %g: output %v", shift, got)
			}
		}
		checkClose(t, fmt.Sprintf("shift %g rows split", shift), got, want, tol)
		checkClose(t, fmt.Sprintf("shift %g one call", shift), got2, want, tol)
	}
}

func TestFeatures(t *testing.T) {
	r := &rng{41}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.n, s.d), func(t *testing.T) {
			q, k := r.vec(s.m*s.d), r.vec(s.n*s.d)
			scale := float32(1 / math.Sqrt(float64(s.d)))
			mu := r.vec(s.m)
			got := make([]float32, s.m*s.n)
			Features(got, q, s.m, k, s.n, s.d, scale, mu)
			lw, ltol := refLogits(q, s.m, k, s.n, s.d, scale)
			want, tol := make([]float64, len(lw)), make([]float64, len(lw))
			for i := range lw {
				mi := float64(mu[i/s.n])
				// The logit's error scales the exponential; the shift and
				// Exp32 add a few ulp.
				want[i] = math.Exp(lw[i] - mi)
				tol[i] = want[i] * (math.Expm1(ltol[i]+math.Abs(lw[i]-mi)*1e-7) + 4e-7)
			}
			checkClose(t, "Features", got, want, tol)
			// Documented: the bits of Exp32(Logits - mu).
			lg := make([]float32, s.m*s.n)
			Logits(lg, q, s.m, k, s.n, s.d, scale)
			for i, x := range lg {
				if w := Exp32(x - mu[i/s.n]); math.Float32bits(got[i]) != math.Float32bits(w) {
					t.Fatalf("Features[%d] = %g, Exp32(logit - mu) = %g", i, got[i], w)
				}
			}
		})
	}
}

// TestAxpy2Bounds: the portable axpy2 reads rows of b through pointers
// after one check of the rows it will read; a row index outside b, or a
// negative one, still panics instead of reading memory outside b.
func TestAxpy2Bounds(t *testing.T) {
	const ldb, rows = 8, 3
	b := make([]float32, rows*ldb)
	for i := range b {
		b[i] = float32(i)
	}
	for _, tc := range []struct {
		idx   []int32
		panic bool
	}{
		{nil, false},
		{[]int32{2, 0, 1}, false},
		{[]int32{0, 3}, true},
		{[]int32{1, -1}, true},
	} {
		n := rows
		if tc.idx != nil {
			n = len(tc.idx)
		}
		c0, c1 := make([]float32, n), make([]float32, n)
		for i := range c0 {
			c0[i], c1[i] = 1, 2
		}
		o0, o1 := make([]float32, ldb), make([]float32, ldb)
		func() {
			defer func() {
				if got := recover() != nil; got != tc.panic {
					t.Errorf("idx %v: panicked %v, want %v", tc.idx, got, tc.panic)
				}
			}()
			axpy2Go(o0, o1, c0, c1, tc.idx, b, ldb)
		}()
		if tc.panic {
			continue
		}
		for c := range o0 {
			var want float32
			for t := range c0 {
				j := t
				if tc.idx != nil {
					j = int(tc.idx[t])
				}
				want += b[j*ldb+c]
			}
			if o0[c] != want || o1[c] != 2*want {
				t.Errorf("idx %v: column %d: %v, %v, want %v, %v", tc.idx, c, o0[c], o1[c], want, 2*want)
			}
		}
	}
}

// TestAxpyWiden checks AxpyWiden bit for bit against the scalar definition
// dst[c] += float64(w * float64(x[c])) at lengths around the four-element
// blocks, with weights and values over many magnitudes, and that it leaves
// dst past len(x) alone.
func TestAxpyWiden(t *testing.T) {
	r := &rng{7}
	for _, tc := range []struct {
		n int
		w float64
	}{
		{0, 1}, {1, 0.5}, {3, -2.25}, {4, 1e-30}, {5, 3.7}, {8, -1}, {63, 0.013}, {64, 1e30}, {65, -7e-3},
	} {
		x := r.vec(tc.n)
		for i := range x {
			x[i] *= float32(math.Ldexp(1, i%40-20))
		}
		dst := make([]float64, tc.n+3)
		for i := range dst {
			dst[i] = float64(r.vec(1)[0])
		}
		want := append([]float64(nil), dst...)
		for c, v := range x {
			want[c] += float64(tc.w * float64(v))
		}
		AxpyWiden(dst, tc.w, x)
		for i := range dst {
			if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d w=%g: dst[%d] = %v, want %v", tc.n, tc.w, i, dst[i], want[i])
			}
		}
	}
}

// TestSoftmaxAttend: Calibrate's fused softmax and attention give the bits
// of SoftmaxRows followed by AddLogits on an empty partial, on every path,
// for rows the vectors take (one or two at a time: odd and even row
// counts, rows past a chunk of expChunk keys) and rows they leave to the
// kernels' own paths (all -Inf, a NaN, a zero maximum of either sign, -Inf
// keys among finite ones).
func TestSoftmaxAttend(t *testing.T) {
	r := &rng{23}
	inf := float32(math.Inf(1))
	for _, p := range kernelPaths() {
		withPath(p, func() {
			for _, sh := range []struct{ m, n, d int }{{1, 5, 3}, {2, 8, 4}, {3, 300, 8}, {7, 513, 16}, {6, 1024, 64}, {5, 3, 2}} {
				m, n, d := sh.m, sh.n, sh.d
				s, v := make([]float32, m*n), r.vec(n*d)
				for i := range s {
					s[i] = 9 * r.unif()
				}
				special := [][]float32{
					{-inf}, // every logit -Inf
					{float32(math.NaN())},
					{0, float32(math.Copysign(0, -1)), -1}, // a zero maximum
					{-inf, 2},                              // -Inf keys among finite ones
				}
				for i := 0; i < m && i < len(special); i += 2 {
					row := s[i*n : i*n+n]
					for j := range row {
						row[j] = special[i/2][j%len(special[i/2])]
						if i/2 == 3 && j%2 == 1 {
							row[j] = 3 * r.unif()
						}
					}
				}
				a, mu, sum := make([]float32, m*n), make([]float32, m), make([]float32, m)
				a2, mu2, sum2 := make([]float32, m*n), make([]float32, m), make([]float32, m)
				SoftmaxRows(a, s, m, n, mu, sum)
				want := NewPartial(m, d)
				want.AddLogits(s, n, nil, v)
				got := NewPartial(m, d)
				softmaxAttend(a2, s, m, n, mu2, sum2, got, v)
				what := fmt.Sprintf("%s m=%d n=%d d=%d", p.name, m, n, d)
				sameBits(t, what+" attention", a2, a)
				sameBits(t, what+" row maxima", mu2, mu)
				sameBits(t, what+" row sums", sum2, sum)
				sameBits(t, what+" partial maxima", got.Max, want.Max)
				sameBits(t, what+" partial sums", got.Sum, want.Sum)
				sameBits(t, what+" partial values", got.Acc, want.Acc)
			}
		})
	}
}
