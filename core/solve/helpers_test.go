package solve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// newRand returns a deterministic generator (PCG is the same on every
// platform).
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randNormal returns an m x n matrix of standard normal entries.
func randNormal(rng *rand.Rand, m, n int) []float64 {
	a := make([]float64, m*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	return a
}

// expFeatures returns the m x n matrix F[i,t] = exp(s_t*u_i - max_t s_t*u_i)
// with u_i uniform in [-spread, spread] and s_t = 1 + t*ds: close slopes give
// nearly collinear columns whose entries span many orders of magnitude, like
// the HAE-OLS design matrix exp(logit - mu).
func expFeatures(rng *rand.Rand, m, n int, spread, ds float64) []float64 {
	a := make([]float64, m*n)
	for i := 0; i < m; i++ {
		u := spread * (2*rng.Float64() - 1)
		mu := math.Inf(-1)
		for t := 0; t < n; t++ {
			mu = max(mu, (1+float64(t)*ds)*u)
		}
		for t := 0; t < n; t++ {
			a[i*n+t] = math.Exp((1+float64(t)*ds)*u - mu)
		}
	}
	return a
}

// matVec returns A x for the m x n matrix a.
func matVec(a []float64, m, n int, x []float64) []float64 {
	y := make([]float64, m)
	for i := 0; i < m; i++ {
		s := 0.0
		for j := 0; j < n; j++ {
			s += a[i*n+j] * x[j]
		}
		y[i] = s
	}
	return y
}

// objective returns ||A x - b||^2.
func objective(a []float64, m, n int, b, x []float64) float64 {
	ax := matVec(a, m, n, x)
	s := 0.0
	for i := range ax {
		d := ax[i] - b[i]
		s += d * d
	}
	return s
}

func norm2(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func column(a []float64, m, n, j int) []float64 {
	c := make([]float64, m)
	for i := range c {
		c[i] = a[i*n+j]
	}
	return c
}

// lsSubset solves min ||A_S z - b|| for the columns in cols with gonum's SVD
// of the column-normalized A_S (minimum norm, relative cutoff 1e-12) and
// returns z.
func lsSubset(t *testing.T, a []float64, m, n int, b []float64, cols []int) []float64 {
	t.Helper()
	z := make([]float64, len(cols))
	if len(cols) == 0 {
		return z
	}
	sub := mat.NewDense(m, len(cols), nil)
	scale := make([]float64, len(cols))
	for q, j := range cols {
		scale[q] = norm2(column(a, m, n, j))
		if scale[q] == 0 {
			scale[q] = 1
		}
		for i := 0; i < m; i++ {
			sub.Set(i, q, a[i*n+j]/scale[q])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(sub, mat.SVDThin) {
		t.Fatalf("reference SVD failed")
	}
	rank := svd.Rank(1e-12)
	if rank == 0 {
		return z
	}
	var dst mat.Dense
	svd.SolveTo(&dst, mat.NewDense(m, 1, append([]float64(nil), b...)), rank)
	for q := range z {
		z[q] = dst.At(q, 0) / scale[q]
	}
	return z
}

// textbookNNLS is the plain Lawson–Hanson method: every passive-set
// subproblem is solved from scratch by lsSubset, with the classic stopping
// tolerance 10 eps ||A||_1 max(m, n). It is slow and serves as reference.
func textbookNNLS(t *testing.T, a []float64, m, n int, b []float64) []float64 {
	t.Helper()
	norm1 := 0.0
	for j := 0; j < n; j++ {
		s := 0.0
		for i := 0; i < m; i++ {
			s += math.Abs(a[i*n+j])
		}
		norm1 = max(norm1, s)
	}
	tol := 10 * 0x1p-52 * norm1 * float64(max(m, n))
	x := make([]float64, n)
	passive := make([]bool, n)
	for iter := 0; iter < 3*n; iter++ {
		ax := matVec(a, m, n, x)
		j, best := -1, tol
		for k := 0; k < n; k++ {
			if passive[k] {
				continue
			}
			g := 0.0
			for i := 0; i < m; i++ {
				g += a[i*n+k] * (b[i] - ax[i])
			}
			if g > best {
				j, best = k, g
			}
		}
		if j < 0 {
			return x
		}
		passive[j] = true
		for {
			var cols []int
			for k := range passive {
				if passive[k] {
					cols = append(cols, k)
				}
			}
			z := lsSubset(t, a, m, n, b, cols)
			ok := true
			for _, v := range z {
				ok = ok && v > 0
			}
			if ok {
				for q, k := range cols {
					x[k] = z[q]
				}
				break
			}
			alpha, lim := math.Inf(1), -1
			for q, k := range cols {
				if z[q] <= 0 {
					if t := x[k] / (x[k] - z[q]); t < alpha {
						alpha, lim = t, k
					}
				}
			}
			for q, k := range cols {
				x[k] += alpha * (z[q] - x[k])
			}
			x[lim] = 0
			for _, k := range cols {
				if x[k] <= 0 {
					x[k], passive[k] = 0, false
				}
			}
		}
	}
	return x
}

// bruteNNLS enumerates all 2^n passive sets, solves each unconstrained least
// squares problem, keeps the feasible ones and returns the best objective.
func bruteNNLS(t *testing.T, a []float64, m, n int, b []float64) float64 {
	t.Helper()
	best := objective(a, m, n, b, make([]float64, n))
	for mask := 1; mask < 1<<n; mask++ {
		var cols []int
		for j := 0; j < n; j++ {
			if mask&(1<<j) != 0 {
				cols = append(cols, j)
			}
		}
		z := lsSubset(t, a, m, n, b, cols)
		zmax := 0.0
		for _, v := range z {
			zmax = max(zmax, math.Abs(v))
		}
		x := make([]float64, n)
		feasible := true
		for q, j := range cols {
			if z[q] < -1e-9*zmax {
				feasible = false
				break
			}
			x[j] = max(z[q], 0)
		}
		if feasible {
			best = min(best, objective(a, m, n, b, x))
		}
	}
	return best
}

// kktViolations checks the optimality conditions of NNLS at x: x >= 0, and
// for g = A^T (A x - b): g_j >= -tol_j where x_j = 0, |g_j| <= tol_j where
// x_j > 0, with tol_j = c * eps * (m+n) * ||a_j|| * (||b|| + sum_l |x_l| ||a_l||),
// the size of the rounding error of the gradient computed at x. It returns
// the violations and the largest |g_j|/tol_j over the passive set.
func kktViolations(a []float64, m, n int, b, x []float64, c float64) (bad []string, worst float64) {
	ax := matVec(a, m, n, x)
	r := make([]float64, m)
	for i := range r {
		r[i] = ax[i] - b[i]
	}
	cn := make([]float64, n)
	scale := norm2(b)
	for j := 0; j < n; j++ {
		cn[j] = norm2(column(a, m, n, j))
		scale += math.Abs(x[j]) * cn[j]
	}
	for j := 0; j < n; j++ {
		if !(x[j] >= 0) {
			bad = append(bad, fmt.Sprintf("x[%d] = %g, want >= 0", j, x[j]))
			continue
		}
		g := 0.0
		for i := 0; i < m; i++ {
			g += a[i*n+j] * r[i]
		}
		tol := c * 0x1p-52 * float64(m+n) * cn[j] * scale
		if x[j] > 0 {
			worst = max(worst, math.Abs(g)/tol)
			if math.Abs(g) > tol {
				bad = append(bad, fmt.Sprintf("passive x[%d] = %g: gradient %g, want |g| <= %g", j, x[j], g, tol))
			}
		}
		if x[j] == 0 && g < -tol {
			bad = append(bad, fmt.Sprintf("zero x[%d]: gradient %g, want >= %g", j, g, -tol))
		}
	}
	return bad, worst
}

// checkKKT reports kktViolations as test errors.
func checkKKT(t *testing.T, a []float64, m, n int, b, x []float64, c float64) {
	t.Helper()
	bad, worst := kktViolations(a, m, n, b, x, c)
	for _, s := range bad {
		t.Error(s)
	}
	t.Logf("largest passive |g|/tol: %.3g", worst)
}
