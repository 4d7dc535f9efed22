package gguf

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/internal/inputs"
)

// cursor reads little-endian values from a file of known size, refusing
// any read past its end before allocating for it.
type cursor struct {
	r    *bufio.Reader
	pos  int64
	size int64
}

func (c *cursor) left() int64 { return c.size - c.pos }

func (c *cursor) read(n int64, what string) ([]byte, error) {
	if n > c.left() {
		return nil, fmt.Errorf("%w: %s needs %d bytes at offset %d, the %d-byte file has %d (truncated?)", ErrFormat, what, n, c.pos, c.size, c.left())
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return nil, fmt.Errorf("gguf: reading %s at offset %d: %w", what, c.pos, err)
	}
	c.pos += n
	return b, nil
}

func (c *cursor) u8(what string) (uint8, error) {
	b, err := c.read(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (c *cursor) u16(what string) (uint16, error) {
	b, err := c.read(2, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (c *cursor) u32(what string) (uint32, error) {
	b, err := c.read(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (c *cursor) u64(what string) (uint64, error) {
	b, err := c.read(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (c *cursor) str(what string) (string, error) {
	n, err := c.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > MaxString {
		return "", fmt.Errorf("%w: %s is %d bytes long, more than the %d this reader accepts", ErrFormat, what, n, MaxString)
	}
	b, err := c.read(int64(n), what)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// minSize is the fewest bytes a value of type t takes.
func minSize(t ValueType) int64 {
	switch t {
	case TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return int64(t.size())
}

// value reads a value of type t for key.
func (c *cursor) value(key string, t ValueType, depth int) (any, error) {
	what := "metadata " + key
	switch t {
	case TypeUint8:
		return c.u8(what)
	case TypeInt8:
		v, err := c.u8(what)
		return int8(v), err
	case TypeUint16:
		return c.u16(what)
	case TypeInt16:
		v, err := c.u16(what)
		return int16(v), err
	case TypeUint32:
		return c.u32(what)
	case TypeInt32:
		v, err := c.u32(what)
		return int32(v), err
	case TypeFloat32:
		v, err := c.u32(what)
		return math.Float32frombits(v), err
	case TypeUint64:
		return c.u64(what)
	case TypeInt64:
		v, err := c.u64(what)
		return int64(v), err
	case TypeFloat64:
		v, err := c.u64(what)
		return math.Float64frombits(v), err
	case TypeBool:
		v, err := c.u8(what)
		if err == nil && v > 1 {
			err = fmt.Errorf("%w: %s: BOOL byte is %d, want 0 or 1", ErrFormat, what, v)
		}
		return v == 1, err
	case TypeString:
		return c.str(what)
	case TypeArray:
		return c.array(key, depth+1)
	}
	return nil, fmt.Errorf("%w: %s has unknown value type %d", ErrFormat, what, uint32(t))
}

func (c *cursor) array(key string, depth int) (any, error) {
	what := "metadata " + key
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: %s nests arrays %d deep, more than %d", ErrFormat, what, depth, MaxDepth)
	}
	et, err := c.u32(what + " array type")
	if err != nil {
		return nil, err
	}
	t := ValueType(et)
	if int(t) >= len(valueTypeNames) {
		return nil, fmt.Errorf("%w: %s is an array of unknown value type %d", ErrFormat, what, et)
	}
	n64, err := c.u64(what + " array length")
	if err != nil {
		return nil, err
	}
	if n64 > MaxArray {
		return nil, fmt.Errorf("%w: %s is an array of %d elements, more than the %d this reader accepts", ErrFormat, what, n64, MaxArray)
	}
	if need := int64(n64) * minSize(t); need > c.left() {
		return nil, fmt.Errorf("%w: %s: an array of %d %s needs at least %d bytes, the file has %d left (truncated?)", ErrFormat, what, n64, t, need, c.left())
	}
	n := int(n64)
	if sz := t.size(); sz > 0 {
		b, err := c.read(int64(n*sz), what)
		if err != nil {
			return nil, err
		}
		return decodeScalars(t, b, n, what)
	}
	if t == TypeString {
		out := make([]string, n)
		for i := range out {
			if out[i], err = c.str(fmt.Sprintf("%s[%d]", what, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	out := make([]any, n)
	for i := range out {
		if out[i], err = c.array(fmt.Sprintf("%s[%d]", key, i), depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeScalars turns n little-endian scalars of type t into a slice.
func decodeScalars(t ValueType, b []byte, n int, what string) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b, nil
	case TypeInt8:
		out := make([]int8, n)
		for i := range out {
			out[i] = int8(b[i])
		}
		return out, nil
	case TypeBool:
		out := make([]bool, n)
		for i := range out {
			if b[i] > 1 {
				return nil, fmt.Errorf("%w: %s[%d]: BOOL byte is %d, want 0 or 1", ErrFormat, what, i, b[i])
			}
			out[i] = b[i] == 1
		}
		return out, nil
	case TypeUint16:
		out := make([]uint16, n)
		for i := range out {
			out[i] = le.Uint16(b[2*i:])
		}
		return out, nil
	case TypeInt16:
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(le.Uint16(b[2*i:]))
		}
		return out, nil
	case TypeUint32:
		out := make([]uint32, n)
		for i := range out {
			out[i] = le.Uint32(b[4*i:])
		}
		return out, nil
	case TypeInt32:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(le.Uint32(b[4*i:]))
		}
		return out, nil
	case TypeFloat32:
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		return out, nil
	case TypeUint64:
		out := make([]uint64, n)
		for i := range out {
			out[i] = le.Uint64(b[8*i:])
		}
		return out, nil
	case TypeInt64:
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(le.Uint64(b[8*i:]))
		}
		return out, nil
	case TypeFloat64:
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(b[8*i:]))
		}
		return out, nil
	}
	panic("gguf: decodeScalars of " + t.String())
}

// ReadHeader reads the metadata and tensor infos of the GGUF file of size
// bytes held by r and checks every tensor's place against the file. No
// tensor data is read (Tensor.Data stays nil).
func ReadHeader(r io.ReaderAt, size int64) (*File, error) {
	c := &cursor{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10), size: size}
	magic, err := c.read(4, "magic")
	if err != nil {
		return nil, fmt.Errorf("%w: %d bytes, too short for the header", ErrFormat, size)
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w: starts with %q, not %q", ErrFormat, magic, Magic)
	}
	f := &File{Alignment: DefaultAlignment}
	if f.Version, err = c.u32("version"); err != nil {
		return nil, err
	}
	switch v := f.Version; {
	case v == 2 || v == 3:
	case v == 1:
		return nil, fmt.Errorf("%w: GGUF version 1 (32-bit counts, 2023) is not read; convert it again with a current llama.cpp", ErrFormat)
	case v&0xffff == 0 && v != 0:
		return nil, fmt.Errorf("%w: version field %#08x is a byte-swapped %d: big-endian GGUF files are not read", ErrFormat, v, v>>24)
	default:
		return nil, fmt.Errorf("%w: unsupported GGUF version %d (this reader knows 2 and 3)", ErrFormat, v)
	}
	nt, err := c.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nkv, err := c.u64("metadata count")
	if err != nil {
		return nil, err
	}
	if nt > MaxTensors {
		return nil, fmt.Errorf("%w: %d tensors, more than the %d this reader accepts", ErrFormat, nt, MaxTensors)
	}
	if nkv > MaxKV {
		return nil, fmt.Errorf("%w: %d metadata pairs, more than the %d this reader accepts", ErrFormat, nkv, MaxKV)
	}
	// Each pair takes at least 13 bytes and each tensor info 32.
	if need := int64(nkv)*13 + int64(nt)*32; need > c.left() {
		return nil, fmt.Errorf("%w: %d metadata pairs and %d tensors need at least %d bytes, the file has %d left (truncated?)", ErrFormat, nkv, nt, need, c.left())
	}
	f.KV = make([]KV, 0, nkv)
	for i := uint64(0); i < nkv; i++ {
		key, err := c.str(fmt.Sprintf("metadata key %d", i))
		if err != nil {
			return nil, err
		}
		if key == "" || !utf8.ValidString(key) {
			return nil, fmt.Errorf("%w: metadata key %d is %q: empty or not UTF-8", ErrFormat, i, key)
		}
		vt, err := c.u32("metadata " + key + " type")
		if err != nil {
			return nil, err
		}
		v, err := c.value(key, ValueType(vt), 0)
		if err != nil {
			return nil, err
		}
		f.KV = append(f.KV, KV{key, v})
	}
	if err := f.index(); err != nil {
		return nil, err
	}
	if v, ok := f.Get(KeyAlignment); ok {
		a, isU32 := v.(uint32)
		if !isU32 || a == 0 || a&(a-1) != 0 || a > MaxAlignment {
			return nil, fmt.Errorf("%w: %s = %v (%T), want a UINT32 power of two up to %d", ErrFormat, KeyAlignment, v, v, MaxAlignment)
		}
		f.Alignment = int(a)
	}
	f.Tensors = make([]*Tensor, 0, nt)
	for i := uint64(0); i < nt; i++ {
		t, err := c.tensorInfo(i, f.Alignment)
		if err != nil {
			return nil, err
		}
		f.Tensors = append(f.Tensors, t)
	}
	if err := f.index(); err != nil {
		return nil, err
	}
	a := int64(f.Alignment)
	f.DataOffset = (c.pos + a - 1) / a * a
	return f, f.checkPlaces(size)
}

func (c *cursor) tensorInfo(i uint64, align int) (*Tensor, error) {
	name, err := c.str(fmt.Sprintf("tensor %d name", i))
	if err != nil {
		return nil, err
	}
	if name == "" || !utf8.ValidString(name) {
		return nil, fmt.Errorf("%w: tensor %d has name %q: empty or not UTF-8", ErrFormat, i, name)
	}
	what := "tensor " + name
	nd, err := c.u32(what + " rank")
	if err != nil {
		return nil, err
	}
	if nd < 1 || nd > MaxDims {
		return nil, fmt.Errorf("%w: %s has %d dimensions, want 1 to %d", ErrFormat, what, nd, MaxDims)
	}
	t := &Tensor{Name: name, Dims: make([]uint64, nd)}
	n := uint64(1)
	for j := range t.Dims {
		d, err := c.u64(what + " dimension")
		if err != nil {
			return nil, err
		}
		if d == 0 || d > MaxElements || n*d > MaxElements {
			return nil, fmt.Errorf("%w: %s has dimensions %v...: dimension %d is %d (want >= 1, at most %d elements in all)", ErrFormat, what, t.Dims[:j], j, d, uint64(MaxElements))
		}
		t.Dims[j] = d
		n *= d
	}
	typ, err := c.u32(what + " type")
	if err != nil {
		return nil, err
	}
	t.Type = quant.Type(typ)
	if err := t.Type.Check(); err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", what, err)
	}
	if bs := uint64(t.Type.BlockSize()); t.Dims[0]%bs != 0 {
		return nil, fmt.Errorf("%w: %s: first dimension %d is not a multiple of the %s block size %d", ErrFormat, what, t.Dims[0], t.Type, bs)
	}
	if t.Offset, err = c.u64(what + " offset"); err != nil {
		return nil, err
	}
	if t.Offset%uint64(align) != 0 {
		return nil, fmt.Errorf("%w: %s: offset %d is not a multiple of the alignment %d", ErrFormat, what, t.Offset, align)
	}
	return t, nil
}

// checkPlaces checks that every tensor lies inside the data section of a
// file of size bytes, that no two overlap, and that at most the alignment
// padding follows the last.
func (f *File) checkPlaces(size int64) error {
	if f.DataOffset > size {
		if len(f.Tensors) == 0 && size >= f.DataOffset-int64(f.Alignment) {
			return nil // no data section, padding omitted
		}
		return fmt.Errorf("%w: the data section would start at %d, past the end of the %d-byte file (truncated?)", ErrFormat, f.DataOffset, size)
	}
	data := uint64(size - f.DataOffset)
	ts := append([]*Tensor(nil), f.Tensors...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Offset < ts[j].Offset })
	end := uint64(0)
	var prev *Tensor
	for _, t := range ts {
		sz := t.Size()
		if t.Offset > data || sz > data-t.Offset {
			return fmt.Errorf("%w: tensor %s (%s %v, %d bytes at data offset %d) runs past the end of the %d-byte data section (truncated?)", ErrFormat, t.Name, t.Type, t.Dims, sz, t.Offset, data)
		}
		if prev != nil && t.Offset < end {
			return fmt.Errorf("%w: tensor %s at data offset %d overlaps tensor %s (%d bytes at %d)", ErrFormat, t.Name, t.Offset, prev.Name, prev.Size(), prev.Offset)
		}
		end, prev = t.Offset+sz, t
	}
	if data-end >= uint64(f.Alignment) {
		return fmt.Errorf("%w: %d bytes after the last tensor's end at data offset %d (more than alignment padding)", ErrFormat, data-end, end)
	}
	return nil
}

// Decode parses the GGUF file held in data. The tensors' Data alias data.
// name (a file name) labels errors.
func Decode(name string, data []byte) (*File, error) {
	f, err := ReadHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", name, err)
	}
	for _, t := range f.Tensors {
		at := uint64(f.DataOffset) + t.Offset
		t.Data = data[at : at+t.Size() : at+t.Size()]
	}
	return f, nil
}

// Open reads the GGUF file at path: the header is read and validated
// against the file's size first, then the data section is read in one
// allocation. Only regular files are read.
func Open(path string) (*File, error) {
	fd, size, err := inputs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	defer fd.Close()
	f, err := ReadHeader(fd, size)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	n := size - f.DataOffset
	if n <= 0 {
		return f, nil
	}
	data := make([]byte, n)
	if m, err := fd.ReadAt(data, f.DataOffset); m != len(data) {
		return nil, fmt.Errorf("gguf: %s: reading the tensor data: %d of %d bytes: %w", path, m, len(data), err)
	}
	for _, t := range f.Tensors {
		t.Data = data[t.Offset : t.Offset+t.Size() : t.Offset+t.Size()]
	}
	return f, nil
}
