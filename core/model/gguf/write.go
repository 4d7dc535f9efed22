package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"

	"github.com/haeols/haeols/core/model/quant"
)

// Write encodes a GGUF version 3 file to w: the metadata kv in order, then
// the tensor infos in order, then each tensor's Data at the next multiple
// of the alignment (general.alignment if kv sets it, else 32), padded with
// zeros to the alignment at the end. It sets each tensor's Offset. Values
// must be of the Go types KV lists; each tensor's Data must hold exactly
// its Size bytes.
func Write(w io.Writer, kv []KV, tensors []*Tensor) error {
	align := uint64(DefaultAlignment)
	keys := map[string]bool{}
	for _, p := range kv {
		if p.Key == "" || len(p.Key) > MaxString {
			return fmt.Errorf("gguf: write: metadata key %q: empty or too long", p.Key)
		}
		if keys[p.Key] {
			return fmt.Errorf("gguf: write: metadata key %q appears twice", p.Key)
		}
		keys[p.Key] = true
		if err := checkValue(p.Value, 0); err != nil {
			return fmt.Errorf("gguf: write: metadata %s: %w", p.Key, err)
		}
		if p.Key == KeyAlignment {
			a, ok := p.Value.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 || a > MaxAlignment {
				return fmt.Errorf("gguf: write: %s = %v (%T), want a UINT32 power of two up to %d", KeyAlignment, p.Value, p.Value, MaxAlignment)
			}
			align = uint64(a)
		}
	}
	names := map[string]bool{}
	off := uint64(0)
	for _, t := range tensors {
		if t.Name == "" || names[t.Name] {
			return fmt.Errorf("gguf: write: tensor name %q empty or repeated", t.Name)
		}
		names[t.Name] = true
		if len(t.Dims) < 1 || len(t.Dims) > MaxDims {
			return fmt.Errorf("gguf: write: tensor %s has %d dimensions, want 1 to %d", t.Name, len(t.Dims), MaxDims)
		}
		for _, d := range t.Dims {
			if d == 0 {
				return fmt.Errorf("gguf: write: tensor %s has dimensions %v", t.Name, t.Dims)
			}
		}
		if err := t.Type.Check(); err != nil {
			return fmt.Errorf("gguf: write: tensor %s: %w", t.Name, err)
		}
		if t.Dims[0]%uint64(t.Type.BlockSize()) != 0 {
			return fmt.Errorf("gguf: write: tensor %s: first dimension %d is not a multiple of the %s block size %d", t.Name, t.Dims[0], t.Type, t.Type.BlockSize())
		}
		if uint64(len(t.Data)) != t.Size() {
			return fmt.Errorf("gguf: write: tensor %s (%s %v) has %d bytes of data, want %d", t.Name, t.Type, t.Dims, len(t.Data), t.Size())
		}
		t.Offset = off
		off = pad(off+t.Size(), align)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	e := &encoder{w: bw}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kv)))
	for _, p := range kv {
		e.str(p.Key)
		t, _, _ := TypeOf(p.Value)
		e.u32(uint32(t))
		e.value(p.Value)
	}
	for _, t := range tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(t.Offset)
	}
	e.zeros(pad(e.n, align) - e.n)
	for _, t := range tensors {
		e.raw(t.Data)
		e.zeros(pad(t.Size(), align) - t.Size())
	}
	if e.err != nil {
		return fmt.Errorf("gguf: write: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gguf: write: %w", err)
	}
	return nil
}

func pad(n, align uint64) uint64 { return (n + align - 1) / align * align }

// checkValue checks that v is a value GGUF can hold within the reader's
// limits.
func checkValue(v any, depth int) error {
	t, _, ok := TypeOf(v)
	if !ok {
		return fmt.Errorf("a %T cannot be stored in GGUF", v)
	}
	switch x := v.(type) {
	case string:
		if len(x) > MaxString {
			return fmt.Errorf("string of %d bytes, more than %d", len(x), MaxString)
		}
	case []string:
		for _, s := range x {
			if len(s) > MaxString {
				return fmt.Errorf("string of %d bytes, more than %d", len(s), MaxString)
			}
		}
	case []any:
		if depth+1 > MaxDepth {
			return fmt.Errorf("arrays nested more than %d deep", MaxDepth)
		}
		for i, a := range x {
			if at, _, _ := TypeOf(a); at != TypeArray {
				return fmt.Errorf("element %d of an array of arrays is a %T", i, a)
			}
			if err := checkValue(a, depth+1); err != nil {
				return err
			}
		}
	}
	if t == TypeArray && reflect.ValueOf(v).Len() > MaxArray {
		return fmt.Errorf("array of %d elements, more than %d", reflect.ValueOf(v).Len(), MaxArray)
	}
	return nil
}

type encoder struct {
	w   *bufio.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
	e.n += uint64(len(b))
}

func (e *encoder) zeros(n uint64) {
	for ; n > 0; n-- {
		e.raw([]byte{0})
	}
}

func (e *encoder) u8(v uint8)   { e.raw([]byte{v}) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.raw(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.raw(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.raw(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// value writes v (checked by checkValue) without its type.
func (e *encoder) value(v any) {
	switch x := v.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		e.u8(b2u(x))
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	default: // an array
		_, et, _ := TypeOf(v)
		e.u32(uint32(et))
		rv := reflect.ValueOf(v)
		e.u64(uint64(rv.Len()))
		if b, ok := v.([]uint8); ok {
			e.raw(b)
			return
		}
		for i := 0; i < rv.Len(); i++ {
			e.value(rv.Index(i).Interface()) // an inner array writes its own type and length
		}
	}
}

// NewTensor quantizes the float32 values x (ggml order: dims[0] varies
// fastest) to type t as a tensor for Write.
func NewTensor(name string, t quant.Type, dims []uint64, x []float32) (*Tensor, error) {
	n := uint64(1)
	for _, d := range dims {
		n *= d
	}
	if n != uint64(len(x)) {
		return nil, fmt.Errorf("gguf: tensor %s: dimensions %v hold %d elements, have %d", name, dims, n, len(x))
	}
	if len(dims) > 0 && dims[0]%uint64(max(t.BlockSize(), 1)) != 0 {
		return nil, fmt.Errorf("gguf: tensor %s: first dimension %d is not a multiple of the %s block size %d", name, dims[0], t, t.BlockSize())
	}
	b, err := quant.Quantize(t, x)
	if err != nil {
		return nil, fmt.Errorf("gguf: tensor %s: %w", name, err)
	}
	return &Tensor{Name: name, Type: t, Dims: append([]uint64(nil), dims...), Data: b}, nil
}
