//go:build goexperiment.simd && !purego && !wasmnoasm

package kernel

import (
	"math"
	"simd/archsimd"
	"unsafe"
)

// wideKeys says that the logits kernel takes keys 8 at a time (logitsT8)
// although vecLanes is 4: in SIMD128, two 4-lane halves per row share each
// query element's splat, half the scalar loads and splats per product of
// the 4-key kernel.
const wideKeys = true

// wideAxpy says that the weighted sums run axpyT8 and axpy2T8 although
// vecLanes is 4: here they are the SIMD128 assembly of simd_wasm.s.
const wideAxpy = true

// The SIMD128 assembly kernels of simd_wasm.s.

//go:noescape
func logitsW(dst *float32, ldd int, q *float32, m int, kt *float32, d int, scale float32)

//go:noescape
func axpyW(o, coef *float32, idx *int32, nt int, b *float32, ldb int, n32 int)

//go:noescape
func dots4W(out *float32, ostride int, s, p *float32, n int, blocks int)

//go:noescape
func axpy2W(o0, o1, c0, c1 *float32, idx *int32, nt int, b *float32, ldb int, n16 int)

//go:noescape
func pack4W(wt *float32, w *float32, ld int, d int, os int)

// packVec packs a panel of 4 or 8 whole rows (wt[lanes*c+r] = w[r*d+c]:
// packRows's panels, logitsVec's groups of 8 keys) in the SIMD128
// assembly (pack4W, 4 rows at a time), where Go's WebAssembly for the
// loop spends most of its time on addresses, and reports whether it did:
// other panels are packRows's own.
func packVec(wt []float32, lanes int, w []float32, rows, d int) bool {
	if lanes != 4 && lanes != 8 || rows != lanes || d <= 0 {
		return false
	}
	_ = wt[lanes*d-1]
	_ = w[lanes*d-1]
	for r := 0; r < lanes; r += 4 {
		pack4W(&wt[r], &w[r*d], d, d, lanes)
	}
	return true
}

// logitsT8 is the 8-key logits kernel (see the amd64 one) in two 4-lane
// halves: kt holds 8 keys transposed (kt[8c+l] = key l's element c), lanes
// 0-3 and 4-7 each run one key's dot product with a query row in the
// order of c, as logitsT4's lanes do. Blocks of four rows run logitsW, the
// last rows one at a time.
func logitsT8(dst []float32, ldd int, q []float32, m int, kt []float32, d int, scale float32) {
	_ = kt[8*d-1]
	_ = q[m*d-1]
	_ = dst[(m-1)*ldd+7]
	i := m &^ 3
	if i > 0 {
		logitsW(&dst[0], ldd, &q[0], i, &kt[0], d, scale)
	}
	pk := unsafe.Pointer(&kt[0])
	sv := archsimd.BroadcastFloat32x4(scale)
	for ; i < m; i++ {
		x := unsafe.Pointer(&q[i*d])
		var a, b archsimd.Float32x4
		for c := 0; c < d; c++ {
			xc := archsimd.BroadcastFloat32x4(*(*float32)(unsafe.Add(x, 4*c)))
			p := unsafe.Add(pk, 32*c)
			a, b = a.Add(xc.Mul(vec4(p))), b.Add(xc.Mul(vec4(unsafe.Add(p, 16))))
		}
		a.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd:]))
		b.Mul(sv).StoreArray((*[4]float32)(dst[i*ldd+4:]))
	}
}

// idxPtr is the address of idx[0], or nil for a nil idx.
func idxPtr(idx []int32) *int32 {
	if idx == nil {
		return nil
	}
	return &idx[0]
}

// axpyT8 is axpyT4 (o[c] += sum_t coef[t]*b[j_t*ldb+c], each column in the
// order of t) with 32 columns at a time in axpyW, the rest in axpyT4. The
// caller has checked the rows of b, as for axpyT4.
func axpyT8(o, coef []float32, idx []int32, b []float32, ldb int) int {
	n := len(o) &^ 31
	if n > 0 {
		axpyW(&o[0], &coef[0], idxPtr(idx), len(coef), &b[0], ldb, n)
	}
	if n < len(o)&^3 {
		n += axpyT4(o[n:], coef, idx, b[n:], ldb)
	}
	return n
}

// axpy2T8 is axpy2T4 with 2 rows by 16 columns at a time in axpy2W, the
// rest in axpy2T4.
func axpy2T8(o0, o1, c0, c1 []float32, idx []int32, b []float32, ldb int) int {
	n := len(o0) &^ 15
	if n > 0 {
		axpy2W(&o0[0], &o1[0], &c0[0], &c1[:len(c0)][0], idxPtr(idx), len(c0), &b[0], ldb, n)
	}
	if n < len(o0)&^3 {
		n += axpy2T4(o0[n:], o1[n:], c0, c1, idx, b[n:], ldb)
	}
	return n
}

// wideWiden says that AxpyWidenRows runs widenRowsT8 although vecLanes is
// 4: here it is the SIMD128 assembly of simd_wasm.s.
const wideWiden = true

// widenRowsT8 is AxpyWidenRows over the first len(dst)&^3 columns in the
// SIMD128 assembly (widenW: strips of 16, then 4 columns whose float64
// sums stay in registers over all the rows). It returns the count of
// columns done; the caller has checked the bounds.
func widenRowsT8(dst []float64, w []float64, idx []int32, x []float32, ld int) int {
	n := len(dst) &^ 3
	widenW(&dst[0], n, &w[0], &idx[0], len(w), &x[0], ld)
	return n
}

//go:noescape
func widenW(dst *float64, n4 int, w *float64, idx *int32, nt int, x *float32, ld int)

// asmExp says that the exponentials run the SIMD128 assembly of
// simd_wasm.s (expW) in place of the archsimd loops: expT8 in ExpShiftTo
// although vecLanes is 4, and expShiftVec in ExpShift.
const asmExp = true

// expConsts are expW's constants, each in four lanes: those of expT4, in
// the order expW reads them.
var expConsts = func() (k [14][4]float32) {
	for i, c := range []float32{expFastMin, expFastMax, log2e, magic, ln2Hi, ln2Lo,
		1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
		1, math.Float32frombits(0x4b400000 - 127)} {
		k[i] = [4]float32{c, c, c, c}
	}
	return k
}()

//go:noescape
func expW(dst, src *float32, n4 int, mx float32, sum *float32, k *[14][4]float32) int

// expT8 is expT4 in the SIMD128 assembly (expW): dst[j] = Exp32(src[j]-mx)
// four at a time while all four arguments are in the fast range; it
// returns the count done.
func expT8(dst, src []float32, mx float32) int {
	n := len(dst) &^ 3
	if n == 0 {
		return 0
	}
	return expW(&dst[0], &src[:n][0], n, mx, nil, &expConsts)
}

// expShiftVec is expShiftT4 in the SIMD128 assembly (expW), the sum added
// to in index order.
func expShiftVec(dst, src []float32, mx float32, sum *float32) int {
	n := len(dst) &^ 3
	if n == 0 {
		return 0
	}
	return expW(&dst[0], &src[:n][0], n, mx, sum, &expConsts)
}

// dots4 sets out[r*ostride] to MatMul4's dot product of s with row r of
// p (row r at p[r*n:], n = len(s) a multiple of 4, > 0) for the
// 4*blocks rows: dots4W.
func dots4(out []float32, ostride int, s, p []float32, n, blocks int) {
	_ = s[n-1]
	_ = p[4*blocks*n-1]
	_ = out[(4*blocks-1)*ostride]
	dots4W(&out[0], ostride, &s[0], &p[0], n, blocks)
}

// asmXlogx says that x ln x runs the SIMD128 assembly of simd_wasm.s
// (xlogxW) in place of the archsimd loop: xlogxT8 in xlogxTo and
// KeyEntropy although vecLanes is 4.
const asmXlogx = true

// xlogxConsts are xlogxW's constants as bits, each in four lanes: those of
// xlogxT4, in the order xlogxW reads them.
var xlogxConsts = func() (k [19][4]uint32) {
	for i, c := range []uint32{math.Float32bits(minNorm), math.Float32bits(math.MaxFloat32), 0x007fffff, 0x3f800000, 127,
		math.Float32bits(sqrt2), math.Float32bits(0.5), math.Float32bits(1),
		math.Float32bits(7.0376836292e-2), math.Float32bits(1.1514610310e-1), math.Float32bits(1.1676998740e-1),
		math.Float32bits(1.2420140846e-1), math.Float32bits(1.4249322787e-1), math.Float32bits(1.6668057665e-1),
		math.Float32bits(2.0000714765e-1), math.Float32bits(2.4999993993e-1), math.Float32bits(3.3333331174e-1),
		math.Float32bits(ln2Hi), math.Float32bits(ln2Lo)} {
		k[i] = [4]uint32{c, c, c, c}
	}
	return k
}()

//go:noescape
func xlogxW(dst, src, div *float32, n4 int, k *[19][4]uint32) int

// xlogxT8 is xlogxT4 (with its optional divisor) in the SIMD128 assembly
// (xlogxW), four at a time while all four x are normal, positive and
// finite; it returns the count done.
func xlogxT8(dst, src, div []float32) int {
	n := len(dst) &^ 3
	if n == 0 {
		return 0
	}
	var pd *float32
	if div != nil {
		pd = &div[:n][0]
	}
	return xlogxW(&dst[0], &src[:n][0], pd, n, &xlogxConsts)
}
