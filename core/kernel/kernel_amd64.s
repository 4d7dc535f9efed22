//go:build amd64 && !purego

#include "textflag.h"

// SSE2 kernels. Each vector lane runs the same sequence of float32 roundings
// as the portable Go code (MULPS then ADDPS, no FMA, no reassociation), so the
// results are bit-identical to it. See block.go for the Go side. They run
// where the archsimd kernels do not: builds without GOEXPERIMENT=simd and
// CPUs without AVX2.
//
// What they buy over the portable Go loops (build tag purego), both built
// without GOEXPERIMENT=simd, fastest of three alternate runs on a 2-core
// x86 machine: logitsQt4 BenchmarkLogits/m=128 0.85 against 2.13 ms
// (2.5x); axpyRows BenchmarkMatMul/m=128 0.88 against 4.12 ms (4.7x);
// expShiftSSE BenchmarkSoftmaxRows/m=128 0.43 against 1.20 ms (2.8x);
// xlogxSSE BenchmarkRowEntropy/m=128 0.37 against 1.71 ms (4.6x) and
// BenchmarkKeyEntropy/m=128 0.64 against 2.11 ms (3.3x). Measured with
// `go test -c` of core/kernel with and without -tags purego, then
// -test.bench BENCH -test.benchtime 300x. axpyWidenSSE (HAE-OLS's
// float64 summaries) is not measured alone.

// func logitsQt4(dst *float32, ldd, rows int, qt, k *float32, nb, d int, scale float32)
//
// Lanes are the 4 query rows. For each block of 4 keys, X0..X3 accumulate
// keys 0..3 over c; then they are scaled, transposed to rows and stored.
TEXT ·logitsQt4(SB), NOSPLIT, $0-60
	MOVQ   dst+0(FP), DI
	MOVQ   ldd+8(FP), R8
	SHLQ   $2, R8             // dst row stride in bytes
	MOVQ   rows+16(FP), R9
	MOVQ   qt+24(FP), SI
	MOVQ   k+32(FP), DX
	MOVQ   nb+40(FP), CX
	MOVQ   d+48(FP), R10
	SHLQ   $2, R10            // key row stride in bytes
	MOVSS  scale+56(FP), X6
	SHUFPS $0x00, X6, X6
	TESTQ  CX, CX
	JEQ    ldone

lblock:
	LEAQ  (DX)(R10*1), R12
	LEAQ  (R12)(R10*1), R13
	LEAQ  (R13)(R10*1), AX
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORQ  R11, R11            // byte offset of c in a key row
	TESTQ R10, R10
	JEQ   lreduce

linner:
	MOVUPS (SI)(R11*4), X4    // qt[4c .. 4c+3]
	MOVSS  (DX)(R11*1), X5
	SHUFPS $0x00, X5, X5
	MULPS  X4, X5
	ADDPS  X5, X0
	MOVSS  (R12)(R11*1), X7
	SHUFPS $0x00, X7, X7
	MULPS  X4, X7
	ADDPS  X7, X1
	MOVSS  (R13)(R11*1), X8
	SHUFPS $0x00, X8, X8
	MULPS  X4, X8
	ADDPS  X8, X2
	MOVSS  (AX)(R11*1), X9
	SHUFPS $0x00, X9, X9
	MULPS  X4, X9
	ADDPS  X9, X3
	ADDQ   $4, R11
	CMPQ   R11, R10
	JLT    linner

lreduce:
	MULPS    X6, X0
	MULPS    X6, X1
	MULPS    X6, X2
	MULPS    X6, X3
	// Transpose: Xk holds key k for rows 0..3; build row vectors.
	MOVAPS   X0, X10
	UNPCKLPS X1, X10          // k0r0 k1r0 k0r1 k1r1
	UNPCKHPS X1, X0           // k0r2 k1r2 k0r3 k1r3
	MOVAPS   X2, X11
	UNPCKLPS X3, X11          // k2r0 k3r0 k2r1 k3r1
	UNPCKHPS X3, X2           // k2r2 k3r2 k2r3 k3r3
	MOVAPS   X10, X12
	MOVLHPS  X11, X12         // row 0
	MOVHLPS  X10, X11         // row 1
	MOVAPS   X0, X13
	MOVLHPS  X2, X13          // row 2
	MOVHLPS  X0, X2           // row 3
	MOVUPS   X12, (DI)
	CMPQ     R9, $2
	JLT      lnext
	MOVUPS   X11, (DI)(R8*1)
	CMPQ     R9, $3
	JLT      lnext
	MOVUPS   X13, (DI)(R8*2)
	CMPQ     R9, $4
	JLT      lnext
	LEAQ     (DI)(R8*2), BX
	MOVUPS   X2, (BX)(R8*1)

lnext:
	ADDQ $16, DI
	LEAQ (AX)(R10*1), DX      // first key of the next block
	DECQ CX
	JNZ  lblock

ldone:
	RET

// func axpyRows(o *float32, cols int, coef *float32, nt int, idx *int32, b *float32, ldb int)
//
// Lanes are output columns. Columns go in chunks of 32, then 16, then 4; a
// chunk's accumulators stay in registers over all t.
TEXT ·axpyRows(SB), NOSPLIT, $0-56
	MOVQ o+0(FP), DI
	MOVQ cols+8(FP), BX
	SHLQ $2, BX               // bytes
	MOVQ coef+16(FP), SI
	MOVQ nt+24(FP), CX
	MOVQ idx+32(FP), R8
	MOVQ b+40(FP), DX
	MOVQ ldb+48(FP), R10
	SHLQ $2, R10              // b row stride in bytes
	XORQ R11, R11             // byte offset of the current column chunk
	TESTQ CX, CX
	JEQ  adone

a32:
	LEAQ   128(R11), AX
	CMPQ   AX, BX
	JGT    a16
	MOVUPS 0(DI)(R11*1), X0
	MOVUPS 16(DI)(R11*1), X1
	MOVUPS 32(DI)(R11*1), X2
	MOVUPS 48(DI)(R11*1), X3
	MOVUPS 64(DI)(R11*1), X4
	MOVUPS 80(DI)(R11*1), X5
	MOVUPS 96(DI)(R11*1), X6
	MOVUPS 112(DI)(R11*1), X7
	XORQ   R12, R12

a32t:
	MOVQ     R12, R13
	TESTQ    R8, R8
	JEQ      a32row
	MOVLQSX  (R8)(R12*4), R13

a32row:
	IMULQ  R10, R13
	ADDQ   DX, R13
	ADDQ   R11, R13           // &b[j*ldb + chunk]
	MOVSS  (SI)(R12*4), X8
	SHUFPS $0x00, X8, X8
	MOVUPS 0(R13), X9
	MULPS  X8, X9
	ADDPS  X9, X0
	MOVUPS 16(R13), X10
	MULPS  X8, X10
	ADDPS  X10, X1
	MOVUPS 32(R13), X11
	MULPS  X8, X11
	ADDPS  X11, X2
	MOVUPS 48(R13), X12
	MULPS  X8, X12
	ADDPS  X12, X3
	MOVUPS 64(R13), X9
	MULPS  X8, X9
	ADDPS  X9, X4
	MOVUPS 80(R13), X10
	MULPS  X8, X10
	ADDPS  X10, X5
	MOVUPS 96(R13), X11
	MULPS  X8, X11
	ADDPS  X11, X6
	MOVUPS 112(R13), X12
	MULPS  X8, X12
	ADDPS  X12, X7
	INCQ   R12
	CMPQ   R12, CX
	JLT    a32t
	MOVUPS X0, 0(DI)(R11*1)
	MOVUPS X1, 16(DI)(R11*1)
	MOVUPS X2, 32(DI)(R11*1)
	MOVUPS X3, 48(DI)(R11*1)
	MOVUPS X4, 64(DI)(R11*1)
	MOVUPS X5, 80(DI)(R11*1)
	MOVUPS X6, 96(DI)(R11*1)
	MOVUPS X7, 112(DI)(R11*1)
	MOVQ   AX, R11
	JMP    a32

a16:
	LEAQ   64(R11), AX
	CMPQ   AX, BX
	JGT    a4
	MOVUPS 0(DI)(R11*1), X0
	MOVUPS 16(DI)(R11*1), X1
	MOVUPS 32(DI)(R11*1), X2
	MOVUPS 48(DI)(R11*1), X3
	XORQ   R12, R12

a16t:
	MOVQ     R12, R13
	TESTQ    R8, R8
	JEQ      a16row
	MOVLQSX  (R8)(R12*4), R13

a16row:
	IMULQ  R10, R13
	ADDQ   DX, R13
	ADDQ   R11, R13
	MOVSS  (SI)(R12*4), X8
	SHUFPS $0x00, X8, X8
	MOVUPS 0(R13), X9
	MULPS  X8, X9
	ADDPS  X9, X0
	MOVUPS 16(R13), X10
	MULPS  X8, X10
	ADDPS  X10, X1
	MOVUPS 32(R13), X11
	MULPS  X8, X11
	ADDPS  X11, X2
	MOVUPS 48(R13), X12
	MULPS  X8, X12
	ADDPS  X12, X3
	INCQ   R12
	CMPQ   R12, CX
	JLT    a16t
	MOVUPS X0, 0(DI)(R11*1)
	MOVUPS X1, 16(DI)(R11*1)
	MOVUPS X2, 32(DI)(R11*1)
	MOVUPS X3, 48(DI)(R11*1)
	MOVQ   AX, R11

a4:
	LEAQ   16(R11), AX
	CMPQ   AX, BX
	JGT    adone
	MOVUPS 0(DI)(R11*1), X0
	XORQ   R12, R12

a4t:
	MOVQ     R12, R13
	TESTQ    R8, R8
	JEQ      a4row
	MOVLQSX  (R8)(R12*4), R13

a4row:
	IMULQ  R10, R13
	ADDQ   DX, R13
	ADDQ   R11, R13
	MOVSS  (SI)(R12*4), X8
	SHUFPS $0x00, X8, X8
	MOVUPS 0(R13), X9
	MULPS  X8, X9
	ADDPS  X9, X0
	INCQ   R12
	CMPQ   R12, CX
	JLT    a4t
	MOVUPS X0, 0(DI)(R11*1)
	MOVQ   AX, R11
	JMP    a4

adone:
	RET

// Constants of expShiftSSE and xlogxSSE, each repeated in 4 lanes: the
// float32 roundings of the constants of exp.go (generated with
// math.Float32bits), and integer masks.
DATA kc<>+0(SB)/4, $0x3fb8aa3b
DATA kc<>+4(SB)/4, $0x3fb8aa3b
DATA kc<>+8(SB)/4, $0x3fb8aa3b
DATA kc<>+12(SB)/4, $0x3fb8aa3b
DATA kc<>+16(SB)/4, $0x4b400000
DATA kc<>+20(SB)/4, $0x4b400000
DATA kc<>+24(SB)/4, $0x4b400000
DATA kc<>+28(SB)/4, $0x4b400000
DATA kc<>+32(SB)/4, $0x3f318000
DATA kc<>+36(SB)/4, $0x3f318000
DATA kc<>+40(SB)/4, $0x3f318000
DATA kc<>+44(SB)/4, $0x3f318000
DATA kc<>+48(SB)/4, $0xb95e8083
DATA kc<>+52(SB)/4, $0xb95e8083
DATA kc<>+56(SB)/4, $0xb95e8083
DATA kc<>+60(SB)/4, $0xb95e8083
DATA kc<>+64(SB)/4, $0xc2ae0000
DATA kc<>+68(SB)/4, $0xc2ae0000
DATA kc<>+72(SB)/4, $0xc2ae0000
DATA kc<>+76(SB)/4, $0xc2ae0000
DATA kc<>+80(SB)/4, $0x42ae0000
DATA kc<>+84(SB)/4, $0x42ae0000
DATA kc<>+88(SB)/4, $0x42ae0000
DATA kc<>+92(SB)/4, $0x42ae0000
DATA kc<>+96(SB)/4, $0x39506967
DATA kc<>+100(SB)/4, $0x39506967
DATA kc<>+104(SB)/4, $0x39506967
DATA kc<>+108(SB)/4, $0x39506967
DATA kc<>+112(SB)/4, $0x3ab743ce
DATA kc<>+116(SB)/4, $0x3ab743ce
DATA kc<>+120(SB)/4, $0x3ab743ce
DATA kc<>+124(SB)/4, $0x3ab743ce
DATA kc<>+128(SB)/4, $0x3c088908
DATA kc<>+132(SB)/4, $0x3c088908
DATA kc<>+136(SB)/4, $0x3c088908
DATA kc<>+140(SB)/4, $0x3c088908
DATA kc<>+144(SB)/4, $0x3d2aa9c1
DATA kc<>+148(SB)/4, $0x3d2aa9c1
DATA kc<>+152(SB)/4, $0x3d2aa9c1
DATA kc<>+156(SB)/4, $0x3d2aa9c1
DATA kc<>+160(SB)/4, $0x3e2aaaaa
DATA kc<>+164(SB)/4, $0x3e2aaaaa
DATA kc<>+168(SB)/4, $0x3e2aaaaa
DATA kc<>+172(SB)/4, $0x3e2aaaaa
DATA kc<>+176(SB)/4, $0x3f000000
DATA kc<>+180(SB)/4, $0x3f000000
DATA kc<>+184(SB)/4, $0x3f000000
DATA kc<>+188(SB)/4, $0x3f000000
DATA kc<>+192(SB)/4, $0x3f800000
DATA kc<>+196(SB)/4, $0x3f800000
DATA kc<>+200(SB)/4, $0x3f800000
DATA kc<>+204(SB)/4, $0x3f800000
DATA kc<>+208(SB)/4, $0x0000007f
DATA kc<>+212(SB)/4, $0x0000007f
DATA kc<>+216(SB)/4, $0x0000007f
DATA kc<>+220(SB)/4, $0x0000007f
DATA kc<>+224(SB)/4, $0x00800000
DATA kc<>+228(SB)/4, $0x00800000
DATA kc<>+232(SB)/4, $0x00800000
DATA kc<>+236(SB)/4, $0x00800000
DATA kc<>+240(SB)/4, $0x7f7fffff
DATA kc<>+244(SB)/4, $0x7f7fffff
DATA kc<>+248(SB)/4, $0x7f7fffff
DATA kc<>+252(SB)/4, $0x7f7fffff
DATA kc<>+256(SB)/4, $0x007fffff
DATA kc<>+260(SB)/4, $0x007fffff
DATA kc<>+264(SB)/4, $0x007fffff
DATA kc<>+268(SB)/4, $0x007fffff
DATA kc<>+272(SB)/4, $0x3fb504f3
DATA kc<>+276(SB)/4, $0x3fb504f3
DATA kc<>+280(SB)/4, $0x3fb504f3
DATA kc<>+284(SB)/4, $0x3fb504f3
DATA kc<>+288(SB)/4, $0x3f000000
DATA kc<>+292(SB)/4, $0x3f000000
DATA kc<>+296(SB)/4, $0x3f000000
DATA kc<>+300(SB)/4, $0x3f000000
DATA kc<>+304(SB)/4, $0x3d9021bb
DATA kc<>+308(SB)/4, $0x3d9021bb
DATA kc<>+312(SB)/4, $0x3d9021bb
DATA kc<>+316(SB)/4, $0x3d9021bb
DATA kc<>+320(SB)/4, $0x3debd1b8
DATA kc<>+324(SB)/4, $0x3debd1b8
DATA kc<>+328(SB)/4, $0x3debd1b8
DATA kc<>+332(SB)/4, $0x3debd1b8
DATA kc<>+336(SB)/4, $0x3def251a
DATA kc<>+340(SB)/4, $0x3def251a
DATA kc<>+344(SB)/4, $0x3def251a
DATA kc<>+348(SB)/4, $0x3def251a
DATA kc<>+352(SB)/4, $0x3dfe5d4f
DATA kc<>+356(SB)/4, $0x3dfe5d4f
DATA kc<>+360(SB)/4, $0x3dfe5d4f
DATA kc<>+364(SB)/4, $0x3dfe5d4f
DATA kc<>+368(SB)/4, $0x3e11e9bf
DATA kc<>+372(SB)/4, $0x3e11e9bf
DATA kc<>+376(SB)/4, $0x3e11e9bf
DATA kc<>+380(SB)/4, $0x3e11e9bf
DATA kc<>+384(SB)/4, $0x3e2aae50
DATA kc<>+388(SB)/4, $0x3e2aae50
DATA kc<>+392(SB)/4, $0x3e2aae50
DATA kc<>+396(SB)/4, $0x3e2aae50
DATA kc<>+400(SB)/4, $0x3e4cceac
DATA kc<>+404(SB)/4, $0x3e4cceac
DATA kc<>+408(SB)/4, $0x3e4cceac
DATA kc<>+412(SB)/4, $0x3e4cceac
DATA kc<>+416(SB)/4, $0x3e7ffffc
DATA kc<>+420(SB)/4, $0x3e7ffffc
DATA kc<>+424(SB)/4, $0x3e7ffffc
DATA kc<>+428(SB)/4, $0x3e7ffffc
DATA kc<>+432(SB)/4, $0x3eaaaaaa
DATA kc<>+436(SB)/4, $0x3eaaaaaa
DATA kc<>+440(SB)/4, $0x3eaaaaaa
DATA kc<>+444(SB)/4, $0x3eaaaaaa
GLOBL kc<>(SB), RODATA|NOPTR, $448
#define K_log2e kc<>+0(SB)
#define K_magic kc<>+16(SB)
#define K_ln2Hi kc<>+32(SB)
#define K_ln2Lo kc<>+48(SB)
#define K_expFastMin kc<>+64(SB)
#define K_expFastMax kc<>+80(SB)
#define K_e0 kc<>+96(SB)
#define K_e1 kc<>+112(SB)
#define K_e2 kc<>+128(SB)
#define K_e3 kc<>+144(SB)
#define K_e4 kc<>+160(SB)
#define K_e5 kc<>+176(SB)
#define K_one kc<>+192(SB)
#define K_i127 kc<>+208(SB)
#define K_minNorm kc<>+224(SB)
#define K_maxFloat kc<>+240(SB)
#define K_mantMask kc<>+256(SB)
#define K_sqrt2 kc<>+272(SB)
#define K_half kc<>+288(SB)
#define K_l0 kc<>+304(SB)
#define K_l1 kc<>+320(SB)
#define K_l2 kc<>+336(SB)
#define K_l3 kc<>+352(SB)
#define K_l4 kc<>+368(SB)
#define K_l5 kc<>+384(SB)
#define K_l6 kc<>+400(SB)
#define K_l7 kc<>+416(SB)
#define K_l8 kc<>+432(SB)

// func expShiftSSE(dst, src *float32, n int, mx float32, sum *float32) int
//
// Four elements at a time while all four a = src[j]-mx lie in
// [expFastMin, expFastMax]: dst[j] = expFast(a) (the operations of exp.go
// in the same order), *sum += dst[j] in order. Returns the number of
// elements done (n is a multiple of 4; it stops at the first group with an
// argument out of the fast range, or NaN).
TEXT ·expShiftSSE(SB), NOSPLIT, $0-48
	MOVQ   dst+0(FP), DI
	MOVQ   src+8(FP), SI
	MOVQ   n+16(FP), CX
	MOVSS  mx+24(FP), X8
	SHUFPS $0x00, X8, X8
	MOVQ   sum+32(FP), DX
	MOVSS  (DX), X7
	MOVUPS K_log2e, X9
	MOVUPS K_magic, X10
	MOVUPS K_ln2Hi, X11
	MOVUPS K_ln2Lo, X12
	MOVUPS K_expFastMin, X13
	MOVUPS K_expFastMax, X14
	XORQ   AX, AX

eloop:
	CMPQ     AX, CX
	JGE      edone
	MOVUPS   (SI)(AX*4), X0
	SUBPS    X8, X0           // a = x - mx
	MOVAPS   X13, X1
	CMPPS    X0, X1, $2       // expFastMin <= a (false for NaN)
	MOVAPS   X0, X2
	CMPPS    X14, X2, $2      // a <= expFastMax
	ANDPS    X2, X1
	MOVMSKPS X1, BX
	CMPQ     BX, $15
	JNE      edone
	MOVAPS   X0, X3
	MULPS    X9, X3
	ADDPS    X10, X3          // t = a*log2e + magic
	MOVAPS   X3, X4
	SUBPS    X10, X4          // nf = t - magic
	MOVAPS   X4, X5
	MULPS    X11, X5
	SUBPS    X5, X0           // r = a - nf*ln2Hi
	MULPS    X12, X4
	SUBPS    X4, X0           // r -= nf*ln2Lo
	MOVUPS   K_e0, X5
	MULPS    X0, X5
	MOVUPS   K_e1, X6
	ADDPS    X6, X5
	MULPS    X0, X5
	MOVUPS   K_e2, X6
	ADDPS    X6, X5
	MULPS    X0, X5
	MOVUPS   K_e3, X6
	ADDPS    X6, X5
	MULPS    X0, X5
	MOVUPS   K_e4, X6
	ADDPS    X6, X5
	MULPS    X0, X5
	MOVUPS   K_e5, X6
	ADDPS    X6, X5           // p
	MOVAPS   X0, X6
	MULPS    X0, X6           // r*r
	MULPS    X6, X5           // p*(r*r)
	ADDPS    X0, X5           // + r
	MOVUPS   K_one, X6
	ADDPS    X6, X5           // + 1
	PSUBL    X10, X3          // bits(t) - bits(magic) = n
	MOVUPS   K_i127, X6
	PADDL    X6, X3
	PSLLL    $23, X3          // 2**n
	MULPS    X3, X5
	MOVUPS   X5, (DI)(AX*4)
	ADDSS    X5, X7           // the sum, in order of j
	MOVAPS   X5, X6
	SHUFPS   $0x55, X6, X6
	ADDSS    X6, X7
	MOVAPS   X5, X6
	SHUFPS   $0xAA, X6, X6
	ADDSS    X6, X7
	SHUFPS   $0xFF, X5, X5
	ADDSS    X5, X7
	ADDQ     $4, AX
	JMP      eloop

edone:
	MOVSS X7, (DX)
	MOVQ  AX, ret+40(FP)
	RET

// func xlogxSSE(dst, src *float32, n int) int
//
// Four elements at a time while all four x = src[j] are normal, positive
// and finite: dst[j] = x*logBits(bits(x), 0) (the operations of exp.go in
// the same order). Returns the number of elements done (n is a multiple
// of 4).
TEXT ·xlogxSSE(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DI
	MOVQ   src+8(FP), SI
	MOVQ   n+16(FP), CX
	MOVUPS K_minNorm, X13
	MOVUPS K_maxFloat, X14
	MOVUPS K_one, X12
	MOVUPS K_sqrt2, X11
	XORQ   AX, AX

lloop:
	CMPQ     AX, CX
	JGE      ldone2
	MOVUPS   (SI)(AX*4), X0   // x
	MOVAPS   X13, X1
	CMPPS    X0, X1, $2       // minNorm <= x (false for NaN)
	MOVAPS   X0, X2
	CMPPS    X14, X2, $2      // x <= MaxFloat32
	ANDPS    X2, X1
	MOVMSKPS X1, BX
	CMPQ     BX, $15
	JNE      ldone2
	MOVAPS   X0, X1
	PSRLL    $23, X1
	MOVUPS   K_i127, X2
	PSUBL    X2, X1           // e = int32(b>>23) - 127
	MOVUPS   K_mantMask, X2
	ANDPS    X0, X2
	ORPS     X12, X2          // m = bits(b&mantMask | bits(1))
	MOVAPS   X11, X3
	CMPPS    X2, X3, $1       // mask: sqrt2 < m
	PSUBL    X3, X1           // e++ where mask (mask = -1)
	MOVUPS   K_half, X4
	MULPS    X2, X4           // m*0.5
	ANDPS    X3, X4
	ANDNPS   X2, X3
	ORPS     X4, X3           // m = mask ? m*0.5 : m
	SUBPS    X12, X3          // f = m - 1
	MOVAPS   X3, X4
	MULPS    X3, X4           // z = f*f
	MOVUPS   K_l0, X5
	MULPS    X3, X5
	MOVUPS   K_l1, X6
	SUBPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l2, X6
	ADDPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l3, X6
	SUBPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l4, X6
	ADDPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l5, X6
	SUBPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l6, X6
	ADDPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l7, X6
	SUBPS    X6, X5
	MULPS    X3, X5
	MOVUPS   K_l8, X6
	ADDPS    X6, X5           // p
	MULPS    X3, X5           // p*f
	MULPS    X4, X5           // y = (p*f)*z
	CVTPL2PS X1, X1           // ef = float32(e)
	MOVUPS   K_ln2Lo, X6
	MULPS    X1, X6
	ADDPS    X6, X5           // y += ef*ln2Lo
	MOVUPS   K_half, X6
	MULPS    X4, X6
	SUBPS    X6, X5           // y -= 0.5*z
	ADDPS    X5, X3           // f + y
	MOVUPS   K_ln2Hi, X6
	MULPS    X1, X6
	ADDPS    X6, X3           // + ef*ln2Hi
	MULPS    X0, X3           // x * ln x
	MOVUPS   X3, (DI)(AX*4)
	ADDQ     $4, AX
	JMP      lloop

ldone2:
	MOVQ AX, ret+24(FP)
	RET

// func axpyWidenSSE(dst *float64, n int, w float64, x *float32)
// dst[c] += w*float64(x[c]) for c < n (a multiple of 4): CVTPS2PD, MULPD,
// ADDPD, each rounded as the Go loop rounds it.
TEXT ·axpyWidenSSE(SB), NOSPLIT, $0-32
	MOVQ     dst+0(FP), DI
	MOVQ     n+8(FP), CX
	MOVSD    w+16(FP), X8
	UNPCKLPD X8, X8
	MOVQ     x+24(FP), SI
	SHRQ     $2, CX
	JZ       wdone
wloop:
	CVTPS2PD (SI), X0
	CVTPS2PD 8(SI), X1
	MULPD    X8, X0
	MULPD    X8, X1
	MOVUPD   (DI), X2
	MOVUPD   16(DI), X3
	ADDPD    X0, X2
	ADDPD    X1, X3
	MOVUPD   X2, (DI)
	MOVUPD   X3, 16(DI)
	ADDQ     $16, SI
	ADDQ     $32, DI
	DECQ     CX
	JNZ      wloop
wdone:
	RET
