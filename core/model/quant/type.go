// Package quant holds the tensor element types of ggml (the library behind
// llama.cpp and the GGUF format): their block layouts, dequantization,
// dot products of a quantized row with a float32 vector, matrix-vector
// products straight from the blocks, and quantizers.
//
// A quantized type stores a row as a run of blocks. A block of BlockSize
// elements takes BlockBytes bytes: small integers and one or more float16
// scales. The layouts and the dequantization formulas are those of ggml's
// reference C code (ggml-common.h, ggml-quants.c); docs/CHECKPOINTS.md
// states them. Supported are F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0
// and the K-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (a Q4_K_M file mixes
// Q4_K and Q6_K). The other ggml types (Q8_1, Q8_K, the IQ and TQ types,
// MXFP4, the integer types) are known by name and refused with it.
//
// Every result is computed with float32 products explicitly rounded, no
// fused multiply-add, in a fixed order, so the same blocks give the same
// bits on every platform, the browser included.
package quant

import (
	"errors"
	"fmt"
)

// Type is a ggml tensor element type, numbered as in GGUF files
// (ggml_type, gguf-py's GGMLQuantizationType).
type Type uint32

// The ggml types. Numbers 4, 5 and 31-33 were retired by ggml.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK is the number of elements of a block of Q4_0, Q4_1, Q5_0, Q5_1 and
// Q8_0; QKK that of a K-quant super-block.
const (
	QK  = 32
	QKK = 256
)

type info struct {
	name       string
	blockSize  int // elements per block
	blockBytes int // bytes per block
	supported  bool
}

var types = map[Type]info{
	F32:     {"F32", 1, 4, true},
	F16:     {"F16", 1, 2, true},
	BF16:    {"BF16", 1, 2, true},
	Q4_0:    {"Q4_0", QK, 2 + QK/2, true},
	Q4_1:    {"Q4_1", QK, 4 + QK/2, true},
	Q5_0:    {"Q5_0", QK, 2 + 4 + QK/2, true},
	Q5_1:    {"Q5_1", QK, 4 + 4 + QK/2, true},
	Q8_0:    {"Q8_0", QK, 2 + QK, true},
	Q2_K:    {"Q2_K", QKK, QKK/16 + QKK/4 + 4, true},
	Q3_K:    {"Q3_K", QKK, QKK/8 + QKK/4 + 12 + 2, true},
	Q4_K:    {"Q4_K", QKK, 4 + 12 + QKK/2, true},
	Q5_K:    {"Q5_K", QKK, 4 + 12 + QKK/8 + QKK/2, true},
	Q6_K:    {"Q6_K", QKK, QKK/2 + QKK/4 + QKK/16 + 2, true},
	Q8_1:    {"Q8_1", 0, 0, false},
	Q8_K:    {"Q8_K", 0, 0, false},
	IQ2_XXS: {"IQ2_XXS", 0, 0, false},
	IQ2_XS:  {"IQ2_XS", 0, 0, false},
	IQ3_XXS: {"IQ3_XXS", 0, 0, false},
	IQ1_S:   {"IQ1_S", 0, 0, false},
	IQ4_NL:  {"IQ4_NL", 0, 0, false},
	IQ3_S:   {"IQ3_S", 0, 0, false},
	IQ2_S:   {"IQ2_S", 0, 0, false},
	IQ4_XS:  {"IQ4_XS", 0, 0, false},
	I8:      {"I8", 0, 0, false},
	I16:     {"I16", 0, 0, false},
	I32:     {"I32", 0, 0, false},
	I64:     {"I64", 0, 0, false},
	F64:     {"F64", 0, 0, false},
	IQ1_M:   {"IQ1_M", 0, 0, false},
	TQ1_0:   {"TQ1_0", 0, 0, false},
	TQ2_0:   {"TQ2_0", 0, 0, false},
	MXFP4:   {"MXFP4", 0, 0, false},
}

// ErrUnsupported is wrapped by every error about a type this package does
// not decode.
var ErrUnsupported = errors.New("unsupported tensor type")

// String is the ggml name of t ("Q4_K"), or "type N" for a number ggml
// does not define.
func (t Type) String() string {
	if in, ok := types[t]; ok {
		return in.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// Known reports whether t is a type ggml defines (supported or not).
func (t Type) Known() bool { _, ok := types[t]; return ok }

// Supported reports whether this package decodes t.
func (t Type) Supported() bool { return types[t].supported }

// Check returns nil if t is supported, else an error wrapping
// ErrUnsupported that names it.
func (t Type) Check() error {
	if t.Supported() {
		return nil
	}
	if t.Known() {
		return fmt.Errorf("%w %s (ggml type %d); supported: %s", ErrUnsupported, t, uint32(t), supportedList)
	}
	return fmt.Errorf("%w: ggml type %d is not defined; supported: %s", ErrUnsupported, uint32(t), supportedList)
}

const supportedList = "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K"

// BlockSize is the number of elements of one block of t (1 for the float
// types), 0 if t is not supported.
func (t Type) BlockSize() int { return types[t].blockSize }

// BlockBytes is the size in bytes of one block of t, 0 if t is not
// supported.
func (t Type) BlockBytes() int { return types[t].blockBytes }

// ParseType returns the type named name ("Q8_0"); names are those String
// gives.
func ParseType(name string) (Type, error) {
	for t, in := range types {
		if in.name == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: no ggml type is named %q", ErrUnsupported, name)
}

// RowBytes is the size in bytes of n elements of t. n must be a
// non-negative multiple of the block size and t supported.
func (t Type) RowBytes(n int) (int, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	bs := t.BlockSize()
	if n < 0 || n%bs != 0 {
		return 0, fmt.Errorf("quant: %d elements of %s: not a multiple of its block size %d", n, t, bs)
	}
	return n / bs * t.BlockBytes(), nil
}

// Bytes is the size in bytes of a tensor of t with elems elements, as an
// int64 (for sizes declared by files), or an error if elems is not a
// whole number of blocks.
func (t Type) Bytes(elems int64) (int64, error) {
	if err := t.Check(); err != nil {
		return 0, err
	}
	bs := int64(t.BlockSize())
	if elems < 0 || elems%bs != 0 {
		return 0, fmt.Errorf("quant: %d elements of %s: not a multiple of its block size %d", elems, t, bs)
	}
	return elems / bs * int64(t.BlockBytes()), nil
}
