//go:build goexperiment.simd && !purego && !wasmnoasm

#include "textflag.h"

// The hottest 4-lane kernels in WebAssembly SIMD128 by hand: the logits
// block (logitsW), the weighted sums of one and two rows (axpyW,
// axpy2W), MatMul4's dot products (dots4W), the packing of panels of four
// rows (pack4W, a copy), the exponentials (expW), x ln x (xlogxW) and the
// float64 sums of float32 rows (widenW). Each lane runs the same sequence of float32
// operations as a lane of simd.go's kernels and of the portable loops (a
// product, then its sum with the accumulator, in the order of the loop;
// no fused multiply-add), so they give the same bits. What they save over
// the compiled archsimd code is the scalar work around each vector
// operation: the Go compiler's wasm functions jump back to a loop head
// through a dispatch table, keep addresses as 64-bit values and spill
// vectors to the Go stack, while these loops keep everything in
// WebAssembly locals.
//
// What they buy, measured by `scripts/bench-ratio.sh -noasm 3` (fastest of
// three rounds, wasm in Node on a 2-core x86 machine; noasm is the build
// tag wasmnoasm, simd.go's archsimd loops alone, same bits): logitsW and
// pack4W BenchmarkLogits/m=128 0.55 ms against 1.80 ms (3.3x); axpyW and
// axpy2W BenchmarkMatMul/m=128 0.38 against 1.37 ms (3.6x); dots4W
// BenchmarkMatMul4/rows=768/n=256/nb=32 0.32 against 0.62 ms (1.9x); expW
// BenchmarkSoftmaxRows/m=128 0.46 against 0.53 ms (1.2x); xlogxW
// BenchmarkRowEntropy/m=128 0.44 against 0.53 ms (1.2x), KeyEntropy 1.1x;
// all of them BenchmarkAnalyze 3.9 against 6.9 ms (1.75x). widenW:
// BenchmarkReplanHAEOLS 1.49 against 1.98 ms (1.3x, 60 iterations, 5
// rounds). A kernel whose margin falls to noise goes back to archsimd.
//
// Registers: R0-R15 are i64 locals, V0-V15 v128 locals. A V128Store takes
// its address without an offset (the assembler drops a store's offset), so
// the stores add it to the address; an ExtractLane or ReplaceLane written
// with one operand loses its lane (encoded as 0), so they name it twice.

// MULADD sets acc = x*k + acc.
#define MULADD(x, k, acc) Get x; Get k; F32x4Mul; Get acc; F32x4Add; Set acc

// SPLAT sets v to the float32 at address r, in every lane.
#define SPLAT(r, v) Get r; I32WrapI64; F32Load $0; F32x4Splat; Set v

// STORE stores v at address r plus off.
#define STORE(r, off, v) Get r; I32WrapI64; I32Const $off; I32Add; Get v; V128Store $0

// STORESCALED stores v*V15 at address r plus off.
#define STORESCALED(r, off, v) Get r; I32WrapI64; I32Const $off; I32Add; Get v; Get V15; F32x4Mul; V128Store $0

// LOAD sets v to the 4 floats at address r plus off.
#define LOAD(r, off, v) Get r; I32WrapI64; V128Load $off; Set v

// ADDI adds the constant c to register r.
#define ADDI(r, c) Get r; I64Const $c; I64Add; Set r

// ADDR adds register s to register r.
#define ADDR(r, s) Get r; Get s; I64Add; Set r

// LOOPDEC decrements the counter r and branches to label unless it is 0.
#define LOOPDEC(r, label) Get r; I64Const $1; I64Sub; Tee r; I64Eqz; I32Eqz; BrIf label

// IDXROW sets R9 to row idx[t] of b (R6 + idx[t]*R7, idx[t] read at R13,
// which moves on) when there is an index (R4 != 0); without one R9 steps
// through the rows.
#define IDXROW \
	Get R4; I64Eqz; I32Eqz; \
	If; \
		Get R13; I32WrapI64; I64Load32S $0; Get R7; I64Mul; Get R6; I64Add; Set R9; \
		ADDI(R13, 4); \
	End

// func logitsW(dst *float32, ldd int, q *float32, m int, kt *float32, d int, scale float32)
//
// For the 8 keys packed transposed at kt (kt[8c+l] = key l's element c) and
// the m&^3 first rows of q (m x d, row stride d), four rows at a time:
// dst[i*ldd+l] = scale * sum_{c<d} q[i*d+c]*kt[8c+l], the sum in the order
// of c. d > 0.
TEXT ·logitsW(SB), NOSPLIT, $0-52
	MOVD dst+0(FP), R0
	MOVD ldd+8(FP), R1
	MOVD q+16(FP), R2
	MOVD m+24(FP), R3
	MOVD kt+32(FP), R4
	MOVD d+40(FP), R5
	F32Load scale+48(FP)
	F32x4Splat
	Set V15
	Get R1
	I64Const $2
	I64Shl
	Set R1 // row stride of dst in bytes
	Get R5
	I64Const $2
	I64Shl
	Set R6 // row stride of q in bytes

	Block
rows:
	Loop
		Get R3
		I64Const $4
		I64LtS
		BrIf $1
		F32Const $0.0
		F32x4Splat
		Tee V0
		Tee V1
		Tee V2
		Tee V3
		Tee V4
		Tee V5
		Tee V6
		Set V7
		Get R4
		Set R7 // kt + 32c
		Get R2
		Set R8 // q row i + 4c
		Get R5
		Set R9 // d - c
cols:
		Loop
			LOAD(R7, 0, V8)
			LOAD(R7, 16, V9)
			Get R8
			Set R10
			SPLAT(R10, V10)
			MULADD(V10, V8, V0)
			MULADD(V10, V9, V1)
			ADDR(R10, R6)
			SPLAT(R10, V10)
			MULADD(V10, V8, V2)
			MULADD(V10, V9, V3)
			ADDR(R10, R6)
			SPLAT(R10, V10)
			MULADD(V10, V8, V4)
			MULADD(V10, V9, V5)
			ADDR(R10, R6)
			SPLAT(R10, V10)
			MULADD(V10, V8, V6)
			MULADD(V10, V9, V7)
			ADDI(R7, 32)
			ADDI(R8, 4)
			LOOPDEC(R9, cols)
		End
		STORESCALED(R0, 0, V0)
		STORESCALED(R0, 16, V1)
		ADDR(R0, R1)
		STORESCALED(R0, 0, V2)
		STORESCALED(R0, 16, V3)
		ADDR(R0, R1)
		STORESCALED(R0, 0, V4)
		STORESCALED(R0, 16, V5)
		ADDR(R0, R1)
		STORESCALED(R0, 0, V6)
		STORESCALED(R0, 16, V7)
		ADDR(R0, R1)
		// R8 is row i+1 now: the next block starts three rows further.
		Get R8
		Get R6
		I64Const $3
		I64Mul
		I64Add
		Set R2
		Get R3
		I64Const $4
		I64Sub
		Set R3
		Br rows
	End
	End
	RET

// func axpyW(o, coef *float32, idx *int32, nt int, b *float32, ldb int, n32 int)
//
// For the first n32 columns of o (a multiple of 32, > 0), 32 at a time kept
// in registers: o[c] += sum_{t<nt} coef[t]*b[j_t*ldb+c] in the order of t,
// with j_t = idx[t], or t when idx is nil. nt > 0.
TEXT ·axpyW(SB), NOSPLIT, $0-56
	MOVD o+0(FP), R0
	MOVD coef+8(FP), R2
	MOVD idx+16(FP), R4
	MOVD nt+24(FP), R5
	MOVD b+32(FP), R6
	MOVD ldb+40(FP), R7
	MOVD n32+48(FP), R8
	Get R7
	I64Const $2
	I64Shl
	Set R7 // row stride of b in bytes
	Get R8
	I64Const $5
	I64ShrU
	Set R8 // blocks of 32 columns

blocks1:
	Loop
		LOAD(R0, 0, V0)
		LOAD(R0, 16, V1)
		LOAD(R0, 32, V2)
		LOAD(R0, 48, V3)
		LOAD(R0, 64, V4)
		LOAD(R0, 80, V5)
		LOAD(R0, 96, V6)
		LOAD(R0, 112, V7)
		Get R2
		Set R11 // coef + 4t
		Get R5
		Set R10 // nt - t
		Get R6
		Set R9 // row j_t of b, at this block's columns
		Get R4
		Set R13 // idx + 4t
terms1:
		Loop
			IDXROW
			SPLAT(R11, V12)
			ADDI(R11, 4)
			LOAD(R9, 0, V8)
			MULADD(V12, V8, V0)
			LOAD(R9, 16, V8)
			MULADD(V12, V8, V1)
			LOAD(R9, 32, V8)
			MULADD(V12, V8, V2)
			LOAD(R9, 48, V8)
			MULADD(V12, V8, V3)
			LOAD(R9, 64, V8)
			MULADD(V12, V8, V4)
			LOAD(R9, 80, V8)
			MULADD(V12, V8, V5)
			LOAD(R9, 96, V8)
			MULADD(V12, V8, V6)
			LOAD(R9, 112, V8)
			MULADD(V12, V8, V7)
			ADDR(R9, R7)
			LOOPDEC(R10, terms1)
		End
		STORE(R0, 0, V0)
		STORE(R0, 16, V1)
		STORE(R0, 32, V2)
		STORE(R0, 48, V3)
		STORE(R0, 64, V4)
		STORE(R0, 80, V5)
		STORE(R0, 96, V6)
		STORE(R0, 112, V7)
		ADDI(R0, 128)
		ADDI(R6, 128)
		LOOPDEC(R8, blocks1)
	End
	RET

// func axpy2W(o0, o1, c0, c1 *float32, idx *int32, nt int, b *float32, ldb int, n16 int)
//
// axpyW for two output rows o0 and o1 with their own coefficients c0 and
// c1 over the same rows of b: 2 rows by 16 columns kept in registers, each
// row of b loaded once for both; n16 is a multiple of 16, > 0.
TEXT ·axpy2W(SB), NOSPLIT, $0-72
	MOVD o0+0(FP), R0
	MOVD o1+8(FP), R1
	MOVD c0+16(FP), R2
	MOVD c1+24(FP), R3
	MOVD idx+32(FP), R4
	MOVD nt+40(FP), R5
	MOVD b+48(FP), R6
	MOVD ldb+56(FP), R7
	MOVD n16+64(FP), R8
	Get R7
	I64Const $2
	I64Shl
	Set R7
	Get R8
	I64Const $4
	I64ShrU
	Set R8

blocks2:
	Loop
		LOAD(R0, 0, V0)
		LOAD(R0, 16, V1)
		LOAD(R0, 32, V2)
		LOAD(R0, 48, V3)
		LOAD(R1, 0, V4)
		LOAD(R1, 16, V5)
		LOAD(R1, 32, V6)
		LOAD(R1, 48, V7)
		Get R2
		Set R11
		Get R3
		Set R12
		Get R5
		Set R10
		Get R6
		Set R9
		Get R4
		Set R13
terms2:
		Loop
			IDXROW
			SPLAT(R11, V12)
			SPLAT(R12, V13)
			ADDI(R11, 4)
			ADDI(R12, 4)
			LOAD(R9, 0, V8)
			LOAD(R9, 16, V9)
			LOAD(R9, 32, V10)
			LOAD(R9, 48, V11)
			MULADD(V12, V8, V0)
			MULADD(V12, V9, V1)
			MULADD(V12, V10, V2)
			MULADD(V12, V11, V3)
			MULADD(V13, V8, V4)
			MULADD(V13, V9, V5)
			MULADD(V13, V10, V6)
			MULADD(V13, V11, V7)
			ADDR(R9, R7)
			LOOPDEC(R10, terms2)
		End
		STORE(R0, 0, V0)
		STORE(R0, 16, V1)
		STORE(R0, 32, V2)
		STORE(R0, 48, V3)
		STORE(R1, 0, V4)
		STORE(R1, 16, V5)
		STORE(R1, 32, V6)
		STORE(R1, 48, V7)
		ADDI(R0, 64)
		ADDI(R1, 64)
		ADDI(R6, 64)
		LOOPDEC(R8, blocks2)
	End
	RET

// DOT4STEP multiplies the 4 floats of s at offset off by those of p0..p3
// (R2-R5) at offset off and adds them to the accumulators V0-V3.
#define DOT4STEP(off) \
	LOAD(R1, off, V8); \
	LOAD(R2, off, V4); \
	LOAD(R3, off, V5); \
	LOAD(R4, off, V6); \
	LOAD(R5, off, V7); \
	MULADD(V8, V4, V0); \
	MULADD(V8, V5, V1); \
	MULADD(V8, V6, V2); \
	MULADD(V8, V7, V3)

// HSUM stores (l0 + l1) + (l2 + l3) of the lanes l of v at address r.
#define HSUM(v, r) \
	Get r; I32WrapI64; \
	Get v; F32x4ExtractLane $0, $0; Get v; F32x4ExtractLane $1, $1; F32Add; \
	Get v; F32x4ExtractLane $2, $2; Get v; F32x4ExtractLane $3, $3; F32Add; \
	F32Add; F32Store $0

// func dots4W(out *float32, ostride int, s, p *float32, n int, blocks int)
//
// MatMul4's dot products of s with blocks*4 rows of p (n floats each, n a
// multiple of 4, > 0; row r at p + r*n): four at a time side by side, lane
// l of each accumulator summing s[j]*p_r[j] for j = l mod 4 in order, then
// (l0 + l1) + (l2 + l3) stored at out[r*ostride].
TEXT ·dots4W(SB), NOSPLIT, $0-48
	MOVD out+0(FP), R0
	MOVD ostride+8(FP), R10
	MOVD s+16(FP), R11
	MOVD p+24(FP), R12
	MOVD n+32(FP), R6
	MOVD blocks+40(FP), R13
	Get R10
	I64Const $2
	I64Shl
	Set R10 // out stride in bytes
	Get R6
	I64Const $2
	I64Shl
	Set R6 // row length in bytes
blocks4:
	Loop
		F32Const $0.0
		F32x4Splat
		Tee V0
		Tee V1
		Tee V2
		Set V3
		Get R11
		Set R1
		Get R12
		Tee R2
		Get R6
		I64Add
		Tee R3
		Get R6
		I64Add
		Tee R4
		Get R6
		I64Add
		Set R5
		Get R11
		Get R6
		I64Add
		Set R7 // end of s
		Get R6
		I64Const $31
		I64And
		I64Eqz
		I32Eqz
		If
			// n mod 8 == 4: one step of 4 first.
			DOT4STEP(0)
			ADDI(R1, 16)
			ADDI(R2, 16)
			ADDI(R3, 16)
			ADDI(R4, 16)
			ADDI(R5, 16)
		End
		Block
		dots8:
		Loop
			Get R1
			Get R7
			I64GeU
			BrIf $1
			DOT4STEP(0)
			DOT4STEP(16)
			ADDI(R1, 32)
			ADDI(R2, 32)
			ADDI(R3, 32)
			ADDI(R4, 32)
			ADDI(R5, 32)
			Br dots8
		End
		End
		HSUM(V0, R0)
		ADDR(R0, R10)
		HSUM(V1, R0)
		ADDR(R0, R10)
		HSUM(V2, R0)
		ADDR(R0, R10)
		HSUM(V3, R0)
		ADDR(R0, R10)
		// The next block of p starts four rows on.
		Get R12
		Get R6
		I64Const $2
		I64Shl
		I64Add
		Set R12
		LOOPDEC(R13, blocks4)
	End
	RET

// func pack4W(wt *float32, w *float32, ld int, d int, os int)
//
// Packs 4 rows of w (row stride ld floats) of d columns transposed:
// wt[os*c+r] = w[r*ld+c], one v128 store per column. d > 0.
TEXT ·pack4W(SB), NOSPLIT, $0-40
	MOVD wt+0(FP), R0
	MOVD w+8(FP), R1
	MOVD ld+16(FP), R2
	MOVD d+24(FP), R3
	MOVD os+32(FP), R7
	Get R7
	I64Const $2
	I64Shl
	Set R7 // column stride of wt in bytes
	Get R2
	I64Const $2
	I64Shl
	Set R2 // row stride of w in bytes
	Get R1
	Get R2
	I64Add
	Set R4 // row 1
	Get R4
	Get R2
	I64Add
	Set R5 // row 2
	Get R5
	Get R2
	I64Add
	Set R6 // row 3

cols:
	Loop
		Get R0
		I32WrapI64
		Get R1
		I32WrapI64
		F32Load $0
		F32x4Splat
		Get R4
		I32WrapI64
		F32Load $0
		F32x4ReplaceLane $1, $1
		Get R5
		I32WrapI64
		F32Load $0
		F32x4ReplaceLane $2, $2
		Get R6
		I32WrapI64
		F32Load $0
		F32x4ReplaceLane $3, $3
		V128Store $0
		ADDR(R0, R7)
		ADDI(R1, 4)
		ADDI(R4, 4)
		ADDI(R5, 4)
		ADDI(R6, 4)
		LOOPDEC(R3, cols)
	End
	RET

// DLOAD sets v to the 2 float64s at address r plus off.
#define DLOAD(r, off, v) Get r; I32WrapI64; V128Load $off; Set v

// WSUM sets s = a*x + s, x the 2 float32s at address r plus off widened to
// float64 (loaded as an i64 and splat: the assembler writes no memory
// operand for v128.load64_zero).
#define WSUM(r, off, a, s) Get r; I32WrapI64; I64Load $off; I64x2Splat; F64x2PromoteLowF32x4; Get a; F64x2Mul; Get s; F64x2Add; Set s

// WROW sets R8 to row idx[t] of x (R5 + idx[t]*R6, idx[t] read at R10) and
// V12 to w[t] in both lanes (w[t] at R9).
#define WROW \
	Get R10; I32WrapI64; I64Load32S $0; Get R6; I64Mul; Get R5; I64Add; Set R8; \
	Get R9; I32WrapI64; F64Load $0; F64x2Splat; Set V12

// WNEXT moves w (R9) and idx (R10) on by one row.
#define WNEXT ADDI(R9, 8); ADDI(R10, 4)

// func widenW(dst *float64, n4 int, w *float64, idx *int32, nt int, x *float32, ld int)
//
// AxpyWidenRows over the first n4 columns of dst (a multiple of 4, > 0):
// dst[c] += w[t]*float64(x[idx[t]*ld+c]) for t < nt (> 0) in turn, in
// strips of 16, then 4 columns whose float64 sums stay in registers over
// all the rows (f64x2.promote_low_f32x4 of two float32s at a time, then the
// product and the sum, each rounded as the Go loop rounds it).
TEXT ·widenW(SB), NOSPLIT, $0-56
	MOVD dst+0(FP), R0
	MOVD n4+8(FP), R1
	MOVD w+16(FP), R2
	MOVD idx+24(FP), R3
	MOVD nt+32(FP), R4
	MOVD x+40(FP), R5
	MOVD ld+48(FP), R6
	Get R6
	I64Const $2
	I64Shl
	Set R6 // row stride of x in bytes

	Block
wide16:
	Loop
		Get R1
		I64Const $16
		I64LtS
		BrIf $1
		DLOAD(R0, 0, V0)
		DLOAD(R0, 16, V1)
		DLOAD(R0, 32, V2)
		DLOAD(R0, 48, V3)
		DLOAD(R0, 64, V4)
		DLOAD(R0, 80, V5)
		DLOAD(R0, 96, V6)
		DLOAD(R0, 112, V7)
		Get R2
		Set R9
		Get R3
		Set R10
		Get R4
		Set R11
rows16:
		Loop
			WROW
			WSUM(R8, 0, V12, V0)
			WSUM(R8, 8, V12, V1)
			WSUM(R8, 16, V12, V2)
			WSUM(R8, 24, V12, V3)
			WSUM(R8, 32, V12, V4)
			WSUM(R8, 40, V12, V5)
			WSUM(R8, 48, V12, V6)
			WSUM(R8, 56, V12, V7)
			WNEXT
			LOOPDEC(R11, rows16)
		End
		STORE(R0, 0, V0)
		STORE(R0, 16, V1)
		STORE(R0, 32, V2)
		STORE(R0, 48, V3)
		STORE(R0, 64, V4)
		STORE(R0, 80, V5)
		STORE(R0, 96, V6)
		STORE(R0, 112, V7)
		ADDI(R0, 128)
		ADDI(R5, 64)
		Get R1
		I64Const $16
		I64Sub
		Set R1
		Br wide16
	End
	End

	Block
wide4:
	Loop
		Get R1
		I64Eqz
		BrIf $1
		DLOAD(R0, 0, V0)
		DLOAD(R0, 16, V1)
		Get R2
		Set R9
		Get R3
		Set R10
		Get R4
		Set R11
rows4:
		Loop
			WROW
			WSUM(R8, 0, V12, V0)
			WSUM(R8, 8, V12, V1)
			WNEXT
			LOOPDEC(R11, rows4)
		End
		STORE(R0, 0, V0)
		STORE(R0, 16, V1)
		ADDI(R0, 32)
		ADDI(R5, 16)
		Get R1
		I64Const $4
		I64Sub
		Set R1
		Br wide4
	End
	End
	RET

// KV pushes the constant vector i of expW's table (at R5).
#define KV(i) Get R5; I32WrapI64; V128Load $(16*i)

// func expW(dst, src *float32, n4 int, mx float32, sum *float32, k *[14][4]float32) int
//
// expT4 in SIMD128 by hand: dst[j] = Exp32(src[j]-mx), four at a time for
// j < n4 (a multiple of 4) while all four arguments are in [expFastMin,
// expFastMax], the operations of expFast in its order, one element per
// lane; with sum != nil each result is also added to *sum in index order
// (expShiftT4). k holds the constants, each in four lanes: expFastMin,
// expFastMax, log2e, magic, ln2Hi, ln2Lo, the polynomial's c0..c5, 1 and
// the bits of magic less 127. It returns the count done.
TEXT ·expW(SB), NOSPLIT, $0-56
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n4+16(FP), R2
	F32Load mx+24(FP)
	F32x4Splat
	Set V15
	MOVD sum+32(FP), R3
	MOVD k+40(FP), R5
	KV(0)
	Set V14 // expFastMin
	KV(1)
	Set V13 // expFastMax
	KV(2)
	Set V12 // log2e
	KV(3)
	Set V11 // magic
	KV(4)
	Set V10 // ln2Hi
	KV(5)
	Set V9 // ln2Lo
	KV(12)
	Set V8 // 1
	KV(13)
	Set V7 // bits of magic - 127
	I64Const $0
	Set R4 // done
	Get R3
	I64Eqz
	I32Eqz
	If
		Get R3
		I32WrapI64
		F32Load $0
		Set F0 // the sum
	End

	Block
exps:
	Loop
		Get R2
		I64Eqz
		BrIf $1
		// a = src - mx, all four in the fast range
		Get R1
		I32WrapI64
		V128Load $0
		Get V15
		F32x4Sub
		Set V0
		Get V0
		Get V14
		F32x4Ge
		Get V0
		Get V13
		F32x4Le
		V128And
		I32x4AllTrue
		I32Eqz
		BrIf $1
		// t = a*log2e + magic, nf = t - magic
		Get V0
		Get V12
		F32x4Mul
		Get V11
		F32x4Add
		Tee V1
		Get V11
		F32x4Sub
		Set V2
		// r = (a - nf*ln2Hi) - nf*ln2Lo
		Get V0
		Get V2
		Get V10
		F32x4Mul
		F32x4Sub
		Get V2
		Get V9
		F32x4Mul
		F32x4Sub
		Set V3
		// p = ((((c0*r + c1)*r + c2)*r + c3)*r + c4)*r + c5
		KV(6)
		Get V3
		F32x4Mul
		KV(7)
		F32x4Add
		Get V3
		F32x4Mul
		KV(8)
		F32x4Add
		Get V3
		F32x4Mul
		KV(9)
		F32x4Add
		Get V3
		F32x4Mul
		KV(10)
		F32x4Add
		Get V3
		F32x4Mul
		KV(11)
		F32x4Add
		// y = (p*(r*r) + r) + 1, e = y * 2^n
		Get V3
		Get V3
		F32x4Mul
		F32x4Mul
		Get V3
		F32x4Add
		Get V8
		F32x4Add
		Get V1
		Get V7
		I32x4Sub
		I32Const $23
		I32x4Shl
		F32x4Mul
		Set V4
		Get R0
		I32WrapI64
		Get V4
		V128Store $0
		Get R3
		I64Eqz
		I32Eqz
		If
			Get F0
			Get V4
			F32x4ExtractLane $0, $0
			F32Add
			Get V4
			F32x4ExtractLane $1, $1
			F32Add
			Get V4
			F32x4ExtractLane $2, $2
			F32Add
			Get V4
			F32x4ExtractLane $3, $3
			F32Add
			Set F0
		End
		ADDI(R0, 16)
		ADDI(R1, 16)
		ADDI(R4, 4)
		Get R2
		I64Const $4
		I64Sub
		Set R2
		Br exps
	End
	End

	Get R3
	I64Eqz
	I32Eqz
	If
		Get R3
		I32WrapI64
		Get F0
		F32Store $0
	End
	MOVD R4, ret+48(FP)
	RET

// XK pushes the constant vector i of xlogxW's table (at R5).
#define XK(i) Get R5; I32WrapI64; V128Load $(16*i)

// func xlogxW(dst, src, div *float32, n4 int, k *[19][4]float32) int
//
// xlogxT4 in SIMD128 by hand: dst[j] = xlogx(x), x = src[j] (or with div
// != nil x = src[j]/div[j] and dst[j] -= xlogx(x)), four at a time for j <
// n4 (a multiple of 4) while all four x are normal, positive and finite:
// the operations of xlogxGo's fast branch in its order, one element per
// lane. k holds the constants, each in four lanes: minNorm, MaxFloat32,
// the bits 0x007fffff, 0x3f800000 and 127, sqrt2, 0.5, 1, the
// polynomial's c0..c8, ln2Hi, ln2Lo. It returns the count done.
TEXT ·xlogxW(SB), NOSPLIT, $0-48
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD div+16(FP), R2
	MOVD n4+24(FP), R3
	MOVD k+32(FP), R5
	I64Const $0
	Set R4 // done

	Block
xs:
	Loop
		Get R3
		I64Eqz
		BrIf $1
		LOAD(R1, 0, V0)
		Get R2
		I64Eqz
		I32Eqz
		If
			Get V0
			Get R2
			I32WrapI64
			V128Load $0
			F32x4Div
			Set V0
		End
		// all four in [minNorm, MaxFloat32]
		Get V0
		XK(0)
		F32x4Ge
		Get V0
		XK(1)
		F32x4Le
		V128And
		I32x4AllTrue
		I32Eqz
		BrIf $1
		// e = (bits >> 23) - 127, m = bits&0x007fffff | 0x3f800000
		Get V0
		I32Const $23
		I32x4ShrU
		XK(4)
		I32x4Sub
		Set V1
		Get V0
		XK(2)
		V128And
		XK(3)
		V128Or
		Tee V2
		// big = m > sqrt2: m = m*0.5 and e = e+1 there
		XK(5)
		F32x4Gt
		Set V3
		Get V2
		XK(6)
		F32x4Mul
		Get V2
		Get V3
		V128Bitselect
		Set V2
		Get V1
		Get V3
		I32x4Sub
		Set V1
		// f = m - 1, z = f*f
		Get V2
		XK(7)
		F32x4Sub
		Tee V4
		Get V4
		F32x4Mul
		Set V5
		// p = c0*f - c1, then *f + c2, - c3, + c4, - c5, + c6, - c7, + c8
		XK(8)
		Get V4
		F32x4Mul
		XK(9)
		F32x4Sub
		Get V4
		F32x4Mul
		XK(10)
		F32x4Add
		Get V4
		F32x4Mul
		XK(11)
		F32x4Sub
		Get V4
		F32x4Mul
		XK(12)
		F32x4Add
		Get V4
		F32x4Mul
		XK(13)
		F32x4Sub
		Get V4
		F32x4Mul
		XK(14)
		F32x4Add
		Get V4
		F32x4Mul
		XK(15)
		F32x4Sub
		Get V4
		F32x4Mul
		XK(16)
		F32x4Add
		// y = (p*f)*z + ef*ln2Lo - 0.5*z
		Get V4
		F32x4Mul
		Get V5
		F32x4Mul
		Get V1
		F32x4ConvertI32x4S
		Tee V7
		XK(18)
		F32x4Mul
		F32x4Add
		XK(6)
		Get V5
		F32x4Mul
		F32x4Sub
		Set V6
		// h = x * ((f + y) + ef*ln2Hi)
		Get V0
		Get V4
		Get V6
		F32x4Add
		Get V7
		XK(17)
		F32x4Mul
		F32x4Add
		F32x4Mul
		Set V8
		Get R2
		I64Eqz
		I32Eqz
		If
			LOAD(R0, 0, V9)
			Get V9
			Get V8
			F32x4Sub
			Set V8
			ADDI(R2, 16)
		End
		STORE(R0, 0, V8)
		ADDI(R0, 16)
		ADDI(R1, 16)
		ADDI(R4, 4)
		Get R3
		I64Const $4
		I64Sub
		Set R3
		Br xs
	End
	End
	MOVD R4, ret+40(FP)
	RET
