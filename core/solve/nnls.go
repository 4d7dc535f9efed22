package solve

import (
	"fmt"
	"math"
)

// eps is the float64 machine epsilon, the spacing of floats at 1.
const eps = 0x1p-52

const (
	// nnlsBlockRows is how many rows of [A | b] are folded into the
	// triangular factor at a time.
	nnlsBlockRows = 64

	// nnlsDepTol is the independence test for an entering column: after
	// orthogonalization against the passive columns it must keep more than
	// nnlsDepTol * eps of its norm.
	nnlsDepTol = 1000
)

// nnlsGradTol scales the optimality test: a zero-set column j may enter only
// if its gradient component exceeds nnlsGradTol * (m+n+1) * eps * ||a_j|| *
// ||b||. It is a variable only so that tests can set it to zero to exercise
// the numerical safeguards.
var nnlsGradTol = 10.0

// nnlsDirectRows: a problem of at most nnlsDirectRows * (n+1) rows is not
// folded; Lawson–Hanson runs on the scaled [A | b] itself. Folding costs a
// full QR of [A | b], 2 m (n+1)^2 flops, before the first column enters;
// on a short matrix that is more than folding saves the reflections of the
// entering columns later (BenchmarkNNLS at m = 128, n = 64: 166 -> 119 us
// with 14 columns entering; with all 64 entering, direct still wins at
// m = 2(n+1) and loses from 3(n+1)). A variable only so that tests can run
// both paths on every problem.
var nnlsDirectRows = 2

// NNLSWorkspace holds the scratch memory of NNLS so that repeated solves (e.g.
// on every slider move) do not allocate once the workspace has grown to the
// largest n seen. The zero value is ready to use. A workspace must not be used
// by two goroutines at once.
//
// Method. Columns of A and b are first scaled by exact powers of two to unit
// magnitude (NNLS is invariant under positive column scaling, so this only
// removes overflow, underflow and scale dependence). Unless A is short (m at
// most 2(n+1)), [A | b] is then reduced by Householder QR, folded in blocks
// of rows, to an (n+1) x (n+1) upper triangle with the same least-squares
// objective, so the cost of m enters once, O(m n^2). Lawson–Hanson then runs
// on the triangle (or on the short [A | b] itself), keeping a QR factor
// of the passive columns up to date with one Householder reflection per
// entering column and Givens rotations per leaving column, as in Lawson and
// Hanson (1974), chapter 23. Nothing forms A^T A, so nearly collinear columns
// lose only cond(A), not cond(A)^2, digits. The zero set's gradient is
// downdated as columns enter (a reflection keeps inner products), updated
// as they leave, and computed afresh before the solve stops.
//
// Tolerances, all relative so that they do not depend on the scale of A or b:
// the solve stops when every zero-set column j has A^T(b - A x)_j <=
// 10 (m+n+1) eps ||a_j|| ||b||, the rounding level of that gradient. A column
// may enter only if, orthogonalized against the passive columns, it keeps
// more than 1000 eps of its norm, and only if its coefficient would come out
// positive; a column refused by these checks sits out for that iteration
// (Lawson and Hanson's safeguards against cycling on rounding noise). The
// entering column is the one whose gradient is largest relative to its norm.
//
// All arithmetic is plain Go with explicitly rounded products, so results are
// bit-for-bit identical across platforms, js/wasm included.
type NNLSWorkspace struct {
	// MaxIter caps the number of columns that may enter the passive set
	// (outer Lawson–Hanson iterations). Zero or negative means 3n.
	MaxIter int

	w          []float64 // r x (n+1) [A D | b s], row-major: reduced (r = n+1) or scaled (r = m)
	blk        []float64 // nnlsBlockRows x (n+1) scaled rows of [A | b]
	s          []float64 // n+1 Householder products
	v          []float64 // max(nnlsBlockRows, r) Householder vector
	cexp       []int     // column j of A is scaled by 2^-cexp[j]
	cscl       []float64 // 2^-cexp[j]
	norm       []float64 // norms of the scaled columns
	g          []float64 // gradient A^T (b - A x) of the scaled problem
	y          []float64 // solution of the scaled problem
	zz         []float64 // passive-set least-squares solution
	perm       []int     // column of A at each position of w
	rej        []bool    // per position: refused in this outer iteration
	iters      int       // columns entered in the last solve
	drops      int       // columns dropped from the passive set in the last solve
	rejections int       // entering columns refused by the safeguards in the last solve
}

// Iterations returns how many columns entered the passive set during the
// last call of NNLS (the number of outer Lawson–Hanson iterations).
func (ws *NNLSWorkspace) Iterations() int { return ws.iters }

func (ws *NNLSWorkspace) grow(r, n int) {
	c := n + 1
	if cap(ws.w) < r*c {
		ws.w = make([]float64, r*c)
	}
	if cap(ws.blk) < nnlsBlockRows*c {
		ws.blk = make([]float64, nnlsBlockRows*c)
	}
	if cap(ws.s) < c {
		ws.s = make([]float64, c)
		ws.cexp = make([]int, c)
		ws.cscl = make([]float64, c)
		ws.norm = make([]float64, c)
		ws.g = make([]float64, c)
		ws.y = make([]float64, c)
		ws.zz = make([]float64, c)
		ws.perm = make([]int, c)
		ws.rej = make([]bool, c)
	}
	if cap(ws.v) < max(nnlsBlockRows, r) {
		ws.v = make([]float64, max(nnlsBlockRows, r))
	}
}

// checkMatrix validates the shape and finiteness of an m x n row-major matrix
// named name in function fn.
func checkMatrix(fn, name string, a []float64, m, n int) error {
	if m < 0 || n < 0 {
		return fmt.Errorf("solve: %s: %s is %d x %d, dimensions must be non-negative: %w", fn, name, m, n, ErrShape)
	}
	if len(a) != m*n {
		return fmt.Errorf("solve: %s: len(%s) = %d, want %d (%d x %d): %w", fn, name, len(a), m*n, m, n, ErrShape)
	}
	if allFinite(a) {
		return nil
	}
	for i, v := range a {
		if v-v != 0 { // NaN or ±Inf
			return fmt.Errorf("solve: %s: %s[%d] = %v: %w", fn, name, i, v, ErrNotFinite)
		}
	}
	return nil
}

// NNLS solves min ||A x - b||_2 subject to x >= 0 like the package-level
// NNLS, reusing the workspace's memory. On error x holds zeros, except after
// ErrIterationLimit, where it holds the last feasible iterate.
func (ws *NNLSWorkspace) NNLS(a []float64, m, n int, b []float64, x []float64) error {
	ws.iters, ws.drops, ws.rejections = 0, 0, 0
	if m < 0 || n < 0 || len(a) != m*n {
		return checkMatrix("NNLS", "a", a, m, n) // names the shape error
	}
	if err := checkMatrix("NNLS", "b", b, m, 1); err != nil {
		return err
	}
	if len(x) != n {
		return fmt.Errorf("solve: NNLS: len(x) = %d, want n = %d: %w", len(x), n, ErrShape)
	}
	clear(x)
	if n == 0 || m == 0 {
		return nil
	}
	c := n + 1
	r := c // rows of w
	direct := m <= nnlsDirectRows*c
	if direct {
		r = m
	}
	ws.grow(r, n)

	// Scale every column of A and b by a power of two so that its largest
	// magnitude lies in [0.5, 1). Multiplying by a power of two is exact.
	// The same pass checks that A is finite.
	cmax := ws.norm[:n]
	clear(cmax)
	if !colMaxAbs(cmax, a, m, n) {
		return checkMatrix("NNLS", "a", a, m, n) // names the NaN
	}
	for _, v := range cmax {
		if v > math.MaxFloat64 {
			return checkMatrix("NNLS", "a", a, m, n) // names the infinity
		}
	}
	bmax := 0.0
	for _, v := range b {
		if av := math.Abs(v); av > bmax {
			bmax = av
		}
	}
	if bmax == 0 {
		return nil // x = 0 is optimal for b = 0
	}
	bexp := scaleExp(bmax)
	bscl := math.Ldexp(1, -bexp)
	cexp, cscl := ws.cexp[:n], ws.cscl[:n]
	for j, v := range cmax {
		cexp[j] = scaleExp(v)
		cscl[j] = math.Ldexp(1, -cexp[j])
	}

	// Reduce [A D | b s] to the upper triangle w (c x c), or, for a short
	// matrix, copy it scaled (m x c).
	w := ws.w[:r*c]
	norm := ws.norm[:c] // of the scaled columns and of the scaled b
	clear(norm)
	if direct {
		// Row by row: w[i,j] = a[i,j] 2^-cexp[j], and the squares of each
		// column summed in the order of the rows.
		scaleCols(w, c, a, m, n, cscl, norm[:n])
		for i := 0; i < m; i++ {
			t := b[i] * bscl
			w[i*c+n] = t
			norm[n] += float64(t * t)
		}
	} else {
		clear(w)
	}
	for i0 := 0; !direct && i0 < m; i0 += nnlsBlockRows {
		nb := min(nnlsBlockRows, m-i0)
		blk := ws.blk[:nb*c]
		scaleCols(blk, c, a[i0*n:(i0+nb)*n], nb, n, cscl, nil)
		for r := 0; r < nb; r++ {
			blk[r*c+n] = b[i0+r] * bscl
		}
		ws.fold(w, blk, nb, c)
	}

	for i := 0; !direct && i < c; i++ {
		row := w[i*c : i*c+c]
		for j := i; j < c; j++ { // w is zero below its diagonal
			norm[j] += float64(row[j] * row[j])
		}
	}
	for j := range norm {
		norm[j] = math.Sqrt(norm[j])
	}
	bnorm := norm[n]
	norm = norm[:n]

	err := ws.lawsonHanson(w, r, m, n, bnorm)

	// Undo the scaling: x_j = y_j * 2^(bexp - cexp[j]).
	for j, v := range ws.y[:n] {
		if v > 0 {
			x[j] = math.Ldexp(v, bexp-cexp[j])
		}
	}
	if err != nil {
		return err
	}
	for j, v := range x {
		if math.IsInf(v, 0) {
			clear(x)
			return fmt.Errorf("solve: NNLS: x[%d] overflows float64: %w", j, ErrNotFinite)
		}
	}
	return nil
}

// scaleExp returns e such that v * 2^-e lies in [0.5, 1) for v > 0, clamped so
// that 2^-e stays finite; it returns 0 for v = 0.
func scaleExp(v float64) int {
	if v == 0 {
		return 0
	}
	_, e := math.Frexp(v)
	return max(e, -1000)
}

// fold merges the nb x c block blk into the c x c upper triangle w by
// Householder reflections: afterwards [w; blk] has been replaced by an
// orthogonal transform of itself whose block part is zero.
func (ws *NNLSWorkspace) fold(w, blk []float64, nb, c int) {
	v := ws.v[:nb]
	for k := 0; k < c; k++ {
		ss := 0.0
		for r := 0; r < nb; r++ {
			t := blk[r*c+k]
			ss += float64(t * t)
		}
		if ss == 0 {
			continue
		}
		alpha := w[k*c+k]
		beta := -math.Copysign(math.Sqrt(float64(alpha*alpha)+ss), alpha)
		tau := (beta - alpha) / beta
		scal := 1 / (alpha - beta)
		for r := 0; r < nb; r++ {
			v[r] = float64(blk[r*c+k] * scal)
		}
		w[k*c+k] = beta
		if k+1 == c {
			break
		}
		lo := k + 1
		reflectRows(w[k*c+lo:k*c+c], v, tau, blk[lo:], c, ws.s[lo:c])
	}
}

// lawsonHanson runs the active-set method on the reduced c x c problem in w
// (c = n+1, right-hand side in column n), leaving the solution in ws.y.
//
// Columns of w are kept physically permuted: positions 0..p-1 hold the
// passive columns, whose leading p x p block is upper triangular (and which
// are zero below row p-1), positions p..n-1 the zero set; perm maps a
// position to the column of A. Reflections and rotations then touch only the
// columns that can change.
func (ws *NNLSWorkspace) lawsonHanson(w []float64, r, m, n int, bnorm float64) error {
	c := n + 1
	norm := ws.norm[:n] // by position, permuted with the columns
	g := ws.g[:n]
	y := ws.y[:n]
	zz := ws.zz[:n]
	rej := ws.rej[:n]
	perm := ws.perm[:n]
	for j := range perm {
		perm[j] = j
	}
	clear(y)
	maxIter := ws.MaxIter
	if maxIter <= 0 {
		maxIter = 3 * n
	}
	gradTol := nnlsGradTol * eps * float64(m+c) * bnorm
	p := 0
	// fresh: g[p:] was computed from w in this iteration; stale: it must
	// be. Between the two, g is downdated and updated (see below).
	fresh, stale := false, true
outer:
	for {
		// Gradient of the zero set. Rows < p of the residual vanish because
		// y is the least-squares solution on the passive set.
		if p == r {
			return nil // no rows left: the residual is zero, so is the gradient
		}
		if stale {
			clear(g[p:])
			for i := p; i < r; i++ {
				if zi := w[i*c+n]; zi != 0 {
					axpy(g[p:], zi, w[i*c+p:i*c+n])
				}
			}
			fresh, stale = true, false
		}
		clear(rej)

		// Pick the entering column: the largest gradient relative to the
		// column norm, among columns that are numerically independent of
		// the passive set and would enter with a positive coefficient.
		var q int
		var alpha, beta, tau float64
		for {
			q = -1
			best := 0.0
			gk, nk, rk := g[p:n], norm[p:n], rej[p:n]
			nk, rk = nk[:len(gk)], rk[:len(gk)]
			for k, gv := range gk {
				nv := nk[k]
				if rk[k] || nv == 0 || !(gv > gradTol*nv) {
					continue
				}
				if r := gv / nv; r > best {
					best, q = r, p+k
				}
			}
			if q < 0 {
				if !fresh {
					stale = true // confirm with a computed gradient
					continue outer
				}
				return nil // KKT conditions hold
			}
			alpha = w[p*c+q]
			ss := 0.0
			v := ws.v[:r-p-1] // the column below row p, then the reflector
			for i := range v {
				t := w[(p+1+i)*c+q]
				v[i] = t
				ss += float64(t * t)
			}
			beta, tau = alpha, 0
			if ss != 0 {
				beta = -math.Copysign(math.Sqrt(float64(alpha*alpha)+ss), alpha)
				tau = (beta - alpha) / beta
			}
			if !(math.Abs(beta) > nnlsDepTol*eps*norm[q]) {
				rej[q] = true // numerically dependent on the passive set
				ws.rejections++
				continue
			}
			// The entering coefficient would be (Hz)_p / beta; compute (Hz)_p
			// exactly as reflectRows will.
			zp := w[p*c+n]
			if tau != 0 {
				scal := 1 / (alpha - beta)
				for i, t := range v {
					v[i] = float64(t * scal)
				}
				zp = reflectedHead(w, c, p, v, tau)
			}
			if !(zp/beta > 0) {
				rej[q] = true
				ws.rejections++
				continue
			}
			break
		}
		if ws.iters >= maxIter {
			return fmt.Errorf("solve: NNLS: no convergence after MaxIter = %d entering columns (n = %d): %w", maxIter, n, ErrIterationLimit)
		}
		ws.iters++

		// Bring the entering column to position p and reflect.
		if q != p {
			for i := 0; i < r; i++ {
				w[i*c+p], w[i*c+q] = w[i*c+q], w[i*c+p]
			}
			perm[p], perm[q] = perm[q], perm[p]
			norm[p], norm[q] = norm[q], norm[p]
			g[p], g[q] = g[q], g[p]
		}
		if tau != 0 {
			v := ws.v[:r-p-1] // already holds the reflector of this column
			lo := p + 1
			reflectRows(w[p*c+lo:p*c+c], v, tau, w[(p+1)*c+lo:], c, ws.s[lo:c])
			w[p*c+p] = beta
			for i := p + 1; i < r; i++ {
				w[i*c+p] = 0
			}
		}
		// The reflection kept every column's inner product with the
		// right-hand side over rows p..r-1, so the zero set's gradient only
		// loses row p's term. Downdating is O(n) instead of O(r n); a
		// computed gradient confirms the KKT conditions before returning.
		if zp := w[p*c+n]; zp != 0 {
			axpy(g[p+1:n], -zp, w[p*c+p+1:p*c+n])
		}
		fresh = false
		p++

		// Inner loop: move toward the passive-set least-squares solution,
		// dropping columns whose coefficient would turn non-positive.
		pin := p
		for {
			// Back substitution by columns: each solved coefficient is
			// taken out of the rows above at once (independent updates,
			// where the row-by-row sums are one chain of dependent
			// subtractions).
			for l := range p {
				zz[l] = w[l*c+n]
			}
			for l := p - 1; l >= 0; l-- {
				zl := zz[l] / w[l*c+l]
				zz[l] = zl
				for i := range l {
					zz[i] -= float64(w[i*c+l] * zl)
				}
			}
			feasible := true
			for _, v := range zz[:p] {
				if !(v > 0) {
					feasible = false
					break
				}
			}
			if feasible {
				for l, v := range zz[:p] {
					y[perm[l]] = v
				}
				if p < pin {
					ws.dropGradient(w, r, c, p, pin)
				}
				break
			}
			step, lim := 0.0, -1
			for l, v := range zz[:p] {
				if v > 0 {
					continue
				}
				yl := y[perm[l]]
				if t := yl / (yl - v); lim < 0 || t < step {
					step, lim = t, l
				}
			}
			for l, v := range zz[:p] {
				j := perm[l]
				y[j] += float64(step * (v - y[j]))
			}
			y[perm[lim]] = 0
			for l := p - 1; l >= 0; l-- {
				if j := perm[l]; !(y[j] > 0) {
					y[j] = 0
					ws.removePassive(w, c, p, l)
					ws.drops++
					p--
				}
			}
		}
	}
}

// dropGradient updates the gradient g[p:] after columns left the passive
// set, which shrank from pin to p columns: rows p..pin-1 (rotated by
// removePassive) joined the residual rows. The columns at positions >= pin
// (the zero set before, whose rows >= pin nothing touched) gain those
// rows' terms; the dropped columns at p..pin-1 get their gradient over
// rows p..r-1.
func (ws *NNLSWorkspace) dropGradient(w []float64, r, c, p, pin int) {
	n := c - 1
	g := ws.g[:n]
	clear(g[p:pin])
	for i := p; i < r; i++ {
		zi := w[i*c+n]
		if zi == 0 {
			continue
		}
		hi := n
		if i >= pin {
			hi = pin // rows >= pin are already in g[pin:]
		}
		axpy(g[p:hi], zi, w[i*c+p:i*c+hi])
	}
}

// reflectedHead returns row p, column n (the right-hand side) of w after the
// reflection [1; v], tau on rows p..c-1, computed in exactly the order that
// reflectRows uses.
func reflectedHead(w []float64, c, p int, v []float64, tau float64) float64 {
	n := c - 1
	s := w[p*c+n]
	r := 0
	for ; r+4 <= len(v); r += 4 {
		s += float64(v[r] * w[(p+1+r)*c+n])
		s += float64(v[r+1] * w[(p+2+r)*c+n])
		s += float64(v[r+2] * w[(p+3+r)*c+n])
		s += float64(v[r+3] * w[(p+4+r)*c+n])
	}
	for ; r < len(v); r++ {
		s += float64(v[r] * w[(p+1+r)*c+n])
	}
	return w[p*c+n] + float64(-tau*s)
}

// removePassive deletes position l from the p passive positions: the columns
// at l+1..p-1 shift left, the removed column goes to position p-1 (the first
// zero-set position once p is decremented), and Givens rotations restore the
// triangle.
func (ws *NNLSWorkspace) removePassive(w []float64, c, p, l int) {
	perm := ws.perm
	if l < p-1 {
		for i := 0; i < p; i++ { // rows >= p of passive columns are zero
			row := w[i*c : i*c+c]
			t := row[l]
			copy(row[l:p-1], row[l+1:p])
			row[p-1] = t
		}
		t := perm[l]
		copy(perm[l:p-1], perm[l+1:p])
		perm[p-1] = t
		nl := ws.norm[l]
		copy(ws.norm[l:p-1], ws.norm[l+1:p])
		ws.norm[p-1] = nl
	}
	for k := l; k < p-1; k++ {
		// Column k has a subdiagonal entry in row k+1.
		a0, a1 := w[k*c+k], w[(k+1)*c+k]
		if a1 == 0 {
			continue
		}
		r := math.Sqrt(float64(a0*a0) + float64(a1*a1))
		cs, sn := a0/r, a1/r
		r0 := w[k*c+k : k*c+c]
		r1 := w[(k+1)*c+k : (k+1)*c+c]
		for i, t0 := range r0 {
			t1 := r1[i]
			r0[i] = float64(cs*t0) + float64(sn*t1)
			r1[i] = float64(cs*t1) - float64(sn*t0)
		}
		r0[0], r1[0] = r, 0
	}
}
