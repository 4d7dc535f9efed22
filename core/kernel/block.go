package kernel

import "unsafe"

// This file holds the blocked inner kernels: the portable Go versions, which
// define the bits, and the dispatch to the archsimd (simd.go) and amd64 SSE
// versions, which must reproduce them exactly (see the package
// documentation).

// maxPackD is the largest head dimension of the SSE logits kernel, which packs
// four query rows (4*maxPackD floats) on the stack; Logits with a larger d
// runs the portable kernel.
const maxPackD = 256

// zeroRow pads the packed query rows of logitsSSE past the last row.
var zeroRow [maxPackD]float32

// logitsGo is the portable Logits: blocks of 2 query rows by 4 keys, each of
// the 8 dot products summed in index order in its own accumulator.
func logitsGo(dst, q []float32, m int, k []float32, n, d int, scale float32) {
	i := 0
	for ; i+2 <= m; i += 2 {
		q0 := q[i*d : i*d+d]
		q1 := q[(i+1)*d : (i+1)*d+d]
		q1 = q1[:len(q0)]
		r0 := dst[i*n : i*n+n]
		r1 := dst[(i+1)*n : (i+1)*n+n]
		r1 = r1[:len(r0)]
		j := 0
		for ; j+4 <= len(r0); j += 4 {
			k0 := k[j*d : j*d+d]
			k1 := k[(j+1)*d : (j+1)*d+d]
			k2 := k[(j+2)*d : (j+2)*d+d]
			k3 := k[(j+3)*d : (j+3)*d+d]
			k0, k1, k2, k3 = k0[:len(q0)], k1[:len(q0)], k2[:len(q0)], k3[:len(q0)]
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			c := 0
			if len(q0) >= 4 {
				p0, p1 := unsafe.Pointer(&q0[0]), unsafe.Pointer(&q1[0])
				pk0, pk1, pk2, pk3 := unsafe.Pointer(&k0[0]), unsafe.Pointer(&k1[0]), unsafe.Pointer(&k2[0]), unsafe.Pointer(&k3[0])
				for ; c+4 <= len(q0); c += 4 {
					a, b := at4(p0, c), at4(p1, c)
					u0, u1, u2, u3 := at4(pk0, c), at4(pk1, c), at4(pk2, c), at4(pk3, c)
					var x, y float32
					x, y = a[0], b[0]
					s00 += float32(x * u0[0])
					s01 += float32(x * u1[0])
					s02 += float32(x * u2[0])
					s03 += float32(x * u3[0])
					s10 += float32(y * u0[0])
					s11 += float32(y * u1[0])
					s12 += float32(y * u2[0])
					s13 += float32(y * u3[0])
					x, y = a[1], b[1]
					s00 += float32(x * u0[1])
					s01 += float32(x * u1[1])
					s02 += float32(x * u2[1])
					s03 += float32(x * u3[1])
					s10 += float32(y * u0[1])
					s11 += float32(y * u1[1])
					s12 += float32(y * u2[1])
					s13 += float32(y * u3[1])
					x, y = a[2], b[2]
					s00 += float32(x * u0[2])
					s01 += float32(x * u1[2])
					s02 += float32(x * u2[2])
					s03 += float32(x * u3[2])
					s10 += float32(y * u0[2])
					s11 += float32(y * u1[2])
					s12 += float32(y * u2[2])
					s13 += float32(y * u3[2])
					x, y = a[3], b[3]
					s00 += float32(x * u0[3])
					s01 += float32(x * u1[3])
					s02 += float32(x * u2[3])
					s03 += float32(x * u3[3])
					s10 += float32(y * u0[3])
					s11 += float32(y * u1[3])
					s12 += float32(y * u2[3])
					s13 += float32(y * u3[3])
				}
			}
			for ; c < len(q0); c++ {
				x, y := q0[c], q1[c]
				s00 += float32(x * k0[c])
				s01 += float32(x * k1[c])
				s02 += float32(x * k2[c])
				s03 += float32(x * k3[c])
				s10 += float32(y * k0[c])
				s11 += float32(y * k1[c])
				s12 += float32(y * k2[c])
				s13 += float32(y * k3[c])
			}
			o := r0[j : j+4 : j+4]
			o[0], o[1], o[2], o[3] = scale*s00, scale*s01, scale*s02, scale*s03
			o = r1[j : j+4 : j+4]
			o[0], o[1], o[2], o[3] = scale*s10, scale*s11, scale*s12, scale*s13
		}
		for ; j < len(r0); j++ {
			kj := k[j*d : j*d+d]
			r0[j] = scale * Dot(q0, kj)
			r1[j] = scale * Dot(q1, kj)
		}
	}
	if i < m {
		logitsRowGo(dst[i*n:i*n+n], q[i*d:i*d+d], k, d, scale)
	}
}

// at4 is the four float32s from element i of the array whose element 0 p
// points to; the caller has checked that i+4 is within its length. The Go
// loops step through such pointers four elements at a time: without
// vector kernels (js/wasm, other architectures) that drops the bounds
// checks and index arithmetic of each element, and each element still gets
// the same rounded operations in the same order.
func at4(p unsafe.Pointer, i int) *[4]float32 { return (*[4]float32)(unsafe.Add(p, i*4)) }

// logitsRowGo sets row[j] = scale*Dot(qi, k[j]) for one query row, four keys
// at a time.
func logitsRowGo(row, qi, k []float32, d int, scale float32) {
	j := 0
	for ; j+4 <= len(row); j += 4 {
		k0 := k[j*d : j*d+d]
		k1 := k[(j+1)*d : (j+1)*d+d]
		k2 := k[(j+2)*d : (j+2)*d+d]
		k3 := k[(j+3)*d : (j+3)*d+d]
		k0, k1, k2, k3 = k0[:len(qi)], k1[:len(qi)], k2[:len(qi)], k3[:len(qi)]
		var s0, s1, s2, s3 float32
		for c, x := range qi {
			s0 += float32(x * k0[c])
			s1 += float32(x * k1[c])
			s2 += float32(x * k2[c])
			s3 += float32(x * k3[c])
		}
		o := row[j : j+4 : j+4]
		o[0], o[1], o[2], o[3] = scale*s0, scale*s1, scale*s2, scale*s3
	}
	for ; j < len(row); j++ {
		row[j] = scale * Dot(qi, k[j*d:j*d+d])
	}
}

// logitsSSE is Logits on the SSE kernel: the query rows are packed four at a
// time, transposed (qt[4c+r] = q[i+r, c], missing rows zero), so that one
// vector lane accumulates one query row's dot product in index order; keys
// past the last multiple of 4 use Dot. It needs 0 < d <= maxPackD, n >= 4.
func logitsSSE(dst, q []float32, m int, k []float32, n, d int, scale float32) {
	var pack [4 * maxPackD]float32
	qt := pack[:4*d]
	n4 := n &^ 3
	for i := 0; i < m; i += 4 {
		rows := min(4, m-i)
		var qr [4][]float32
		for r := range qr {
			if r < rows {
				qr[r] = q[(i+r)*d : (i+r)*d+d]
			} else {
				qr[r] = zeroRow[:d]
			}
		}
		q0, q1, q2, q3 := qr[0], qr[1][:len(qr[0])], qr[2][:len(qr[0])], qr[3][:len(qr[0])]
		for c, x := range q0 {
			t := qt[4*c : 4*c+4 : 4*c+4]
			t[0], t[1], t[2], t[3] = x, q1[c], q2[c], q3[c]
		}
		out := dst[i*n:]
		// The kernel writes rows*n4 floats from &out[0] (row stride n) and
		// reads 4d floats from qt and n4*d from k.
		_ = out[(rows-1)*n+n-1]
		_ = k[n4*d-1]
		logitsQt4(&out[0], n, rows, &qt[0], &k[0], n4/4, d, scale)
		for j := n4; j < n; j++ {
			kj := k[j*d : j*d+d]
			for r := 0; r < rows; r++ {
				out[r*n+j] = scale * Dot(q[(i+r)*d:(i+r)*d+d], kj)
			}
		}
	}
}

// axpy adds sum_t coef[t]*b[j_t*ldb : j_t*ldb+len(o)] to o, where j_t =
// idx[t] (or t when idx is nil): each o[c] gets its terms in the order of t.
func axpy(o, coef []float32, idx []int32, b []float32, ldb int) {
	if len(o) == 0 || len(coef) == 0 {
		return
	}
	if idx != nil {
		idx = idx[:len(coef)]
	}
	c4 := 0
	switch {
	case vecLanes > 0 && len(o) >= 4:
		checkRows(len(coef), idx, b, ldb, len(o)&^3)
		if vecLanes == 8 || wideAxpy {
			c4 = axpyT8(o, coef, idx, b, ldb)
		} else {
			c4 = axpyT4(o, coef, idx, b, ldb)
		}
	case useAsm:
		c4 = axpySSE(o, coef, idx, b, ldb)
	}
	if c4 < len(o) {
		axpyGo(o[c4:], coef, idx, b[c4:], ldb)
	}
}

// axpy2 is axpy for two output rows with their own coefficients (same length)
// and the same rows of b.
func axpy2(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) {
	if vecLanes > 0 {
		if len(o0) == 0 || len(c0) == 0 {
			return
		}
		o1, c1 = o1[:len(o0)], c1[:len(c0)]
		if idx != nil {
			idx = idx[:len(c0)]
		}
		c := 0
		if len(o0) >= 4 {
			checkRows(len(c0), idx, b, ldb, len(o0)&^3)
			if vecLanes == 8 || wideAxpy {
				c = axpy2T8(o0, o1, c0, c1, idx, b, ldb)
			} else {
				c = axpy2T4(o0, o1, c0, c1, idx, b, ldb)
			}
		}
		if c < len(o0) {
			axpyGo(o0[c:], c0, idx, b[c:], ldb)
			axpyGo(o1[c:], c1, idx, b[c:], ldb)
		}
		return
	}
	if useAsm {
		axpy(o0, c0, idx, b, ldb)
		axpy(o1, c1, idx, b, ldb)
		return
	}
	if len(o0) == 0 || len(c0) == 0 {
		return
	}
	if idx != nil {
		idx = idx[:len(c0)]
	}
	axpy2Go(o0, o1, c0, c1, idx, b, ldb)
}

// axpySSE runs the SSE kernel on the first len(o)&^3 columns of o and returns
// that count; len(idx) == len(coef) > 0 unless idx is nil.
func axpySSE(o, coef []float32, idx []int32, b []float32, ldb int) int {
	c4 := len(o) &^ 3
	if c4 == 0 {
		return 0
	}
	checkRows(len(coef), idx, b, ldb, c4)
	var ip *int32
	if idx != nil {
		ip = &idx[0]
	}
	axpyRows(&o[0], c4, &coef[0], len(coef), ip, &b[0], ldb)
	return c4
}

// checkRows panics unless b[j*ldb : j*ldb+cols] is in bounds for every row
// j = idx[t] (or t < nt when idx is nil; nt > 0): the vector kernels read
// those rows through pointers, with no bounds checks of their own.
func checkRows(nt int, idx []int32, b []float32, ldb, cols int) {
	last := nt - 1
	if idx != nil {
		last = 0
		for _, j := range idx {
			if j < 0 {
				panic("kernel: negative key index")
			}
			last = max(last, int(j))
		}
	}
	if ldb < 0 {
		panic("kernel: negative row stride")
	}
	_ = b[last*ldb+cols-1]
}

// axpyGo is the portable axpy: eight, then four, then one output column at a
// time kept in registers over all t.
func axpyGo(o, coef []float32, idx []int32, b []float32, ldb int) {
	if idx != nil {
		idx = idx[:len(coef)]
	}
	c := 0
	for ; c+8 <= len(o); c += 8 {
		oc := o[c : c+8 : c+8]
		s0, s1, s2, s3, s4, s5, s6, s7 := oc[0], oc[1], oc[2], oc[3], oc[4], oc[5], oc[6], oc[7]
		for t, x := range coef {
			j := t
			if idx != nil {
				j = int(idx[t])
			}
			bj := b[j*ldb+c : j*ldb+c+8 : j*ldb+c+8]
			s0 += float32(x * bj[0])
			s1 += float32(x * bj[1])
			s2 += float32(x * bj[2])
			s3 += float32(x * bj[3])
			s4 += float32(x * bj[4])
			s5 += float32(x * bj[5])
			s6 += float32(x * bj[6])
			s7 += float32(x * bj[7])
		}
		oc[0], oc[1], oc[2], oc[3], oc[4], oc[5], oc[6], oc[7] = s0, s1, s2, s3, s4, s5, s6, s7
	}
	for ; c+4 <= len(o); c += 4 {
		oc := o[c : c+4 : c+4]
		s0, s1, s2, s3 := oc[0], oc[1], oc[2], oc[3]
		for t, x := range coef {
			j := t
			if idx != nil {
				j = int(idx[t])
			}
			bj := b[j*ldb+c : j*ldb+c+4 : j*ldb+c+4]
			s0 += float32(x * bj[0])
			s1 += float32(x * bj[1])
			s2 += float32(x * bj[2])
			s3 += float32(x * bj[3])
		}
		oc[0], oc[1], oc[2], oc[3] = s0, s1, s2, s3
	}
	for ; c < len(o); c++ {
		s := o[c]
		for t, x := range coef {
			j := t
			if idx != nil {
				j = int(idx[t])
			}
			s += float32(x * b[j*ldb+c])
		}
		o[c] = s
	}
}

// axpy2Go is the portable axpy2: two rows by four columns in registers over
// all t, then the last columns one at a time.
func axpy2Go(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) {
	o1 = o1[:len(o0)]
	c1 = c1[:len(c0)]
	if idx != nil {
		idx = idx[:len(c0)]
	}
	c := 0
	if len(o0) >= 4 && len(c0) > 0 {
		// The rows read below, checked once: then each row's four
		// columns are read through a pointer, with no bounds check.
		lo, hi := 0, len(c0)-1
		if idx != nil {
			lo, hi = int(idx[0]), int(idx[0])
			for _, j := range idx {
				lo, hi = min(lo, int(j)), max(hi, int(j))
			}
		}
		if lo < 0 || ldb < 0 {
			panic("kernel: axpy2: row index or stride out of range")
		}
		_ = b[hi*ldb+len(o0)-1]
		pb := unsafe.Pointer(&b[0])
		for ; c+4 <= len(o0); c += 4 {
			u := o0[c : c+4 : c+4]
			w := o1[c : c+4 : c+4]
			s0, s1, s2, s3 := u[0], u[1], u[2], u[3]
			t0, t1, t2, t3 := w[0], w[1], w[2], w[3]
			if idx == nil {
				// Contiguous rows of b: no index load, no branch.
				for t, x := range c0 {
					y := c1[t]
					bj := at4(pb, t*ldb+c)
					s0 += float32(x * bj[0])
					s1 += float32(x * bj[1])
					s2 += float32(x * bj[2])
					s3 += float32(x * bj[3])
					t0 += float32(y * bj[0])
					t1 += float32(y * bj[1])
					t2 += float32(y * bj[2])
					t3 += float32(y * bj[3])
				}
			} else {
				for t, x := range c0 {
					y := c1[t]
					bj := at4(pb, int(idx[t])*ldb+c)
					s0 += float32(x * bj[0])
					s1 += float32(x * bj[1])
					s2 += float32(x * bj[2])
					s3 += float32(x * bj[3])
					t0 += float32(y * bj[0])
					t1 += float32(y * bj[1])
					t2 += float32(y * bj[2])
					t3 += float32(y * bj[3])
				}
			}
			u[0], u[1], u[2], u[3] = s0, s1, s2, s3
			w[0], w[1], w[2], w[3] = t0, t1, t2, t3
		}
	}
	if c < len(o0) {
		axpyGo(o0[c:], c0, idx, b[c:], ldb)
		axpyGo(o1[c:], c1, idx, b[c:], ldb)
	}
}

// logitsTile is the number of floats of the packed keys of logitsVec (a
// stack buffer, 16 KiB: it stays in the L1 cache while every query row
// passes over it).
const logitsTile = 4096

// logitsVec is Logits on the archsimd kernels. The keys are taken in tiles of
// at most logitsTile floats, packed in groups of 8 (with 8 lanes) or 4, each
// group transposed (kt[w*c+l] = k[j+l, c] for width w), so that one lane
// accumulates the dot product of a query row and one key in index order and a
// row's logits are stored as one vector; the query rows pass over a tile 4
// (with 8 lanes 6) at a time. With at most 4 rows (8 with 8 lanes), as
// Partial.AddKeys asks, the rows are packed instead and a lane holds one row's
// dot product with a key (logitsQ4, logitsQ8). Keys past the last multiple of
// 4 are one group of 4 padded with zero keys, or with at most 4 rows use Dot.
// It needs 0 < d <= maxPackD, n >= 4.
func logitsVec(dst, q []float32, m int, k []float32, n, d int, scale float32) {
	var pack [logitsTile]float32
	n4 := n &^ 3
	if m <= 4 || (vecLanes == 8 && m <= 8) {
		// Too few rows to pay for packing the keys: pack the rows, 4 or
		// (with 8 lanes and more than 4 rows) 8.
		w := 4
		if m > 4 {
			w = 8
		}
		qt := pack[:w*d]
		for r := 0; r < w; r++ {
			if r >= m {
				for c := 0; c < d; c++ {
					qt[w*c+r] = 0
				}
				continue
			}
			for c, x := range q[r*d : r*d+d] {
				qt[w*c+r] = x
			}
		}
		if w == 8 {
			logitsQ8(dst, n, m, qt, k, n4, d, scale)
		} else {
			logitsQ4(dst, n, m, qt, k, n4, d, scale)
		}
		n4 = 0 // done; the keys past n4 follow
	}
	// The query rows pass over a tile 6 at a time with 8 lanes: two of
	// logitsT16's blocks of 3 rows by 16 keys, or one of logitsZ16's with
	// AVX-512.
	step := 4
	if vecLanes == 8 {
		step = 6
	}
	kc := max(8, (logitsTile/d)&^7)
	for j0 := 0; j0 < n4; j0 += kc {
		nk := min(kc, n4-j0)
		for g := 0; g < nk; g += groupWidth(nk - g) {
			w := groupWidth(nk - g)
			kt := pack[g*d : (g+w)*d]
			if packVec(kt, w, k[(j0+g)*d:(j0+g+w)*d], w, d) {
				continue
			}
			for l := 0; l < w; l++ {
				kl := k[(j0+g+l)*d : (j0+g+l)*d+d]
				for c, x := range kl {
					kt[w*c+l] = x
				}
			}
		}
		for i0 := 0; i0 < m; i0 += step {
			rows := min(step, m-i0)
			qi := q[i0*d : (i0+rows)*d]
			for g := 0; g < nk; g += groupWidth(nk - g) {
				w := groupWidth(nk - g)
				out := dst[i0*n+j0+g:]
				if vecLanes == 8 && g+16 <= nk {
					// Two groups of 8 side by side (groupWidth is 8 for both).
					if wide16 {
						logitsZ16(out, n, qi, rows, pack[g*d:(g+16)*d], d, scale)
					} else {
						logitsT16(out, n, qi, rows, pack[g*d:(g+16)*d], d, scale)
					}
					g += 8
				} else if w == 8 {
					logitsT8(out, n, qi, rows, pack[g*d:(g+w)*d], d, scale)
				} else {
					logitsT4(out, n, qi, rows, pack[g*d:(g+w)*d], d, scale)
				}
			}
		}
	}
	j4 := n &^ 3
	if j4 == n {
		return
	}
	if m > 4 {
		// The last 1 to 3 keys as one group of 4 whose other lanes are
		// zero keys, their logits dropped: each lane is the same dot
		// product in index order that Dot sums.
		kt := pack[:4*d]
		clear(kt)
		for l := 0; l < n-j4; l++ {
			for c, x := range k[(j4+l)*d : (j4+l)*d+d] {
				kt[4*c+l] = x
			}
		}
		var out [16]float32
		for i0 := 0; i0 < m; i0 += 4 {
			rows := min(4, m-i0)
			logitsT4(out[:], 4, q[i0*d:(i0+rows)*d], rows, kt, d, scale)
			for i := 0; i < rows; i++ {
				copy(dst[(i0+i)*n+j4:(i0+i)*n+n], out[4*i:4*i+n-j4])
			}
		}
		return
	}
	for j := j4; j < n; j++ {
		kj := k[j*d : j*d+d]
		for i := 0; i < m; i++ {
			dst[i*n+j] = scale * Dot(q[i*d:i*d+d], kj)
		}
	}
}

// groupWidth is the number of keys logitsVec packs into one group when left
// keys remain in its tile (a multiple of 4): 8 with 8-lane kernels, else 4.
func groupWidth(left int) int {
	if (vecLanes == 8 || wideKeys && vecLanes == 4) && left >= 8 {
		return 8
	}
	return 4
}
