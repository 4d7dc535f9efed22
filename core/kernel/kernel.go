// Package kernel holds the float32 kernels of HAE-OLS (HAE-OLS.md §1): logits,
// row softmax, salience, key and row entropy, bin mass and weighted values,
// and attention over a (compressed) cache. All matrices are contiguous
// row-major float32 slices; no kernel allocates.
//
// # Determinism
//
// Every kernel has a fixed order of float32 operations, independent of the
// platform, of goroutines and of the code path taken, so the same input gives
// the same bits on amd64 (with or without the SSE kernels), under
// GOOS=js GOARCH=wasm and with GOAMD64=v3 (except the sign and payload of a
// NaN, which WebAssembly leaves unspecified): products are rounded before
// they are added (explicit float32 conversions forbid fused multiply-add),
// and math.Exp and math.Log are replaced by Exp32 and Log32. The orders are:
//
//   - A dot product (Dot, Logits, Partial.AddKeys) is summed in index order
//     from zero: s = 0; s += a[0]*b[0]; s += a[1]*b[1]; ... Logits stores
//     scale*s, so Logits(q, k)[i,j] == scale*Dot(q[i], k[j]) bit for bit, as
//     in the plain loops.
//   - A blocked dot product (BlockDots) sums each block of bs elements so,
//     then adds the block sums to zero in block order (a lane per row).
//   - A weighted sum of rows (MatMul, BinMass, Partial) is summed per output
//     column in key order: o[c] += a[j]*b[j,c] for j = 0, 1, ... (for
//     BinMass, in the order of idx).
//   - A row or column sum (SoftmaxRows, ColMean, the entropies) is summed in
//     index order. Partial adds the weights of each block of keys (at most
//     128 for AddKeys, 256 for AddLogits) in order, then that block sum to
//     Sum.
//
// The vector kernels run several of these sequences side by side in the
// lanes of a vector register, one lane per key of a logits block or per
// output column of a weighted sum, with the same roundings in the same
// order (a multiply, then an add: never a fused multiply-add), and so
// produce the same bits as the portable Go loops. They are:
//
//   - the simd/archsimd kernels (simd.go, simd_amd64.go), built with
//     GOEXPERIMENT=simd: one 4-lane source compiled to WebAssembly SIMD128
//     and, on amd64 CPUs with AVX2, to 128-bit AVX, plus 8-lane AVX2
//     versions, and on CPUs with AVX-512 16-lane blocks of the logits and
//     of the two-row weighted sums (wide16); the width is chosen once at
//     start-up (vecLanes). They run
//     Logits, MatMul, BlockDots, BinMass, the weighted sums of Partial,
//     Exp32 and Log32 four at a time (one element per lane) in SoftmaxRows, the
//     entropies and Partial, and the elementwise column sums, scalings and
//     quotients of ColMean, SoftmaxRows and KeyEntropy. Dot and the row
//     sums stay scalar: each is one sum in index order. archsimd needs AVX2 on amd64 (its Broadcast
//     does).
//   - the WebAssembly SIMD128 assembly (simd_wasm.s, wasm with
//     GOEXPERIMENT=simd): the innermost loops of the logits (four rows by
//     eight keys), of the weighted sums (one row by 32 columns, two rows by
//     16), of MatMul4 (four dot products side by side), of the
//     exponentials and of x ln x, each lane in the archsimd kernels' order.
//     Go's compiled wasm jumps back to a loop head through the function's
//     dispatch table, keeps addresses as 64-bit values and spills vectors
//     to its stack; these loops keep everything in WebAssembly locals and
//     run 1.1-3.6 times as fast under V8.
//   - the SSE2 assembly (kernel_amd64.s, any amd64 CPU): the same kernels
//     (but BlockDots, which then runs the portable loops) where the
//     archsimd ones are not built or the CPU lacks AVX2, and AxpyWiden
//     everywhere on amd64.
//
// TestPathsMatch and TestElementwiseMatchPaths run every path this build
// and CPU have against the portable loops, and the golden checksum of
// TestGolden pins the bits on every platform. Build with -tags purego (or
// without GOEXPERIMENT=simd on wasm) to use the portable kernels only.
package kernel

import "math"

// Logits sets dst[i*n+j] = scale * dot(q[i], k[j]) for the m query rows of q
// and the n key rows of k, both with d columns. dst has m*n elements.
func Logits(dst, q []float32, m int, k []float32, n, d int, scale float32) {
	if m <= 0 || n <= 0 {
		return
	}
	dst, q, k = dst[:m*n], q[:m*d], k[:n*d]
	if vecLanes > 0 && n >= 4 && d > 0 && d <= maxPackD {
		logitsVec(dst, q, m, k, n, d, scale)
		return
	}
	if useAsm && n >= 4 && d > 0 && d <= maxPackD {
		logitsSSE(dst, q, m, k, n, d, scale)
		return
	}
	logitsGo(dst, q, m, k, n, d, scale)
}

// Dot returns the dot product of a and b (len(b) >= len(a)), summed in index
// order.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += float32(x * b[i])
	}
	return s
}

// SoftmaxRows writes the row softmax of the m x n logits src into dst (which
// may alias src), subtracting each row's maximum first. It stores the row
// maximum in mu[i] and sum_j exp(src[i,j]-mu[i]) in sum[i], so that
// exp(src[i,j]-mu[i]) = dst[i,j]*sum[i]. The exponentials are Exp32.
func SoftmaxRows(dst, src []float32, m, n int, mu, sum []float32) {
	if m <= 0 {
		return
	}
	dst, src, mu, sum = dst[:m*n], src[:m*n], mu[:m], sum[:m]
	for i := range mu {
		s := src[i*n : i*n+n]
		o := dst[i*n : i*n+n]
		o = o[:len(s)]
		mx, ok := rowMax(s)
		if !ok {
			mx = float32(math.Inf(-1))
			for _, x := range s {
				if x > mx {
					mx = x
				}
			}
		}
		t := ExpShift(o, s, mx)
		scaleTo(o, 1/t)
		mu[i], sum[i] = mx, t
	}
}

// ColMean sets dst[j] = mean_i a[i,j] over the m rows of the m x n matrix a
// (the salience of HAE-OLS.md §1): the column sum in row order times 1/m.
func ColMean(dst, a []float32, m, n int) {
	dst = dst[:n]
	clear(dst)
	if m > 0 {
		a = a[:m*n]
	}
	for i := 0; i < m; i++ {
		addTo(dst, a[i*n:i*n+n])
	}
	scaleTo(dst, 1/float32(m))
}

// KeyStats sets sal to ColMean(sal, a, m, n) and ent to KeyEntropy(ent, a,
// m, n, work), the same bits, from one pass of column sums over a.
func KeyStats(sal, ent, a []float32, m, n int, work []float32) {
	KeyEntropy(ent, a, m, n, work)
	sal = sal[:n]
	copy(sal, work[:n])
	scaleTo(sal, 1/float32(m))
}

// KeyEntropy sets dst[j] to the normalized entropy of column j of the m x n
// attention matrix a: with p[i] = a[i,j] / sum_i a[i,j],
// dst[j] = -sum_i p[i] ln p[i] / ln m, in [0, 1]. A column with zero mass, or
// any column when m == 1, gets 1. work must hold 2n floats; work[:n] is left
// holding the column sums (in row order, ColMean's).
//
// The sum runs over the terms -p ln p >= 0 (two passes over a: column sums,
// then the terms), so it has no cancellation; ln is Log32.
func KeyEntropy(dst, a []float32, m, n int, work []float32) {
	dst = dst[:n]
	cs, ent := work[:n], work[n:2*n]
	clear(cs)
	clear(ent)
	if m > 0 {
		a = a[:m*n]
	}
	for i := 0; i < m; i++ {
		addTo(cs, a[i*n:i*n+n])
	}
	if m == 1 {
		for j := range dst {
			dst[j] = 1
		}
		return
	}
	var buf [elemChunk]float32
	for i := 0; i < m; i++ {
		row := a[i*n : i*n+n]
		for j0 := 0; j0 < n; j0 += elemChunk {
			p := buf[:min(elemChunk, n-j0)]
			r, c, h := row[j0:j0+len(p)], cs[j0:j0+len(p)], ent[j0:j0+len(p)]
			if vecLanes > 0 {
				// One pass while the quotients are normal; from the
				// first group that is not, the three passes below.
				k := 0
				if vecLanes == 8 || asmXlogx {
					k = xlogxT8(h, r, c)
				}
				k += xlogxT4(h[k:], r[k:], c[k:])
				p, r, c, h = p[k:], r[k:], c[k:], h[k:]
			}
			j := 0
			if vecLanes > 0 {
				j = elemT4(2, p, r, c, 0)
			}
			for ; j < len(r); j++ {
				p[j] = r[j] / c[j]
			}
			xlogxTo(p, p)
			j = 0
			if vecLanes > 0 {
				j = elemT4(3, h, p, nil, 0)
			}
			for ; j < len(p); j++ {
				h[j] -= p[j]
			}
		}
	}
	inv := 1 / Log32(float32(m))
	ent = ent[:len(dst)]
	cs = cs[:len(dst)]
	for j := range dst {
		if !(cs[j] > 0) {
			dst[j] = 1
			continue
		}
		dst[j] = min(max(ent[j]*inv, 0), 1)
	}
}

// RowEntropy sets dst[i] = -sum_j a[i,j] ln a[i,j] / ln n for the m rows of the
// m x n attention matrix a, in [0, 1] (1 when n == 1). ln is Log32.
func RowEntropy(dst, a []float32, m, n int) {
	dst = dst[:m]
	if n == 1 {
		for i := range dst {
			dst[i] = 1
		}
		return
	}
	inv := 1 / Log32(float32(n))
	var buf [4][elemChunk]float32
	// Four rows at a time (the last block repeats its last row): their
	// chains of dependent subtractions overlap.
	for i := 0; i < len(dst); i += 4 {
		var r [4][]float32
		for k := range r {
			i2 := min(i+k, len(dst)-1)
			r[k] = a[i2*n : i2*n+n]
		}
		var h0, h1, h2, h3 float32
		for j0 := 0; j0 < n; j0 += elemChunk {
			p0 := buf[0][:min(elemChunk, n-j0)]
			p1, p2, p3 := buf[1][:len(p0)], buf[2][:len(p0)], buf[3][:len(p0)]
			xlogxTo(p0, r[0][j0:])
			xlogxTo(p1, r[1][j0:])
			xlogxTo(p2, r[2][j0:])
			xlogxTo(p3, r[3][j0:])
			for j, x := range p0 {
				h0 -= x
				h1 -= p1[j]
				h2 -= p2[j]
				h3 -= p3[j]
			}
		}
		for k, h := range [4]float32{h0, h1, h2, h3} {
			if i+k < len(dst) {
				dst[i+k] = min(max(h*inv, 0), 1)
			}
		}
	}
}

// AxpyWiden adds w*float64(x[c]) to the float64 accumulator dst[c] for c
// < len(x) (len(dst) >= len(x)): a float32 row weighted into a float64 sum,
// each product and sum rounded once, the same bits on every platform (SSE2
// two lanes at a time on amd64).
func AxpyWiden(dst []float64, w float64, x []float32) {
	dst = dst[:len(x)]
	c := 0
	if useAsm && len(x) >= 4 {
		c = len(x) &^ 3
		axpyWidenSSE(&dst[0], c, w, &x[0])
	}
	for ; c+4 <= len(x); c += 4 {
		d, s := dst[c:c+4:c+4], x[c:c+4:c+4]
		d[0] += float64(w * float64(s[0]))
		d[1] += float64(w * float64(s[1]))
		d[2] += float64(w * float64(s[2]))
		d[3] += float64(w * float64(s[3]))
	}
	for ; c < len(x); c++ {
		dst[c] += float64(w * float64(x[c]))
	}
}

// AxpyWidenRows adds w[t]*float64(x[idx[t]*ld+c]) to dst[c] for t = 0, 1,
// ..., len(w)-1 in turn and c < len(dst): AxpyWiden(dst, w[t],
// x[idx[t]*ld:]) for each t, the same bits, with the sums of a strip of
// columns kept in registers over all the rows (with AVX2, 32, 16 and 4
// lanes; in wasm, SIMD128 assembly, 16 and 4; elsewhere 4 scalars).
// len(idx) >= len(w).
func AxpyWidenRows(dst []float64, w []float64, idx []int32, x []float32, ld int) {
	n := len(dst)
	if n == 0 || len(w) == 0 {
		return
	}
	idx = idx[:len(w)]
	for _, j := range idx {
		_ = x[int(j)*ld+n-1] // every row is in bounds
	}
	c := 0
	switch {
	case (vecLanes == 8 || wideWiden && vecLanes == 4) && n >= 4:
		c = widenRowsT8(dst, w, idx, x, ld)
	case useAsm && vecLanes == 0 && n >= 4:
		c = n &^ 3
		for t, j := range idx {
			axpyWidenSSE(&dst[0], c, w[t], &x[int(j)*ld])
		}
	}
	for ; c+4 <= n; c += 4 {
		s0, s1, s2, s3 := dst[c], dst[c+1], dst[c+2], dst[c+3]
		for t, j := range idx {
			r := x[int(j)*ld+c : int(j)*ld+c+4 : int(j)*ld+c+4]
			a := w[t]
			s0 += float64(a * float64(r[0]))
			s1 += float64(a * float64(r[1]))
			s2 += float64(a * float64(r[2]))
			s3 += float64(a * float64(r[3]))
		}
		dst[c], dst[c+1], dst[c+2], dst[c+3] = s0, s1, s2, s3
	}
	for ; c < n; c++ {
		s := dst[c]
		for t, j := range idx {
			s += float64(w[t] * float64(x[int(j)*ld+c]))
		}
		dst[c] = s
	}
}

// MatMul sets dst = a * b for the m x n matrix a and the n x d matrix b
// (dst is m x d). Each element is summed in the order j = 0..n-1.
func MatMul(dst, a []float32, m, n int, b []float32, d int) {
	if m <= 0 {
		return
	}
	dst = dst[:m*d]
	clear(dst)
	if n <= 0 {
		return
	}
	a, b = a[:m*n], b[:n*d]
	i := 0
	for ; i+2 <= m; i += 2 {
		axpy2(dst[i*d:i*d+d], dst[(i+1)*d:(i+1)*d+d], a[i*n:i*n+n], a[(i+1)*n:(i+1)*n+n], nil, b, d)
	}
	if i < m {
		axpy(dst[i*d:i*d+d], a[i*n:i*n+n], nil, b, d)
	}
}

// elemChunk is the length of the stack buffers of the entropy kernels.
const elemChunk = 256

// binChunk is the number of keys BinMass gathers per call of the weighted-sum
// kernel (a stack buffer of 2*binChunk floats).
const binChunk = 256

// Features sets out[i*ns+t] = Exp32(scale*q_i.k_t - mu[i]) for the m
// rows of q (m x d) and the ns keys k (ns x d): HAE-OLS's summary
// features, the logits of Logits shifted by each row's mu and
// exponentiated with the same float32 exponential attention uses, so a
// feature times a summary's weight is the weight attention will give it.
func Features(out, q []float32, m int, k []float32, ns, d int, scale float32, mu []float32) {
	if m <= 0 || ns <= 0 {
		return
	}
	out, mu = out[:m*ns], mu[:m]
	Logits(out, q, m, k, ns, d, scale)
	for i, x := range mu {
		row := out[i*ns : i*ns+ns]
		ExpShiftTo(row, row, x)
	}
}

// BinMass computes, for the m x n attention matrix a and the key subset idx,
// z[i] = sum_{j in idx} a[i,j] and y[i,:] = sum_{j in idx} a[i,j] v[j,:]
// (v is n x d, y is m x d): the bin mass and bin weighted values of
// HAE-OLS.md §3, up to the per-row factor sum_j exp(S[i,j]-mu[i]). Both sums
// run in the order of idx.
func BinMass(z, y, a []float32, m, n int, idx []int32, v []float32, d int) {
	if m <= 0 {
		return
	}
	z, y = z[:m], y[:m*d]
	var buf [2 * binChunk]float32
	for i := 0; i < m; i += 2 {
		two := i+1 < m
		r0 := a[i*n : i*n+n]
		o0 := y[i*d : i*d+d]
		clear(o0)
		var r1, o1 []float32
		if two {
			r1 = a[(i+1)*n : (i+1)*n+n]
			o1 = y[(i+1)*d : (i+1)*d+d]
			clear(o1)
		}
		var s0, s1 float32
		for t0 := 0; t0 < len(idx); t0 += binChunk {
			ids := idx[t0:min(t0+binChunk, len(idx))]
			c0 := buf[:len(ids)]
			for t, j := range ids {
				x := r0[j]
				c0[t] = x
				s0 += x
			}
			if !two {
				axpy(o0, c0, ids, v, d)
				continue
			}
			c1 := buf[binChunk : binChunk+len(ids)]
			for t, j := range ids {
				x := r1[j]
				c1[t] = x
				s1 += x
			}
			axpy2(o0, o1, c0, c1, ids, v, d)
		}
		z[i] = s0
		if two {
			z[i+1] = s1
		}
	}
}

// addTo sets dst[j] += src[j] (len(src) >= len(dst)).
func addTo(dst, src []float32) {
	src = src[:len(dst)]
	j := 0
	if vecLanes == 8 {
		j = elemT8(0, dst, src, 0)
	}
	if vecLanes > 0 {
		j += elemT4(0, dst[j:], src[j:], nil, 0)
	}
	for ; j+4 <= len(dst); j += 4 {
		o := dst[j : j+4 : j+4]
		s := src[j : j+4 : j+4]
		o[0] += s[0]
		o[1] += s[1]
		o[2] += s[2]
		o[3] += s[3]
	}
	for ; j < len(dst); j++ {
		dst[j] += src[j]
	}
}

// scaleTo sets dst[j] *= f.
func scaleTo(dst []float32, f float32) {
	j := 0
	if vecLanes == 8 {
		j = elemT8(1, dst, nil, f)
	}
	if vecLanes > 0 {
		j += elemT4(1, dst[j:], nil, nil, f)
	}
	for ; j+4 <= len(dst); j += 4 {
		o := dst[j : j+4 : j+4]
		o[0] *= f
		o[1] *= f
		o[2] *= f
		o[3] *= f
	}
	for ; j < len(dst); j++ {
		dst[j] *= f
	}
}
