package quant

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/haeols/haeols/core/kernel"
)

// Dot returns the dot product of the row of len(x) elements of type t held
// in row with x, computed block by block: each block is decoded into a
// buffer on the stack (256 elements at most) and its dot product with the
// matching part of x (kernel.Dot, in index order) is added to the sum in
// block order. No more than one block is ever expanded to float32.
//
// It panics if t is not supported or row does not hold exactly len(x)
// elements; readers check both when they open a file.
func Dot(t Type, row []byte, x []float32) float32 {
	mustRow(t, len(row), len(x))
	var buf [QKK]float32
	bs, bb := t.BlockSize(), t.BlockBytes()
	chunk := bs
	if bs == 1 { // float types: 256 elements at a time
		chunk = QKK
	}
	var s float32
	for len(x) > 0 {
		n := min(chunk, len(x))
		nb := n / bs * bb
		dequantRow(t, buf[:n], row[:nb])
		s += kernel.Dot(buf[:n], x[:n])
		x, row = x[n:], row[nb:]
	}
	return s
}

// MatVec sets dst[r] = Dot(t, row r of w, x) for the rows x cols matrix w
// of type t stored row after row (each row t.RowBytes(cols) bytes), and
// x of cols elements: MatMul's panels of decoded rows with one vector
// (kernel.BlockDots, a lane per row), the same bits. Large matrices are
// split by rows over GOMAXPROCS goroutines (each row computed by one, so
// the bits do not depend on the number of cores). It panics on sizes that
// do not match.
func MatVec(t Type, dst []float32, w []byte, rows, cols int, x []float32) {
	rb := mustRow(t, -1, cols)
	if len(dst) < rows || len(x) < cols || rows < 0 || len(w) != rows*rb {
		panic(fmt.Sprintf("quant: MatVec %s %dx%d: %d bytes of weights (want %d), dst %d, x %d",
			t, rows, cols, len(w), rows*rb, len(dst), len(x)))
	}
	if rows == 0 {
		return
	}
	x = x[:cols]
	chunk := t.BlockSize()
	if chunk == 1 { // float types: Dot's chunks of 256 elements
		chunk = QKK
	}
	run := func(r0, r1 int) { matMulRows(t, dst, w, rows, cols, x, 1, chunk, r0, r1) }
	workers := min(runtime.GOMAXPROCS(0), rows/64)
	if int64(rows)*int64(cols) < 1<<18 || workers <= 1 {
		run(0, rows)
		return
	}
	var wg sync.WaitGroup
	per := (rows + workers - 1) / workers
	per = (per + panelRows - 1) / panelRows * panelRows
	for r0 := 0; r0 < rows; r0 += per {
		wg.Add(1)
		go func(r0, r1 int) {
			defer wg.Done()
			run(r0, r1)
		}(r0, min(r0+per, rows))
	}
	wg.Wait()
}

// mustRow panics unless t is supported, n is a whole number of its blocks
// and, when have >= 0, have is the row's size. It returns the row's size.
func mustRow(t Type, have, n int) int {
	rb, err := t.RowBytes(n)
	if err != nil {
		panic(err.Error())
	}
	if have >= 0 && have != rb {
		panic(fmt.Sprintf("quant: %d elements of %s take %d bytes, have %d", n, t, rb, have))
	}
	return rb
}

// scaleOffsets are the byte offsets of the float16 scales in a block of
// each quantized type.
var scaleOffsets = map[Type][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
}

// CheckFinite returns an error naming the first element (float types) or
// block scale (quantized types) of src that is infinite or NaN. A
// quantized element is a small integer times finite scales, so finite
// scales make every element finite. src must be a whole number of blocks
// of a supported type.
func CheckFinite(t Type, src []byte) error {
	if err := t.Check(); err != nil {
		return err
	}
	bb := t.BlockBytes()
	if len(src)%bb != 0 {
		return fmt.Errorf("quant: %d bytes are not a whole number of %d-byte %s blocks", len(src), bb, t)
	}
	bad := func(v float32) bool { return v != v || math.IsInf(float64(v), 0) }
	switch t {
	case F32:
		for i := 0; i < len(src); i += 4 {
			if v := math.Float32frombits(binary.LittleEndian.Uint32(src[i:])); bad(v) {
				return fmt.Errorf("quant: element %d is %v", i/4, v)
			}
		}
		return nil
	case F16, BF16:
		// Both formats are infinite or NaN exactly when the exponent bits
		// are all ones.
		exp := uint16(0x7c00)
		if t == BF16 {
			exp = 0x7f80
		}
		for i := 0; i < len(src); i += 2 {
			if binary.LittleEndian.Uint16(src[i:])&exp == exp {
				return fmt.Errorf("quant: element %d is not finite (bits %#04x)", i/2, binary.LittleEndian.Uint16(src[i:]))
			}
		}
		return nil
	}
	for blk := 0; blk*bb < len(src); blk++ {
		for _, o := range scaleOffsets[t] {
			if v := f16(src[blk*bb+o:]); bad(v) {
				return fmt.Errorf("quant: %s block %d has scale %v", t, blk, v)
			}
		}
	}
	return nil
}
