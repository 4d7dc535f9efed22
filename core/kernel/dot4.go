package kernel

// Dot4 returns the dot product of a and b[:len(a)] with four interleaved
// accumulators: lane l sums a[j]*b[j] for j = l mod 4 in index order over
// the first len(a)&^3 elements, the rest are added to lane 0 in order, and
// the result is (l0 + l1) + (l2 + l3); every product is rounded (no fused
// multiply-add). This is the order of llama2.c's matrix-vector product,
// which the forward passes of core/llama use, and the order a 4-lane vector
// register computes: the archsimd kernel (SIMD128 in wasm, AVX on amd64)
// gives the same bits.
func Dot4(a, b []float32) float32 {
	var o [1]float32
	MatVec4(o[:], a, b[:len(a)])
	return o[0]
}

// MatVec4 sets out[i] = Dot4(w[i*n:(i+1)*n], x) for the len(out) rows of
// the row-major w, n = len(x).
func MatVec4(out, w, x []float32) {
	MatMul4(out, w, x, 1)
}

// MatMul4 sets out[b*rows+i] = Dot4(w[i*n:(i+1)*n], x[b*n:(b+1)*n]) for the
// nb rows of x (n = len(x)/nb) and the rows = len(out)/nb rows of w: the
// matrix-vector product of every row of x, each weight row read once for
// all of them, with MatVec4's bits.
func MatMul4(out, w, x []float32, nb int) {
	if nb <= 0 || len(out) == 0 {
		return
	}
	n, rows := len(x)/nb, len(out)/nb
	w, x = w[:rows*n], x[:nb*n]
	if vecLanes > 0 && n >= 4 {
		dot4Vec(out, w, x, nb, n, rows)
		return
	}
	dot4Go(out, w, x, nb, n, rows)
}

// dot4Go is MatMul4 in portable Go.
func dot4Go(out, w, x []float32, nb, n, rows int) {
	for i := 0; i < rows; i++ {
		row := w[i*n : (i+1)*n : (i+1)*n]
		for b := 0; b < nb; b++ {
			xb := x[b*n : (b+1)*n : (b+1)*n]
			var a0, a1, a2, a3 float32
			j := 0
			for ; j+4 <= n; j += 4 {
				r := row[j : j+4 : j+4]
				xx := xb[j : j+4 : j+4]
				a0 += float32(r[0] * xx[0])
				a1 += float32(r[1] * xx[1])
				a2 += float32(r[2] * xx[2])
				a3 += float32(r[3] * xx[3])
			}
			for ; j < n; j++ {
				a0 += float32(row[j] * xb[j])
			}
			out[b*rows+i] = (a0 + a1) + (a2 + a3)
		}
	}
}

// WeightedRows adds sum_t coef[t]*b[t*ldb : t*ldb+len(o)] to o: each o[c]
// gets its terms in the order of t, every product rounded, so the result is
// that of adding the rows one after the other (an attention output over
// values stored ldb apart), with the columns in vector lanes where the
// build has them (the same bits).
func WeightedRows(o, coef, b []float32, ldb int) { axpy(o, coef, nil, b, ldb) }
