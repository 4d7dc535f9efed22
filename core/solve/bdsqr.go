package solve

import "math"

// Bidiagonal SVD by implicit-shift QR (LAPACK's xBDSQR, after the Gonum
// port), rewritten for determinism: every product is rounded explicitly
// (float64(x*y)) so that no platform may fuse it into an FMA, the only
// elementary function is math.Sqrt (correctly rounded everywhere), and the
// rotations are applied to row-major matrices by plain loops with a fixed
// order of operations. The same bits result on amd64, arm64 and js/wasm.

const (
	// bdEps is LAPACK's relative machine precision (unit roundoff).
	bdEps = 0x1p-53
	// bdUnfl is the smallest positive normal float64.
	bdUnfl = 0x1p-1022
	// bdTol is xBDSQR's relative accuracy tol = tolmul*eps with tolmul =
	// max(10, min(100, eps^(-1/8))) = 2^(53/8).
	bdTol = 98.70149282610821 * bdEps
)

// bdMaxIter bounds the QR sweeps of bdsqr: at most bdMaxIter*n*n inner
// steps (xBDSQR's MAXITR), after which the SVD reports ErrNoConvergence.
// It is a variable only so that tests can provoke that error.
var bdMaxIter = 6

// bdsqr computes the SVD B = U_b diag(s) V_b^T of the n x n upper
// bidiagonal matrix B with diagonal d and superdiagonal e (length n-1).
// On return d holds the singular values in decreasing order and e is
// destroyed. The rotations are applied to two row-major matrices of n rows:
// lt (row stride ldl, wl columns) is replaced by U_b^T lt and rt (row stride
// ldr, wr columns) by V_b^T rt; with identities there, they receive U_b^T
// and V_b^T. work needs 4(n-1) entries. It reports false if the iteration
// limit was reached.
//
// The algorithm is Demmel and Kahan's: zero-shift QR sweeps while a shift
// would spoil relative accuracy, otherwise sweeps with the shift from the
// trailing (or leading) 2 x 2 block, chasing from the larger end; relative
// convergence tests with tol = 2^(53/8) * 2^-53.
func bdsqr(n int, d, e []float64, lt []float64, ldl, wl int, rt []float64, ldr, wr int, work []float64) bool {
	if n == 0 {
		return true
	}
	d = d[:n]
	if n > 1 {
		e = e[:n-1]
		if !bdIterate(n, d, e, lt, ldl, wl, rt, ldr, wr, work) {
			return false
		}
	}
	// Make the singular values positive.
	for i, v := range d {
		if v < 0 {
			d[i] = -v
			row := rt[i*ldr : i*ldr+wr]
			for j := range row {
				row[j] = -row[j]
			}
		}
	}
	// Sort decreasing (selection sort of the smallest to the end).
	for i := 0; i < n-1; i++ {
		isub := 0
		smin := d[0]
		for j := 1; j < n-i; j++ {
			if d[j] <= smin {
				isub, smin = j, d[j]
			}
		}
		last := n - i - 1
		if isub != last {
			d[isub], d[last] = d[last], smin
			swapRows(rt, ldr, wr, isub, last)
			swapRows(lt, ldl, wl, isub, last)
		}
	}
	return true
}

// swapRows exchanges rows i and j (w columns) of the row-major matrix a.
func swapRows(a []float64, ld, w, i, j int) {
	if w == 0 {
		return
	}
	x, y := a[i*ld:i*ld+w], a[j*ld:j*ld+w]
	for k := range x {
		x[k], y[k] = y[k], x[k]
	}
}

// bdIterate is the QR iteration of bdsqr for n >= 2.
func bdIterate(n int, d, e []float64, lt []float64, ldl, wl int, rt []float64, ldr, wr int, work []float64) bool {
	nm1 := n - 1
	w0 := work[0:nm1]
	w1 := work[nm1 : 2*nm1]
	w2 := work[2*nm1 : 3*nm1]
	w3 := work[3*nm1 : 4*nm1]
	tol := bdTol

	// Relative accuracy threshold from an estimate of the smallest
	// singular value.
	sminoa := math.Abs(d[0])
	if sminoa != 0 {
		mu := sminoa
		for i := 1; i < n; i++ {
			mu = float64(math.Abs(d[i]) * (mu / (mu + math.Abs(e[i-1]))))
			sminoa = min(sminoa, mu)
			if sminoa == 0 {
				break
			}
		}
	}
	sminoa /= math.Sqrt(float64(n))
	thresh := max(float64(tol*sminoa), float64(bdMaxIter*n*n)*bdUnfl)

	maxIt := bdMaxIter * n * n
	iter := 0
	oldl2, oldm := -1, -1
	idir := 0
	var smin float64
	m := n // d[m-1] is the last entry of the unconverged part
outer:
	for m > 1 {
		if iter > maxIt {
			return false
		}
		// Find the diagonal block to work on.
		smax := math.Abs(d[m-1])
		var l2 int
		split := false
		for l3 := 0; l3 < m-1; l3++ {
			l2 = m - l3 - 2
			abss := math.Abs(d[l2])
			abse := math.Abs(e[l2])
			if abse <= thresh {
				split = true
				break
			}
			smax = max(smax, abss, abse)
		}
		if split {
			e[l2] = 0
			if l2 == m-2 {
				m-- // bottom singular value converged
				continue
			}
			l2++
		} else {
			l2 = 0
		}
		// e[l2] .. e[m-2] are nonzero, e[l2-1] is zero.
		if l2 == m-2 {
			// 2 x 2 block.
			smn, smx, sinr, cosr, sinl, cosl := dlasv2(d[m-2], e[m-2], d[m-1])
			d[m-2], d[m-1], e[m-2] = smx, smn, 0
			rotPair(rt, ldr, wr, m-2, cosr, sinr)
			rotPair(lt, ldl, wl, m-2, cosl, sinl)
			m -= 2
			continue
		}
		// On a new block, chase from the larger end towards the smaller.
		if l2 > oldm-1 || m-1 < oldl2 {
			if math.Abs(d[l2]) >= math.Abs(d[m-1]) {
				idir = 1
			} else {
				idir = 2
			}
		}
		// Convergence tests.
		if idir == 1 {
			if math.Abs(e[m-2]) <= float64(tol*math.Abs(d[m-1])) {
				e[m-2] = 0
				continue
			}
			mu := math.Abs(d[l2])
			smin = mu
			for l3 := l2; l3 < m-1; l3++ {
				if math.Abs(e[l3]) <= float64(tol*mu) {
					e[l3] = 0
					continue outer
				}
				mu = float64(math.Abs(d[l3+1]) * (mu / (mu + math.Abs(e[l3]))))
				smin = min(smin, mu)
			}
		} else {
			if math.Abs(e[l2]) <= float64(tol*math.Abs(d[l2])) {
				e[l2] = 0
				continue
			}
			mu := math.Abs(d[m-1])
			smin = mu
			for l3 := m - 2; l3 >= l2; l3-- {
				if math.Abs(e[l3]) <= float64(tol*mu) {
					e[l3] = 0
					continue outer
				}
				mu = float64(math.Abs(d[l3]) * (mu / (mu + math.Abs(e[l3]))))
				smin = min(smin, mu)
			}
		}
		oldl2, oldm = l2, m

		// Shift; zero if it would ruin relative accuracy or is negligible.
		var shift float64
		if float64(float64(float64(n)*tol)*(smin/smax)) > max(bdEps, float64(0.01*tol)) {
			var sl2 float64
			if idir == 1 {
				sl2 = math.Abs(d[l2])
				shift, _ = dlas2(d[m-2], e[m-2], d[m-1])
			} else {
				sl2 = math.Abs(d[m-1])
				shift, _ = dlas2(d[l2], e[l2], d[l2+1])
			}
			if sl2 > 0 {
				if r := shift / sl2; float64(r*r) < bdEps {
					shift = 0
				}
			}
		}
		iter += m - l2 + 1
		k := m - l2 - 1 // rotations in this sweep

		switch {
		case shift == 0 && idir == 1:
			cs, oldcs := 1.0, 1.0
			var sn, r, oldsn float64
			for i := l2; i < m-1; i++ {
				cs, sn, r = dlartg(float64(d[i]*cs), e[i])
				if i > l2 {
					e[i-1] = float64(oldsn * r)
				}
				oldcs, oldsn, d[i] = dlartg(float64(oldcs*r), float64(d[i+1]*sn))
				w0[i-l2], w1[i-l2], w2[i-l2], w3[i-l2] = cs, sn, oldcs, oldsn
			}
			h := float64(d[m-1] * cs)
			d[m-1] = float64(h * oldcs)
			e[m-2] = float64(h * oldsn)
			rotSeqFwd(rt[l2*ldr:], ldr, wr, w0[:k], w1[:k])
			rotSeqFwd(lt[l2*ldl:], ldl, wl, w2[:k], w3[:k])
			if math.Abs(e[m-2]) < thresh {
				e[m-2] = 0
			}
		case shift == 0:
			cs, oldcs := 1.0, 1.0
			var sn, r, oldsn float64
			for i := m - 1; i >= l2+1; i-- {
				cs, sn, r = dlartg(float64(d[i]*cs), e[i-1])
				if i < m-1 {
					e[i] = float64(oldsn * r)
				}
				oldcs, oldsn, d[i] = dlartg(float64(oldcs*r), float64(d[i-1]*sn))
				w0[i-l2-1], w1[i-l2-1], w2[i-l2-1], w3[i-l2-1] = cs, -sn, oldcs, -oldsn
			}
			h := float64(d[l2] * cs)
			d[l2] = float64(h * oldcs)
			e[l2] = float64(h * oldsn)
			rotSeqBwd(rt[l2*ldr:], ldr, wr, w2[:k], w3[:k])
			rotSeqBwd(lt[l2*ldl:], ldl, wl, w0[:k], w1[:k])
			if math.Abs(e[l2]) <= thresh {
				e[l2] = 0
			}
		case idir == 1:
			// Chase the bulge from top to bottom.
			f := float64((math.Abs(d[l2]) - shift) * (math.Copysign(1, d[l2]) + shift/d[l2]))
			g := e[l2]
			for i := l2; i < m-1; i++ {
				cosr, sinr, r := dlartg(f, g)
				if i > l2 {
					e[i-1] = r
				}
				f = float64(cosr*d[i]) + float64(sinr*e[i])
				e[i] = float64(cosr*e[i]) - float64(sinr*d[i])
				g = float64(sinr * d[i+1])
				d[i+1] = float64(cosr * d[i+1])
				cosl, sinl, r := dlartg(f, g)
				d[i] = r
				f = float64(cosl*e[i]) + float64(sinl*d[i+1])
				d[i+1] = float64(cosl*d[i+1]) - float64(sinl*e[i])
				if i < m-2 {
					g = float64(sinl * e[i+1])
					e[i+1] = float64(cosl * e[i+1])
				}
				w0[i-l2], w1[i-l2], w2[i-l2], w3[i-l2] = cosr, sinr, cosl, sinl
			}
			e[m-2] = f
			rotSeqFwd(rt[l2*ldr:], ldr, wr, w0[:k], w1[:k])
			rotSeqFwd(lt[l2*ldl:], ldl, wl, w2[:k], w3[:k])
			if math.Abs(e[m-2]) <= thresh {
				e[m-2] = 0
			}
		default:
			// Chase the bulge from bottom to top.
			f := float64((math.Abs(d[m-1]) - shift) * (math.Copysign(1, d[m-1]) + shift/d[m-1]))
			g := e[m-2]
			for i := m - 1; i > l2; i-- {
				cosr, sinr, r := dlartg(f, g)
				if i < m-1 {
					e[i] = r
				}
				f = float64(cosr*d[i]) + float64(sinr*e[i-1])
				e[i-1] = float64(cosr*e[i-1]) - float64(sinr*d[i])
				g = float64(sinr * d[i-1])
				d[i-1] = float64(cosr * d[i-1])
				cosl, sinl, r := dlartg(f, g)
				d[i] = r
				f = float64(cosl*e[i-1]) + float64(sinl*d[i-1])
				d[i-1] = float64(cosl*d[i-1]) - float64(sinl*e[i-1])
				if i > l2+1 {
					g = float64(sinl * e[i-2])
					e[i-2] = float64(cosl * e[i-2])
				}
				w0[i-l2-1], w1[i-l2-1], w2[i-l2-1], w3[i-l2-1] = cosr, -sinr, cosl, -sinl
			}
			e[l2] = f
			if math.Abs(e[l2]) <= thresh {
				e[l2] = 0
			}
			rotSeqBwd(rt[l2*ldr:], ldr, wr, w2[:k], w3[:k])
			rotSeqBwd(lt[l2*ldl:], ldl, wl, w0[:k], w1[:k])
		}
	}
	return true
}

// dlartg returns a plane rotation with c x + s y = r, -s x + c y = 0 for
// the vector (f, g) (LAPACK 3.10's xLARTG, Anderson's safe scaling, with
// one division: c = |f| / d and s = g / r are formed with the reciprocal
// of d = sqrt(f^2 + g^2)): c >= 0 and r has the sign of f.
func dlartg(f, g float64) (c, s, r float64) {
	const (
		safmin = 0x1p-1022
		safmax = 0x1p1022
		rtmin  = 0x1p-511              // sqrt(safmin)
		rtmax  = 0x1.6a09e667f3bcdp510 // sqrt(safmax/2)
	)
	if g == 0 {
		return 1, 0, f
	}
	g1 := math.Abs(g)
	if f == 0 {
		return 0, math.Copysign(1, g), g1
	}
	f1 := math.Abs(f)
	if rtmin < f1 && f1 < rtmax && rtmin < g1 && g1 < rtmax {
		d := math.Sqrt(float64(f*f) + float64(g*g))
		inv := 1 / d
		c = float64(f1 * inv)
		s = float64(g * math.Copysign(inv, f))
		return c, s, math.Copysign(d, f)
	}
	u := min(max(safmin, f1, g1), safmax)
	fs, gs := f/u, g/u
	d := math.Sqrt(float64(fs*fs) + float64(gs*gs))
	inv := 1 / d
	c = float64(math.Abs(fs) * inv)
	s = float64(gs * math.Copysign(inv, f))
	return c, s, float64(math.Copysign(d, f) * u)
}

// dlas2 returns the singular values of the 2 x 2 upper triangular matrix
// [f g; 0 h] (LAPACK's xLAS2).
func dlas2(f, g, h float64) (ssmin, ssmax float64) {
	fa, ga, ha := math.Abs(f), math.Abs(g), math.Abs(h)
	fhmin, fhmax := min(fa, ha), max(fa, ha)
	if fhmin == 0 {
		if fhmax == 0 {
			return 0, ga
		}
		v := min(fhmax, ga) / max(fhmax, ga)
		return 0, float64(max(fhmax, ga) * math.Sqrt(1+float64(v*v)))
	}
	if ga < fhmax {
		as := 1 + fhmin/fhmax
		at := (fhmax - fhmin) / fhmax
		au := ga / fhmax
		au = float64(au * au)
		c := 2 / (math.Sqrt(float64(as*as)+au) + math.Sqrt(float64(at*at)+au))
		return float64(fhmin * c), fhmax / c
	}
	au := fhmax / ga
	if au == 0 {
		return float64(fhmin*fhmax) / ga, ga
	}
	as := 1 + fhmin/fhmax
	at := (fhmax - fhmin) / fhmax
	x, y := float64(as*au), float64(at*au)
	c := 1 / (math.Sqrt(1+float64(x*x)) + math.Sqrt(1+float64(y*y)))
	return 2 * float64(float64(fhmin*c)*au), ga / (c + c)
}

// dlasv2 computes the SVD of the 2 x 2 upper triangular matrix [f g; 0 h]
// (LAPACK's xLASV2): [csl snl; -snl csl] [f g; 0 h] [csr -snr; snr csr] =
// diag(ssmax, ssmin), |ssmax| >= |ssmin|.
func dlasv2(f, g, h float64) (ssmin, ssmax, snr, csr, snl, csl float64) {
	ft, fa := f, math.Abs(f)
	ht, ha := h, math.Abs(h)
	pmax := 1 // largest entry: 1 f, 2 g, 3 h
	swap := ha > fa
	if swap {
		pmax = 3
		ft, ht = ht, ft
		fa, ha = ha, fa
	}
	gt, ga := g, math.Abs(g)
	var clt, crt, slt, srt float64
	if ga == 0 {
		ssmin, ssmax = ha, fa
		clt, crt, slt, srt = 1, 1, 0, 0
	} else {
		gasmall := true
		if ga > fa {
			pmax = 2
			if fa/ga < bdEps {
				gasmall = false
				ssmax = ga
				if ha > 1 {
					ssmin = fa / (ga / ha)
				} else {
					ssmin = float64((fa / ga) * ha)
				}
				clt = 1
				slt = ht / gt
				srt = 1
				crt = ft / gt
			}
		}
		if gasmall {
			dd := fa - ha
			l := dd / fa
			if dd == fa {
				l = 1
			}
			m := gt / ft
			t := 2 - l
			mm := float64(m * m)
			s := math.Sqrt(float64(t*t) + mm)
			var r float64
			if l == 0 {
				r = math.Abs(m)
			} else {
				r = math.Sqrt(float64(l*l) + mm)
			}
			a := float64(0.5 * (s + r))
			ssmin = ha / a
			ssmax = float64(fa * a)
			if mm == 0 {
				if l == 0 {
					t = float64(math.Copysign(2, ft) * math.Copysign(1, gt))
				} else {
					t = gt/math.Copysign(dd, ft) + m/t
				}
			} else {
				t = float64((m/(s+t) + m/(r+l)) * (1 + a))
			}
			l = math.Sqrt(float64(t*t) + 4)
			crt = 2 / l
			srt = t / l
			clt = (crt + float64(srt*m)) / a
			slt = float64((ht/ft)*srt) / a
		}
	}
	if swap {
		csl, snl, csr, snr = srt, crt, slt, clt
	} else {
		csl, snl, csr, snr = clt, slt, crt, srt
	}
	var tsign float64
	switch pmax {
	case 1:
		tsign = math.Copysign(1, csr) * math.Copysign(1, csl) * math.Copysign(1, f)
	case 2:
		tsign = math.Copysign(1, snr) * math.Copysign(1, csl) * math.Copysign(1, g)
	default:
		tsign = math.Copysign(1, snr) * math.Copysign(1, snl) * math.Copysign(1, h)
	}
	ssmax = math.Copysign(ssmax, tsign)
	ssmin = math.Copysign(ssmin, tsign*math.Copysign(1, f)*math.Copysign(1, h))
	return ssmin, ssmax, snr, csr, snl, csl
}

// rotPair applies the rotation x' = c x + s y, y' = c y - s x to rows
// x = j and y = j+1 (w columns) of the row-major matrix a.
func rotPair(a []float64, ld, w, j int, c, s float64) {
	if w == 0 {
		return
	}
	x, y := a[j*ld:j*ld+w], a[(j+1)*ld:(j+1)*ld+w]
	for i, xi := range x {
		yi := y[i]
		x[i] = float64(c*xi) + float64(s*yi)
		y[i] = float64(c*yi) - float64(s*xi)
	}
}

// rotSeqFwd applies the rotations j = 0, 1, ..., len(c)-1 in this order to
// rows j and j+1 of the row-major matrix a (w columns): row j+1 becomes
// c_j row(j+1) - s_j row(j) and row j becomes s_j row(j+1) + c_j row(j)
// (LAPACK's xLASR, side L, pivot V, direct F). Three consecutive rotations
// are applied in one pass over the columns, with the row they share kept
// in a register; every element gets the same operations as in the
// one-rotation-at-a-time order.
func rotSeqFwd(a []float64, ld, w int, c, s []float64) {
	k := len(c)
	if w == 0 {
		return
	}
	s = s[:k]
	j := 0
	for ; j+3 <= k; j += 3 {
		c0, s0, c1, s1, c2, s2 := c[j], s[j], c[j+1], s[j+1], c[j+2], s[j+2]
		r0 := a[j*ld : j*ld+w]
		r1 := a[(j+1)*ld : (j+1)*ld+w]
		r2 := a[(j+2)*ld : (j+2)*ld+w]
		r3 := a[(j+3)*ld : (j+3)*ld+w]
		r1, r2, r3 = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)]
		for i, t := range r0 {
			y := r1[i]
			r0[i] = float64(s0*y) + float64(c0*t)
			t = float64(c0*y) - float64(s0*t)
			y = r2[i]
			r1[i] = float64(s1*y) + float64(c1*t)
			t = float64(c1*y) - float64(s1*t)
			y = r3[i]
			r2[i] = float64(s2*y) + float64(c2*t)
			r3[i] = float64(c2*y) - float64(s2*t)
		}
	}
	for ; j < k; j++ {
		cj, sj := c[j], s[j]
		x := a[j*ld : j*ld+w]
		y := a[(j+1)*ld : (j+1)*ld+w]
		y = y[:len(x)]
		for i, t := range x {
			yi := y[i]
			x[i] = float64(sj*yi) + float64(cj*t)
			y[i] = float64(cj*yi) - float64(sj*t)
		}
	}
}

// rotSeqBwd applies the rotations j = len(c)-1, ..., 1, 0 in this order to
// rows j and j+1 of the row-major matrix a (w columns), with the same
// formula as rotSeqFwd (LAPACK's xLASR, side L, pivot V, direct B), three
// rotations per pass.
func rotSeqBwd(a []float64, ld, w int, c, s []float64) {
	k := len(c)
	if w == 0 {
		return
	}
	s = s[:k]
	j := k - 1
	for ; j >= 2; j -= 3 {
		c0, s0, c1, s1, c2, s2 := c[j], s[j], c[j-1], s[j-1], c[j-2], s[j-2]
		r3 := a[(j+1)*ld : (j+1)*ld+w]
		r2 := a[j*ld : j*ld+w]
		r1 := a[(j-1)*ld : (j-1)*ld+w]
		r0 := a[(j-2)*ld : (j-2)*ld+w]
		r2, r1, r0 = r2[:len(r3)], r1[:len(r3)], r0[:len(r3)]
		for i, t := range r3 {
			x := r2[i]
			r3[i] = float64(c0*t) - float64(s0*x)
			t = float64(s0*t) + float64(c0*x)
			x = r1[i]
			r2[i] = float64(c1*t) - float64(s1*x)
			t = float64(s1*t) + float64(c1*x)
			x = r0[i]
			r1[i] = float64(c2*t) - float64(s2*x)
			r0[i] = float64(s2*t) + float64(c2*x)
		}
	}
	for ; j >= 0; j-- {
		cj, sj := c[j], s[j]
		x := a[j*ld : j*ld+w]
		y := a[(j+1)*ld : (j+1)*ld+w]
		y = y[:len(x)]
		for i, xi := range x {
			t := y[i]
			y[i] = float64(cj*t) - float64(sj*xi)
			x[i] = float64(sj*t) + float64(cj*xi)
		}
	}
}
