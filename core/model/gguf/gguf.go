// Package gguf reads and writes GGUF files, the single-file model format of
// llama.cpp and ggml (versions 2 and 3, little-endian): typed metadata of
// every GGUF value type, tensor infos and the aligned tensor data.
//
// Readers validate before they allocate: every count, string length, array
// length, tensor shape, offset and size is checked against the named
// limits below and against the bytes the file really has, so a lying or
// truncated header fails with an error naming the key or tensor, and
// memory stays bounded by the file's size. Tensor types are those of
// package quant; a type it does not decode is refused with its name.
//
// The package knows the format, not models: what the metadata means for
// an architecture (llama, qwen2, ...) is the business of the packages that
// build models from it.
package gguf

import (
	"errors"
	"fmt"

	"github.com/haeols/haeols/core/model/quant"
)

// Magic is the first four bytes of a GGUF file.
const Magic = "GGUF"

// Version is the version this package writes; it reads 2 and 3 (their
// little-endian layouts are identical; version 1 had 32-bit counts).
const Version = 3

// DefaultAlignment is the alignment of tensor data when the metadata has
// no general.alignment.
const DefaultAlignment = 32

// KeyAlignment is the metadata key (UINT32) that sets the alignment.
const KeyAlignment = "general.alignment"

// Limits checked while reading, before anything they size is allocated.
const (
	// MaxTensors bounds the tensor count (a 70B model has under 1000).
	MaxTensors = 1 << 16
	// MaxKV bounds the number of metadata pairs.
	MaxKV = 1 << 16
	// MaxString bounds one string (key, value, tensor name), in bytes;
	// chat templates are the longest, tens of kilobytes.
	MaxString = 1 << 20
	// MaxArray bounds the elements of one array (a 256k-token vocabulary
	// with its merges fits).
	MaxArray = 1 << 24
	// MaxDepth bounds the nesting of arrays of arrays.
	MaxDepth = 4
	// MaxDims is the largest tensor rank (ggml's GGML_MAX_DIMS).
	MaxDims = 4
	// MaxElements bounds the elements of one tensor (2^40).
	MaxElements = 1 << 40
	// MaxAlignment bounds general.alignment.
	MaxAlignment = 1 << 16
)

// ErrFormat is wrapped by every error about a file that is not a
// well-formed GGUF file this package reads.
var ErrFormat = errors.New("not a valid GGUF file")

// ValueType is the type of a metadata value (gguf_type).
type ValueType uint32

// The GGUF value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"}

// String is the type's name in the GGUF specification ("UINT32").
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value type %d", uint32(t))
}

// size is the encoded size of a scalar of type t, 0 for strings and
// arrays (variable) and unknown types.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// KV is one metadata pair. Value holds one of the Go types listed for
// TypeOf: uint8, int8, uint16, int16, uint32, int32, float32, bool,
// string, uint64, int64, float64 for scalars; a slice of one of them for
// an array of scalars or strings; []any whose elements are themselves
// arrays for an array of arrays.
type KV struct {
	Key   string
	Value any
}

// TypeOf returns the GGUF type of a metadata value and, for arrays, the
// type of its elements. ok is false for a Go value GGUF cannot hold.
func TypeOf(v any) (t, elem ValueType, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, true
	case int8:
		return TypeInt8, 0, true
	case uint16:
		return TypeUint16, 0, true
	case int16:
		return TypeInt16, 0, true
	case uint32:
		return TypeUint32, 0, true
	case int32:
		return TypeInt32, 0, true
	case float32:
		return TypeFloat32, 0, true
	case bool:
		return TypeBool, 0, true
	case string:
		return TypeString, 0, true
	case uint64:
		return TypeUint64, 0, true
	case int64:
		return TypeInt64, 0, true
	case float64:
		return TypeFloat64, 0, true
	case []uint8:
		return TypeArray, TypeUint8, true
	case []int8:
		return TypeArray, TypeInt8, true
	case []uint16:
		return TypeArray, TypeUint16, true
	case []int16:
		return TypeArray, TypeInt16, true
	case []uint32:
		return TypeArray, TypeUint32, true
	case []int32:
		return TypeArray, TypeInt32, true
	case []float32:
		return TypeArray, TypeFloat32, true
	case []bool:
		return TypeArray, TypeBool, true
	case []string:
		return TypeArray, TypeString, true
	case []uint64:
		return TypeArray, TypeUint64, true
	case []int64:
		return TypeArray, TypeInt64, true
	case []float64:
		return TypeArray, TypeFloat64, true
	case []any:
		return TypeArray, TypeArray, true
	}
	return 0, 0, false
}

// Tensor is one tensor of a file: its name, element type, dimensions in
// ggml order (Dims[0] varies fastest: a PyTorch weight of shape [out, in]
// has Dims [in, out]) and, once the data is read, its bytes.
type Tensor struct {
	Name string
	Type quant.Type
	Dims []uint64
	// Offset is the position of the data from the start of the data
	// section, a multiple of the alignment. The writer sets it.
	Offset uint64
	// Data is the tensor's bytes (Size of them); nil after ReadHeader.
	Data []byte
}

// Elements is the product of the dimensions.
func (t *Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Size is the tensor's size in bytes (0 for a type package quant does not
// decode, which no File holds).
func (t *Tensor) Size() uint64 {
	b, err := t.Type.Bytes(int64(t.Elements()))
	if err != nil {
		return 0
	}
	return uint64(b)
}

// File is a GGUF file: its version, metadata in file order, tensor infos
// in file order and, when read, the data.
type File struct {
	Version   uint32
	Alignment int
	KV        []KV
	Tensors   []*Tensor
	// DataOffset is where the data section starts in the file.
	DataOffset int64

	kv      map[string]int
	tensors map[string]int
}

// Get returns the value of key.
func (f *File) Get(key string) (any, bool) {
	i, ok := f.kv[key]
	if !ok {
		return nil, false
	}
	return f.KV[i].Value, true
}

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return nil, false
	}
	return f.Tensors[i], true
}

func (f *File) index() error {
	f.kv = make(map[string]int, len(f.KV))
	for i, kv := range f.KV {
		if _, dup := f.kv[kv.Key]; dup {
			return fmt.Errorf("%w: metadata key %q appears twice", ErrFormat, kv.Key)
		}
		f.kv[kv.Key] = i
	}
	f.tensors = make(map[string]int, len(f.Tensors))
	for i, t := range f.Tensors {
		if _, dup := f.tensors[t.Name]; dup {
			return fmt.Errorf("%w: tensor %q appears twice", ErrFormat, t.Name)
		}
		f.tensors[t.Name] = i
	}
	return nil
}

// String returns the string value of key, or an error naming the key if
// it is absent or of another type.
func (f *File) String(key string) (string, error) {
	v, err := f.need(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", f.wrongType(key, v, "STRING")
	}
	return s, nil
}

// Uint returns the value of key as a uint64: any integer type holding a
// non-negative value.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.need(key)
	if err != nil {
		return 0, err
	}
	var i int64
	switch x := v.(type) {
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	case uint64:
		return x, nil
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	default:
		return 0, f.wrongType(key, v, "an integer")
	}
	if i < 0 {
		return 0, fmt.Errorf("gguf: metadata %s = %d, want a non-negative integer", key, i)
	}
	return uint64(i), nil
}

// Float returns the value of key as a float64: FLOAT32, FLOAT64 or an
// integer type.
func (f *File) Float(key string) (float64, error) {
	v, err := f.need(key)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	}
	u, err := f.Uint(key)
	if err != nil {
		return 0, f.wrongType(key, v, "a number")
	}
	return float64(u), nil
}

// Bool returns the BOOL value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.need(key)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, f.wrongType(key, v, "BOOL")
	}
	return b, nil
}

func (f *File) need(key string) (any, error) {
	v, ok := f.Get(key)
	if !ok {
		return nil, fmt.Errorf("gguf: metadata %s is missing", key)
	}
	return v, nil
}

func (f *File) wrongType(key string, v any, want string) error {
	t, e, _ := TypeOf(v)
	got := t.String()
	if t == TypeArray {
		got = "ARRAY of " + e.String()
	}
	return fmt.Errorf("gguf: metadata %s is %s, want %s", key, got, want)
}
