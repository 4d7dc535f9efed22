//go:build amd64 && !purego

#include "textflag.h"

// Two float64 lanes per instruction (SSE2, every amd64 CPU): MULPD then
// ADDPD, each rounded, exactly like the Go loops of kernel.go.
//
// What keeps it: a build without GOEXPERIMENT=simd against one with
// -tags purego, fastest of 3 alternate runs of `go test -bench
// '^Benchmark(NNLS|PinvSolve|Decompose)$' ./core/solve/` on a 2-core AMD
// EPYC with AVX2 (so the AVX routines below ran; the SSE2 ones are the
// fallback without AVX2 and were not timed apart): NNLS m=128 n=64 1.44x,
// m=1024 n=64 2.2x; PinvSolve m=128 1.79x, m=1024 1.53x; Decompose m=64
// 1.27x, m=1024 1.59x.

// func axpySSE(dst *float64, n int, alpha float64, x *float64)
TEXT ·axpySSE(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DI
	MOVQ   n+8(FP), CX
	MOVSD  alpha+16(FP), X8
	UNPCKLPD X8, X8
	MOVQ   x+24(FP), R8
	XORQ   SI, SI
	SHRQ   $1, CX
	JZ     axpydone
axpyloop:
	MOVUPD (R8)(SI*8), X1
	MULPD  X8, X1
	MOVUPD (DI)(SI*8), X0
	ADDPD  X1, X0
	MOVUPD X0, (DI)(SI*8)
	ADDQ   $2, SI
	DECQ   CX
	JNZ    axpyloop
axpydone:
	RET

// func axpy4SSE(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)
TEXT ·axpy4SSE(SB), NOSPLIT, $0-56
	MOVQ   dst+0(FP), DI
	MOVQ   n+8(FP), CX
	MOVQ   a+16(FP), AX
	MOVQ   x0+24(FP), R8
	MOVQ   x1+32(FP), R9
	MOVQ   x2+40(FP), R10
	MOVQ   x3+48(FP), R11
	MOVSD  0(AX), X8
	UNPCKLPD X8, X8
	MOVSD  8(AX), X9
	UNPCKLPD X9, X9
	MOVSD  16(AX), X10
	UNPCKLPD X10, X10
	MOVSD  24(AX), X11
	UNPCKLPD X11, X11
	XORQ   SI, SI
	SHRQ   $1, CX
	JZ     a4done
a4loop:
	MOVUPD (DI)(SI*8), X0
	MOVUPD (R8)(SI*8), X1
	MULPD  X8, X1
	ADDPD  X1, X0
	MOVUPD (R9)(SI*8), X2
	MULPD  X9, X2
	ADDPD  X2, X0
	MOVUPD (R10)(SI*8), X3
	MULPD  X10, X3
	ADDPD  X3, X0
	MOVUPD (R11)(SI*8), X4
	MULPD  X11, X4
	ADDPD  X4, X0
	MOVUPD X0, (DI)(SI*8)
	ADDQ   $2, SI
	DECQ   CX
	JNZ    a4loop
a4done:
	RET

// func ger4SSE(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)
TEXT ·ger4SSE(SB), NOSPLIT, $0-56
	MOVQ   s+0(FP), DI
	MOVQ   n+8(FP), CX
	MOVQ   a+16(FP), AX
	MOVQ   x0+24(FP), R8
	MOVQ   x1+32(FP), R9
	MOVQ   x2+40(FP), R10
	MOVQ   x3+48(FP), R11
	MOVSD  0(AX), X8
	UNPCKLPD X8, X8
	MOVSD  8(AX), X9
	UNPCKLPD X9, X9
	MOVSD  16(AX), X10
	UNPCKLPD X10, X10
	MOVSD  24(AX), X11
	UNPCKLPD X11, X11
	XORQ   SI, SI
	SHRQ   $1, CX
	JZ     g4done
g4loop:
	MOVUPD (DI)(SI*8), X0
	MOVAPD X0, X1
	MULPD  X8, X1
	MOVUPD (R8)(SI*8), X5
	ADDPD  X1, X5
	MOVUPD X5, (R8)(SI*8)
	MOVAPD X0, X2
	MULPD  X9, X2
	MOVUPD (R9)(SI*8), X6
	ADDPD  X2, X6
	MOVUPD X6, (R9)(SI*8)
	MOVAPD X0, X3
	MULPD  X10, X3
	MOVUPD (R10)(SI*8), X7
	ADDPD  X3, X7
	MOVUPD X7, (R10)(SI*8)
	MOVAPD X0, X4
	MULPD  X11, X4
	MOVUPD (R11)(SI*8), X12
	ADDPD  X4, X12
	MOVUPD X12, (R11)(SI*8)
	ADDQ   $2, SI
	DECQ   CX
	JNZ    g4loop
g4done:
	RET

// The same three kernels with four lanes per instruction (AVX: VMULPD then
// VADDPD, each rounded, no FMA), two more lanes for n%4 = 2. Callers check
// useAVX.

// func axpyAVX(dst *float64, n int, alpha float64, x *float64)
TEXT ·axpyAVX(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD alpha+16(FP), Y8
	MOVQ         x+24(FP), R8
	XORQ         SI, SI
	MOVQ         CX, DX
	SHRQ         $2, DX
	JZ           axpyavxtail
axpyavxloop:
	VMOVUPD      (R8)(SI*8), Y1
	VMULPD       Y8, Y1, Y1
	VMOVUPD      (DI)(SI*8), Y0
	VADDPD       Y1, Y0, Y0
	VMOVUPD      Y0, (DI)(SI*8)
	ADDQ         $4, SI
	DECQ         DX
	JNZ          axpyavxloop
axpyavxtail:
	TESTQ        $2, CX
	JZ           axpyavxdone
	VMOVUPD      (R8)(SI*8), X1
	VMULPD       X8, X1, X1
	VMOVUPD      (DI)(SI*8), X0
	VADDPD       X1, X0, X0
	VMOVUPD      X0, (DI)(SI*8)
axpyavxdone:
	VZEROUPPER
	RET

// func axpy4AVX(dst *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)
TEXT ·axpy4AVX(SB), NOSPLIT, $0-56
	MOVQ         dst+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         a+16(FP), AX
	MOVQ         x0+24(FP), R8
	MOVQ         x1+32(FP), R9
	MOVQ         x2+40(FP), R10
	MOVQ         x3+48(FP), R11
	VBROADCASTSD 0(AX), Y8
	VBROADCASTSD 8(AX), Y9
	VBROADCASTSD 16(AX), Y10
	VBROADCASTSD 24(AX), Y11
	XORQ         SI, SI
	MOVQ         CX, DX
	SHRQ         $2, DX
	JZ           a4avxtail
a4avxloop:
	VMOVUPD      (DI)(SI*8), Y0
	VMOVUPD      (R8)(SI*8), Y1
	VMULPD       Y8, Y1, Y1
	VADDPD       Y1, Y0, Y0
	VMOVUPD      (R9)(SI*8), Y2
	VMULPD       Y9, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VMOVUPD      (R10)(SI*8), Y3
	VMULPD       Y10, Y3, Y3
	VADDPD       Y3, Y0, Y0
	VMOVUPD      (R11)(SI*8), Y4
	VMULPD       Y11, Y4, Y4
	VADDPD       Y4, Y0, Y0
	VMOVUPD      Y0, (DI)(SI*8)
	ADDQ         $4, SI
	DECQ         DX
	JNZ          a4avxloop
a4avxtail:
	TESTQ        $2, CX
	JZ           a4avxdone
	VMOVUPD      (DI)(SI*8), X0
	VMOVUPD      (R8)(SI*8), X1
	VMULPD       X8, X1, X1
	VADDPD       X1, X0, X0
	VMOVUPD      (R9)(SI*8), X2
	VMULPD       X9, X2, X2
	VADDPD       X2, X0, X0
	VMOVUPD      (R10)(SI*8), X3
	VMULPD       X10, X3, X3
	VADDPD       X3, X0, X0
	VMOVUPD      (R11)(SI*8), X4
	VMULPD       X11, X4, X4
	VADDPD       X4, X0, X0
	VMOVUPD      X0, (DI)(SI*8)
a4avxdone:
	VZEROUPPER
	RET

// func ger4AVX(s *float64, n int, a *[4]float64, x0, x1, x2, x3 *float64)
TEXT ·ger4AVX(SB), NOSPLIT, $0-56
	MOVQ         s+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         a+16(FP), AX
	MOVQ         x0+24(FP), R8
	MOVQ         x1+32(FP), R9
	MOVQ         x2+40(FP), R10
	MOVQ         x3+48(FP), R11
	VBROADCASTSD 0(AX), Y8
	VBROADCASTSD 8(AX), Y9
	VBROADCASTSD 16(AX), Y10
	VBROADCASTSD 24(AX), Y11
	XORQ         SI, SI
	MOVQ         CX, DX
	SHRQ         $2, DX
	JZ           g4avxtail
g4avxloop:
	VMOVUPD      (DI)(SI*8), Y0
	VMULPD       Y8, Y0, Y1
	VADDPD       (R8)(SI*8), Y1, Y1
	VMOVUPD      Y1, (R8)(SI*8)
	VMULPD       Y9, Y0, Y2
	VADDPD       (R9)(SI*8), Y2, Y2
	VMOVUPD      Y2, (R9)(SI*8)
	VMULPD       Y10, Y0, Y3
	VADDPD       (R10)(SI*8), Y3, Y3
	VMOVUPD      Y3, (R10)(SI*8)
	VMULPD       Y11, Y0, Y4
	VADDPD       (R11)(SI*8), Y4, Y4
	VMOVUPD      Y4, (R11)(SI*8)
	ADDQ         $4, SI
	DECQ         DX
	JNZ          g4avxloop
g4avxtail:
	TESTQ        $2, CX
	JZ           g4avxdone
	VMOVUPD      (DI)(SI*8), X0
	VMULPD       X8, X0, X1
	VADDPD       (R8)(SI*8), X1, X1
	VMOVUPD      X1, (R8)(SI*8)
	VMULPD       X9, X0, X2
	VADDPD       (R9)(SI*8), X2, X2
	VMOVUPD      X2, (R9)(SI*8)
	VMULPD       X10, X0, X3
	VADDPD       (R10)(SI*8), X3, X3
	VMOVUPD      X3, (R10)(SI*8)
	VMULPD       X11, X0, X4
	VADDPD       (R11)(SI*8), X4, X4
	VMOVUPD      X4, (R11)(SI*8)
g4avxdone:
	VZEROUPPER
	RET

DATA signbit<>+0(SB)/8, $0x8000000000000000
GLOBL signbit<>(SB), RODATA|NOPTR, $8

// lanemask<>+8*(3-k): four quadwords, the first k with the sign bit set
// (a VMASKMOVPD mask of k lanes, k = 1..3).
DATA lanemask<>+0(SB)/8, $0xffffffffffffffff
DATA lanemask<>+8(SB)/8, $0xffffffffffffffff
DATA lanemask<>+16(SB)/8, $0xffffffffffffffff
DATA lanemask<>+24(SB)/8, $0
DATA lanemask<>+32(SB)/8, $0
DATA lanemask<>+40(SB)/8, $0
GLOBL lanemask<>(SB), RODATA|NOPTR, $48

// func reflectRowsAVX(head *float64, w int, v *float64, nv int, tau float64, rows *float64, stride int)
//
// reflectRows for w columns and nv >= 1 rows, in strips
// of 16 (then 8, then 4, then the last 1 to 3 with masked loads and
// stores) columns whose sums s stay in registers: s = head + v[0]*row0
// + v[1]*row1 + ... in order of the rows, head += (-tau)*s, then row r +=
// (-(tau*v[r]))*s; every product and sum rounded as in the Go loops (AVX2
// for the broadcast of a register, no FMA).
TEXT ·reflectRowsAVX(SB), NOSPLIT, $0-56
	MOVQ         head+0(FP), DI
	MOVQ         w+8(FP), CX
	MOVQ         v+16(FP), SI
	MOVQ         nv+24(FP), DX
	VBROADCASTSD tau+32(FP), Y15
	MOVQ         rows+40(FP), R8
	MOVQ         stride+48(FP), R11
	SHLQ         $3, R11
	VBROADCASTSD signbit<>(SB), Y14
	VXORPD       Y15, Y14, Y13       // -tau
	XORQ         BX, BX              // first column of the strip

rf16:
	LEAQ         16(BX), AX
	CMPQ         AX, CX
	JGT          rf8
	VMOVUPD      (DI)(BX*8), Y0
	VMOVUPD      32(DI)(BX*8), Y3
	VMOVUPD      64(DI)(BX*8), Y5
	VMOVUPD      96(DI)(BX*8), Y6
	LEAQ         (R8)(BX*8), R9
	MOVQ         R9, R12
	XORQ         R10, R10
rf16s:
	VBROADCASTSD (SI)(R10*8), Y1
	VMULPD       (R12), Y1, Y2
	VADDPD       Y2, Y0, Y0
	VMULPD       32(R12), Y1, Y4
	VADDPD       Y4, Y3, Y3
	VMULPD       64(R12), Y1, Y7
	VADDPD       Y7, Y5, Y5
	VMULPD       96(R12), Y1, Y8
	VADDPD       Y8, Y6, Y6
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf16s
	VMULPD       Y13, Y0, Y1
	VADDPD       (DI)(BX*8), Y1, Y1
	VMOVUPD      Y1, (DI)(BX*8)
	VMULPD       Y13, Y3, Y4
	VADDPD       32(DI)(BX*8), Y4, Y4
	VMOVUPD      Y4, 32(DI)(BX*8)
	VMULPD       Y13, Y5, Y7
	VADDPD       64(DI)(BX*8), Y7, Y7
	VMOVUPD      Y7, 64(DI)(BX*8)
	VMULPD       Y13, Y6, Y8
	VADDPD       96(DI)(BX*8), Y8, Y8
	VMOVUPD      Y8, 96(DI)(BX*8)
	MOVQ         R9, R12
	XORQ         R10, R10
rf16r:
	VMOVSD       (SI)(R10*8), X2
	VMULSD       X15, X2, X2
	VXORPD       X14, X2, X2
	VBROADCASTSD X2, Y2
	VMULPD       Y0, Y2, Y1
	VADDPD       (R12), Y1, Y1
	VMOVUPD      Y1, (R12)
	VMULPD       Y3, Y2, Y4
	VADDPD       32(R12), Y4, Y4
	VMOVUPD      Y4, 32(R12)
	VMULPD       Y5, Y2, Y7
	VADDPD       64(R12), Y7, Y7
	VMOVUPD      Y7, 64(R12)
	VMULPD       Y6, Y2, Y8
	VADDPD       96(R12), Y8, Y8
	VMOVUPD      Y8, 96(R12)
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf16r
	MOVQ         AX, BX
	JMP          rf16

rf8:
	LEAQ         8(BX), AX
	CMPQ         AX, CX
	JGT          rf4
	VMOVUPD      (DI)(BX*8), Y0
	VMOVUPD      32(DI)(BX*8), Y3
	LEAQ         (R8)(BX*8), R9      // &rows[0][strip]
	MOVQ         R9, R12
	XORQ         R10, R10
rf8s:
	VBROADCASTSD (SI)(R10*8), Y1
	VMULPD       (R12), Y1, Y2
	VADDPD       Y2, Y0, Y0
	VMULPD       32(R12), Y1, Y4
	VADDPD       Y4, Y3, Y3
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf8s
	VMULPD       Y13, Y0, Y1
	VADDPD       (DI)(BX*8), Y1, Y1
	VMOVUPD      Y1, (DI)(BX*8)
	VMULPD       Y13, Y3, Y4
	VADDPD       32(DI)(BX*8), Y4, Y4
	VMOVUPD      Y4, 32(DI)(BX*8)
	MOVQ         R9, R12
	XORQ         R10, R10
rf8r:
	VMOVSD       (SI)(R10*8), X2
	VMULSD       X15, X2, X2         // tau*v[r]
	VXORPD       X14, X2, X2         // -(tau*v[r])
	VBROADCASTSD X2, Y2
	VMULPD       Y0, Y2, Y1
	VADDPD       (R12), Y1, Y1
	VMOVUPD      Y1, (R12)
	VMULPD       Y3, Y2, Y4
	VADDPD       32(R12), Y4, Y4
	VMOVUPD      Y4, 32(R12)
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf8r
	MOVQ         AX, BX
	JMP          rf8

rf4:
	LEAQ         4(BX), AX
	CMPQ         AX, CX
	JGT          rf1
	VMOVUPD      (DI)(BX*8), Y0
	LEAQ         (R8)(BX*8), R9
	MOVQ         R9, R12
	XORQ         R10, R10
rf4s:
	VBROADCASTSD (SI)(R10*8), Y1
	VMULPD       (R12), Y1, Y2
	VADDPD       Y2, Y0, Y0
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf4s
	VMULPD       Y13, Y0, Y1
	VADDPD       (DI)(BX*8), Y1, Y1
	VMOVUPD      Y1, (DI)(BX*8)
	MOVQ         R9, R12
	XORQ         R10, R10
rf4r:
	VMOVSD       (SI)(R10*8), X2
	VMULSD       X15, X2, X2
	VXORPD       X14, X2, X2
	VBROADCASTSD X2, Y2
	VMULPD       Y0, Y2, Y1
	VADDPD       (R12), Y1, Y1
	VMOVUPD      Y1, (R12)
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf4r
	MOVQ         AX, BX
	JMP          rf4

	// The last w%4 columns as one strip of 4 with masked loads and
	// stores (the lanes past w are neither read nor written), each active
	// lane with the operations of the strips above.
rf1:
	MOVQ         CX, AX
	SUBQ         BX, AX              // 0..3 columns left
	JZ           rfdone
	LEAQ         lanemask<>(SB), R12
	NEGQ         AX
	VMOVUPD      24(R12)(AX*8), Y12  // lanes 0..left-1 set
	VMASKMOVPD   (DI)(BX*8), Y12, Y0
	LEAQ         (R8)(BX*8), R9
	MOVQ         R9, R12
	XORQ         R10, R10
rf1s:
	VBROADCASTSD (SI)(R10*8), Y1
	VMASKMOVPD   (R12), Y12, Y3
	VMULPD       Y3, Y1, Y2
	VADDPD       Y2, Y0, Y0
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf1s
	VMULPD       Y13, Y0, Y1
	VMASKMOVPD   (DI)(BX*8), Y12, Y3
	VADDPD       Y3, Y1, Y1
	VMASKMOVPD   Y1, Y12, (DI)(BX*8)
	MOVQ         R9, R12
	XORQ         R10, R10
rf1r:
	VMOVSD       (SI)(R10*8), X2
	VMULSD       X15, X2, X2
	VXORPD       X14, X2, X2
	VBROADCASTSD X2, Y2
	VMULPD       Y0, Y2, Y1
	VMASKMOVPD   (R12), Y12, Y3
	VADDPD       Y3, Y1, Y1
	VMASKMOVPD   Y1, Y12, (R12)
	ADDQ         R11, R12
	INCQ         R10
	CMPQ         R10, DX
	JLT          rf1r

rfdone:
	VZEROUPPER
	RET
