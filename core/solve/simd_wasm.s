//go:build goexperiment.simd && !purego

#include "textflag.h"

// The Householder reflection of reflectRows in WebAssembly SIMD128 by hand
// (reflectW): two float64 lanes per register, each lane one column with
// the Go loops' multiplies and adds in their order (a product, then its
// sum; no fused multiply-add), so it gives their bits. As with core/kernel's
// SIMD128 assembly, what it saves over compiled archsimd code is the scalar
// work around each vector operation: the Go compiler's wasm functions jump
// back to a loop head through a dispatch table and spill vectors to the Go
// stack, while these loops keep everything in WebAssembly locals.
//
// Registers: R0-R15 are i64 locals, V0-V15 v128 locals. A V128Store takes
// its address without an offset (the assembler drops a store's offset), so
// the stores add it to the address. The address macros are core/kernel's
// (simd_wasm.s there): an assembly file includes headers of its own
// package's directory only, which the build tracks.

// LOAD sets v to the 2 float64s at address r plus off.
#define LOAD(r, off, v) Get r; I32WrapI64; V128Load $off; Set v

// SPLAT sets v to the float64 at address r, in both lanes.
#define SPLAT(r, v) Get r; I32WrapI64; F64Load $0; F64x2Splat; Set v

// SUM sets s = a*x + s, x the 2 float64s at address r plus off (V13 is
// scratch).
#define SUM(r, off, a, s) LOAD(r, off, V13); Get a; Get V13; F64x2Mul; Get s; F64x2Add; Set s

// UPDATE stores x + a*s at address r plus off, x the 2 float64s there.
#define UPDATE(r, off, a, s) Get r; I32WrapI64; I32Const $off; I32Add; Get r; I32WrapI64; V128Load $off; Get a; Get s; F64x2Mul; F64x2Add; V128Store $0

// UPDATE1 stores x + a*s at address r, x the float64 there (in both lanes
// of a splat; lane 0 of the sum stored).
#define UPDATE1(r, a, s) Get r; I32WrapI64; Get r; I32WrapI64; F64Load $0; F64x2Splat; Get a; Get s; F64x2Mul; F64x2Add; F64x2ExtractLane $0, $0; F64Store $0

// ADDI adds the constant c to register r.
#define ADDI(r, c) Get r; I64Const $c; I64Add; Set r

// ADDR adds register s to register r.
#define ADDR(r, s) Get r; Get s; I64Add; Set r

// LOOPDEC decrements the counter r and branches to label unless it is 0.
#define LOOPDEC(r, label) Get r; I64Const $1; I64Sub; Tee r; I64Eqz; I32Eqz; BrIf label

// ROWS sets R8 to the strip's first row (R4), R9 to v (R2) and R10 to the
// count of rows (R3).
#define ROWS Get R4; Set R8; Get R2; Set R9; Get R3; Set R10

// COEF sets V12 to -(tau*v[r]) (v[r] at R9, tau in V15).
#define COEF Get R9; I32WrapI64; F64Load $0; F64x2Splat; Get V15; F64x2Mul; F64x2Neg; Set V12

// NEXTSTRIP moves head (R0) and the rows (R4) on by c columns (bytes
// bytes) and counts them off the columns left (R1).
#define NEXTSTRIP(c, bytes) ADDI(R0, bytes); ADDI(R4, bytes); Get R1; I64Const $c; I64Sub; Set R1

// func reflectW(head *float64, n int, v *float64, nv int, tau float64, rows *float64, stride int)
//
// reflectRows over n columns and nv >= 1 rows (row r at rows + r*stride
// float64s), in strips of 16, then 8, then 2 columns, then an odd last
// one, whose sums s stay in registers over all the rows: s = head +
// v[0]*row0 + v[1]*row1 + ... in the order of the rows, head += (-tau)*s,
// then row r += (-(tau*v[r]))*s.
TEXT ·reflectW(SB), NOSPLIT, $0-56
	MOVD head+0(FP), R0
	MOVD n+8(FP), R1
	MOVD v+16(FP), R2
	MOVD nv+24(FP), R3
	F64Load tau+32(FP)
	F64x2Splat
	Tee V15 // tau
	F64x2Neg
	Set V14 // -tau
	MOVD rows+40(FP), R4
	MOVD stride+48(FP), R5
	Get R5
	I64Const $3
	I64Shl
	Set R5 // row stride in bytes

	Block
strip16:
	Loop
		Get R1
		I64Const $16
		I64LtS
		BrIf $1
		LOAD(R0, 0, V0)
		LOAD(R0, 16, V1)
		LOAD(R0, 32, V2)
		LOAD(R0, 48, V3)
		LOAD(R0, 64, V4)
		LOAD(R0, 80, V5)
		LOAD(R0, 96, V6)
		LOAD(R0, 112, V7)
		ROWS
sum16:
		Loop
			SPLAT(R9, V12)
			SUM(R8, 0, V12, V0)
			SUM(R8, 16, V12, V1)
			SUM(R8, 32, V12, V2)
			SUM(R8, 48, V12, V3)
			SUM(R8, 64, V12, V4)
			SUM(R8, 80, V12, V5)
			SUM(R8, 96, V12, V6)
			SUM(R8, 112, V12, V7)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, sum16)
		End
		UPDATE(R0, 0, V14, V0)
		UPDATE(R0, 16, V14, V1)
		UPDATE(R0, 32, V14, V2)
		UPDATE(R0, 48, V14, V3)
		UPDATE(R0, 64, V14, V4)
		UPDATE(R0, 80, V14, V5)
		UPDATE(R0, 96, V14, V6)
		UPDATE(R0, 112, V14, V7)
		ROWS
upd16:
		Loop
			COEF
			UPDATE(R8, 0, V12, V0)
			UPDATE(R8, 16, V12, V1)
			UPDATE(R8, 32, V12, V2)
			UPDATE(R8, 48, V12, V3)
			UPDATE(R8, 64, V12, V4)
			UPDATE(R8, 80, V12, V5)
			UPDATE(R8, 96, V12, V6)
			UPDATE(R8, 112, V12, V7)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, upd16)
		End
		NEXTSTRIP(16, 128)
		Br strip16
	End
	End

	Get R1
	I64Const $8
	I64GeS
	If
		LOAD(R0, 0, V0)
		LOAD(R0, 16, V1)
		LOAD(R0, 32, V2)
		LOAD(R0, 48, V3)
		ROWS
sum8:
		Loop
			SPLAT(R9, V12)
			SUM(R8, 0, V12, V0)
			SUM(R8, 16, V12, V1)
			SUM(R8, 32, V12, V2)
			SUM(R8, 48, V12, V3)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, sum8)
		End
		UPDATE(R0, 0, V14, V0)
		UPDATE(R0, 16, V14, V1)
		UPDATE(R0, 32, V14, V2)
		UPDATE(R0, 48, V14, V3)
		ROWS
upd8:
		Loop
			COEF
			UPDATE(R8, 0, V12, V0)
			UPDATE(R8, 16, V12, V1)
			UPDATE(R8, 32, V12, V2)
			UPDATE(R8, 48, V12, V3)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, upd8)
		End
		NEXTSTRIP(8, 64)
	End

	Block
strip2:
	Loop
		Get R1
		I64Const $2
		I64LtS
		BrIf $1
		LOAD(R0, 0, V0)
		ROWS
sum2:
		Loop
			SPLAT(R9, V12)
			SUM(R8, 0, V12, V0)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, sum2)
		End
		UPDATE(R0, 0, V14, V0)
		ROWS
upd2:
		Loop
			COEF
			UPDATE(R8, 0, V12, V0)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, upd2)
		End
		NEXTSTRIP(2, 16)
		Br strip2
	End
	End

	// An odd last column: the same operations in both lanes of a splat,
	// lane 0 stored.
	Get R1
	I64Eqz
	I32Eqz
	If
		SPLAT(R0, V0)
		ROWS
sum1:
		Loop
			SPLAT(R9, V12)
			SPLAT(R8, V13)
			Get V12
			Get V13
			F64x2Mul
			Get V0
			F64x2Add
			Set V0
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, sum1)
		End
		UPDATE1(R0, V14, V0)
		ROWS
upd1:
		Loop
			COEF
			UPDATE1(R8, V12, V0)
			ADDR(R8, R5)
			ADDI(R9, 8)
			LOOPDEC(R10, upd1)
		End
	End
	RET

// func dotsW(dst, w, x *float64, n, rows int)
//
// Dots for rows >= 1 rows of w (n float64s each, n a positive multiple of
// 4): per row, V0 holds Dot's partial sums s0 and s1 and V1 s2 and s3 (the
// products of elements 4k, 4k+1 and 4k+2, 4k+3 added in order of k), then
// dst[r] = (s0 + s1) + (s2 + s3).
TEXT ·dotsW(SB), NOSPLIT, $0-40
	MOVD dst+0(FP), R0
	MOVD w+8(FP), R1
	MOVD x+16(FP), R2
	MOVD n+24(FP), R3
	MOVD rows+32(FP), R4
	Get R3
	I64Const $2
	I64ShrU
	Set R3 // groups of 4 per row

dotrows:
	Loop
		I64Const $0
		I64x2Splat
		Tee V0
		Set V1
		Get R2
		Set R8 // x + 4k
		Get R3
		Set R10
dotgroups:
		Loop
			LOAD(R1, 0, V2)
			LOAD(R8, 0, V3)
			Get V2
			Get V3
			F64x2Mul
			Get V0
			F64x2Add
			Set V0
			LOAD(R1, 16, V2)
			LOAD(R8, 16, V3)
			Get V2
			Get V3
			F64x2Mul
			Get V1
			F64x2Add
			Set V1
			ADDI(R1, 32)
			ADDI(R8, 32)
			LOOPDEC(R10, dotgroups)
		End
		Get R0
		I32WrapI64
		Get V0
		F64x2ExtractLane $0, $0
		Get V0
		F64x2ExtractLane $1, $1
		F64Add
		Get V1
		F64x2ExtractLane $0, $0
		Get V1
		F64x2ExtractLane $1, $1
		F64Add
		F64Add
		F64Store $0
		ADDI(R0, 8)
		LOOPDEC(R4, dotrows)
	End
	RET
