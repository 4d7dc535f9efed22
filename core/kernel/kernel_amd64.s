//go:build amd64 && !purego

#include "textflag.h"

// SSE2 kernels. Each vector lane runs the same sequence of float32 roundings
// as the portable Go code (MULPS then ADDPS, no FMA, no reassociation), so the
// results are bit-identical to it. See block.go for the Go side.

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
