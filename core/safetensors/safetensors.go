// Package safetensors reads and writes safetensors files: an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and [begin, end) byte offsets in the data section (plus an optional
// "__metadata__" object of strings), then the data.
//
// It is the format layer only: any tensor names, every dtype of the format
// (the numeric model layer decides which it uses). Readers check the
// header before allocating for it: its length against MaxHeader and the
// file, each shape against MaxRank and MaxElements, each tensor's byte
// count against its dtype and shape, and the offsets must tile the data
// section exactly (no overlap, no gap, nothing after). The JSON must be
// valid UTF-8 with no escaped lone surrogate and no key twice in any object
// (encoding/json would let each pass silently). ParseHeader and ReadHeader
// give the header alone, with a reader's own checks of each entry (Check):
// core/sample reads samples through them.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/haeols/haeols/internal/inputs"
)

// Limits checked before allocation.
const (
	// MaxHeader is the largest JSON header accepted, in bytes (the limit
	// of the reference implementation).
	MaxHeader = 100 << 20
	// MaxRank bounds the dimensions of a tensor.
	MaxRank = 8
	// MaxElements bounds the elements of one tensor (2^40).
	MaxElements = 1 << 40
	// MaxTensors bounds the tensors of one file.
	MaxTensors = 1 << 20
)

// KeyMetadata is the header key of the string metadata.
const KeyMetadata = "__metadata__"

// ErrFormat is wrapped by every error about a malformed file.
var ErrFormat = errors.New("not a valid safetensors file")

// Error is the error of a malformed file: the tensor or the metadata key it
// is about (when one is) and the problem. It wraps ErrFormat and Err. Its
// text reads, for example,
//
//	not a valid safetensors file: tensor k: data_offsets [0, 96] hold 96 bytes, shape [1 2 3 4] dtype F16 needs 48
type Error struct {
	Tensor string // the tensor's name, or ""
	Key    string // the __metadata__ key, or ""
	Err    error  // the problem
}

func (e *Error) Error() string {
	switch {
	case e.Tensor != "":
		return fmt.Sprintf("%v: tensor %s: %v", ErrFormat, e.Tensor, e.Err)
	case e.Key != "":
		return fmt.Sprintf("%v: %s %q: %v", ErrFormat, KeyMetadata, e.Key, e.Err)
	}
	return fmt.Sprintf("%v: %v", ErrFormat, e.Err)
}

// Unwrap returns ErrFormat and the problem.
func (e *Error) Unwrap() []error { return []error{ErrFormat, e.Err} }

// formatErr is an *Error about no tensor or key.
func formatErr(format string, a ...any) error { return &Error{Err: fmt.Errorf(format, a...)} }

// Info is a tensor's entry in the header: its name, dtype, shape and the
// [Begin, End) byte offsets of its data in the data section.
type Info struct {
	Name       string
	DType      string
	Shape      []int
	Begin, End uint64
}

// Header is a parsed header: the metadata and the tensors' entries in data
// order (their offsets tile the data section).
type Header struct {
	Metadata map[string]string
	Tensors  []Info
}

// Check is a reader's own check of a tensor's entry (the names and dtypes
// it accepts, the shapes it can use), called by ParseHeader after the
// entry's dtype and shape are parsed and before its size and offsets are
// checked; its error is returned unchanged. dtype is not yet known to be
// one of the format's, and the shape's dimensions are each at most
// MaxElements, their product not yet checked.
type Check func(name, dtype string, shape []int) error

// dtypeSizes are the element sizes of the dtypes of the format.
var dtypeSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// DTypeSize is the size in bytes of one element of dtype, 0 if the format
// has no such dtype.
func DTypeSize(dtype string) int { return dtypeSizes[dtype] }

// Tensor is one tensor: name, dtype ("F32", "BF16", ...), shape (row-major,
// last dimension fastest) and its bytes.
type Tensor struct {
	Name  string
	DType string
	Shape []int
	Data  []byte
}

// Elements is the product of the shape (1 for a scalar).
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// File is a safetensors file: its metadata and its tensors in data order.
type File struct {
	Metadata map[string]string
	Tensors  []*Tensor
	byName   map[string]*Tensor
}

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	t, ok := f.byName[name]
	return t, ok
}

// ParseHeader parses the JSON header of a file whose data section has n
// bytes: the header must be valid UTF-8 with no escaped lone surrogate and
// no key twice in any object, each entry must be well formed and within
// the limits, and the offsets must tile the data section. check, when not
// nil, is called for each tensor (see Check). Its errors are *Error but
// for check's.
func ParseHeader(header []byte, n uint64, check Check) (*Header, error) {
	if len(header) < 2 || header[0] != '{' {
		return nil, formatErr("header does not start with '{'")
	}
	if err := checkJSON(header); err != nil {
		return nil, formatErr("header: %w", err)
	}
	entries, err := parseObject(header)
	if err != nil {
		return nil, formatErr("header: %w", err)
	}
	if len(entries) > MaxTensors+1 {
		return nil, formatErr("%d tensors, more than the %d this reader accepts", len(entries), MaxTensors)
	}
	h := &Header{Metadata: map[string]string{}}
	for _, e := range entries {
		if e.key == KeyMetadata {
			if h.Metadata, err = parseMetadata(e.value); err != nil {
				return nil, err
			}
			continue
		}
		t, err := parseInfo(e.key, e.value, n, check)
		if err != nil {
			return nil, err
		}
		h.Tensors = append(h.Tensors, t)
	}
	ts := h.Tensors
	sort.SliceStable(ts, func(a, b int) bool { return ts[a].Begin < ts[b].Begin })
	end := uint64(0)
	for i, t := range ts {
		switch {
		case t.Begin < end:
			p := ts[i-1]
			return nil, &Error{Tensor: t.Name, Err: fmt.Errorf("data_offsets [%d, %d] overlap tensor %q at [%d, %d]", t.Begin, t.End, p.Name, p.Begin, p.End)}
		case t.Begin > end:
			return nil, &Error{Tensor: t.Name, Err: fmt.Errorf("data_offsets [%d, %d] leave a gap of %d bytes before them", t.Begin, t.End, t.Begin-end)}
		}
		end = t.End
	}
	if end != n {
		return nil, formatErr("%d bytes of data after the last tensor (the data section has %d bytes, the tensors end at %d)", n-end, n, end)
	}
	return h, nil
}

// ReadHeader reads and parses the header of the safetensors file of size
// bytes read from r (ParseHeader, with check), checking the header's length
// against MaxHeader and the file first. It returns the header and the
// offset of the data section in the file. Errors about the file's contents
// are *Error (but check's); an error reading r is returned wrapped.
func ReadHeader(r io.ReaderAt, size int64, check Check) (*Header, int64, error) {
	var prefix [8]byte
	n, err := r.ReadAt(prefix[:min(8, max(size, 0))], 0)
	if n < len(prefix) && size >= 8 {
		return nil, 0, fmt.Errorf("reading the header length: %w", err)
	}
	hl, err := headerLength(prefix[:n], size)
	if err != nil {
		return nil, 0, err
	}
	header := make([]byte, hl)
	if m, err := r.ReadAt(header, 8); m != len(header) {
		return nil, 0, fmt.Errorf("reading the %d-byte header: %w", hl, err)
	}
	h, err := ParseHeader(header, uint64(size)-8-hl, check)
	if err != nil {
		return nil, 0, err
	}
	return h, int64(8 + hl), nil
}

// file returns the File of a parsed header whose data section is data.
func (h *Header) file(data []byte) *File {
	f := &File{Metadata: h.Metadata, byName: map[string]*Tensor{}}
	for _, i := range h.Tensors {
		t := &Tensor{Name: i.Name, DType: i.DType, Shape: i.Shape, Data: data[i.Begin:i.End:i.End]}
		f.Tensors = append(f.Tensors, t)
		f.byName[t.Name] = t
	}
	return f
}

type entry struct {
	key   string
	value json.RawMessage
}

// parseObject parses a JSON object into its entries in order, refusing
// duplicate keys and anything after the object but whitespace.
func parseObject(b []byte) ([]entry, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil {
		return nil, err
	} else if tok != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %v", tok)
	}
	var es []entry
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("want a key, got %v", tok)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("key %q: %w", key, err)
		}
		es = append(es, entry{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("unexpected %v after the header object", tok)
		}
		return nil, err
	}
	return es, nil
}

// parseMetadata parses the __metadata__ object: string keys to string
// values.
func parseMetadata(v json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	if string(v) == "null" {
		return out, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, formatErr("%s is not an object of strings: %w", KeyMetadata, err)
	}
	for k, r := range m {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, &Error{Key: k, Err: fmt.Errorf("value %.40s is not a string (every %s value is a string)", r, KeyMetadata)}
		}
		out[k] = s
	}
	return out, nil
}

// parseInfo parses {"dtype", "shape", "data_offsets"} of tensor name,
// calls check (when not nil) and checks the entry against a data section
// of n bytes.
func parseInfo(name string, v json.RawMessage, n uint64, check Check) (Info, error) {
	fail := func(format string, a ...any) (Info, error) {
		return Info{}, &Error{Tensor: name, Err: fmt.Errorf(format, a...)}
	}
	var info struct {
		DType   *string           `json:"dtype"`
		Shape   []json.RawMessage `json:"shape"`
		Offsets []json.RawMessage `json:"data_offsets"`
	}
	if err := json.Unmarshal(v, &info); err != nil {
		return fail("bad tensor info %.80s: %w", v, err)
	}
	if info.DType == nil || info.Shape == nil || info.Offsets == nil {
		return fail("tensor info %.80s lacks dtype, shape or data_offsets", v)
	}
	t := Info{Name: name, DType: *info.DType, Shape: make([]int, len(info.Shape))}
	for i, r := range info.Shape {
		d, err := strconv.ParseUint(string(r), 10, 64)
		if err != nil || d > MaxElements {
			return fail("shape %s: dimension %s is not an integer of at most %d", joinRaw(info.Shape), r, uint64(MaxElements))
		}
		t.Shape[i] = int(d)
	}
	if check != nil {
		if err := check(name, t.DType, t.Shape); err != nil {
			return Info{}, err
		}
	}
	size := DTypeSize(t.DType)
	if size == 0 {
		return fail("unknown dtype %q", t.DType)
	}
	if len(t.Shape) > MaxRank {
		return fail("shape has rank %d, more than %d", len(t.Shape), MaxRank)
	}
	elems := uint64(1)
	for _, d := range t.Shape {
		if d > 0 && elems > MaxElements/uint64(d) {
			return fail("shape %v has more elements than the at most %d this reader accepts", t.Shape, uint64(MaxElements))
		}
		elems *= uint64(d)
	}
	if len(info.Offsets) != 2 {
		return fail("data_offsets %s: want [begin, end]", joinRaw(info.Offsets))
	}
	var s [2]uint64
	for i, r := range info.Offsets {
		o, err := strconv.ParseUint(string(r), 10, 64)
		if err != nil {
			return fail("data_offsets %s: %s is not a non-negative integer", joinRaw(info.Offsets), r)
		}
		s[i] = o
	}
	if s[1] < s[0] {
		return fail("data_offsets [%d, %d] end before they begin", s[0], s[1])
	}
	if have, need := s[1]-s[0], elems*uint64(size); have != need {
		return fail("data_offsets [%d, %d] hold %d bytes, shape %v dtype %s needs %d", s[0], s[1], have, t.Shape, t.DType, need)
	}
	if s[1] > n {
		return fail("data_offsets [%d, %d] run past the end of the %d-byte data section (truncated?)", s[0], s[1], n)
	}
	t.Begin, t.End = s[0], s[1]
	return t, nil
}

func joinRaw(rs []json.RawMessage) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	s := "[" + strings.Join(parts, ", ") + "]"
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// headerLength checks the 8-byte prefix of a file of size bytes and
// returns the header length.
func headerLength(prefix []byte, size int64) (uint64, error) {
	if size < 8 || len(prefix) < 8 {
		return 0, formatErr("file is %d bytes, too short for the 8-byte header length", size)
	}
	hl := binary.LittleEndian.Uint64(prefix)
	switch {
	case hl > MaxHeader:
		return 0, formatErr("header length %d exceeds the %d-byte limit", hl, MaxHeader)
	case hl > uint64(size-8):
		return 0, formatErr("header length %d runs past the end of the %d-byte file (truncated?)", hl, size)
	}
	return hl, nil
}

// Decode parses the safetensors file held in data; the tensors' Data
// alias it. name labels errors.
func Decode(name string, data []byte) (*File, error) {
	h, base, err := ReadHeader(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", name, err)
	}
	return h.file(data[base:]), nil
}

// Open reads the safetensors file at path: the header is read and checked
// against the file's size before the data is read. Only regular files are
// read.
func Open(path string) (*File, error) {
	fd, size, err := inputs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	defer fd.Close()
	h, base, err := ReadHeader(fd, size, nil)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	data := make([]byte, size-base)
	if m, err := fd.ReadAt(data, base); m != len(data) {
		return nil, fmt.Errorf("safetensors: %s: reading the data: %w", path, err)
	}
	return h.file(data), nil
}

// Write writes a safetensors file: the tensors in the order given, the
// header's keys sorted (as encoding/json writes them), padded with spaces
// to a multiple of 8 bytes, and meta as __metadata__ when not empty. The
// output is the same bytes for the same input.
func Write(w io.Writer, meta map[string]string, tensors []*Tensor) error {
	type info struct {
		DType   string    `json:"dtype"`
		Shape   []int     `json:"shape"`
		Offsets [2]uint64 `json:"data_offsets"`
	}
	header := map[string]any{}
	if len(meta) > 0 {
		header[KeyMetadata] = meta
	}
	off := uint64(0)
	for _, t := range tensors {
		if t.Name == KeyMetadata || t.Name == "" {
			return fmt.Errorf("safetensors: write: tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("safetensors: write: tensor %s appears twice", t.Name)
		}
		size := DTypeSize(t.DType)
		if size == 0 {
			return fmt.Errorf("safetensors: write: tensor %s: unknown dtype %q", t.Name, t.DType)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("safetensors: write: tensor %s: shape %v", t.Name, t.Shape)
			}
		}
		if int64(len(t.Data)) != t.Elements()*int64(size) {
			return fmt.Errorf("safetensors: write: tensor %s (%s %v) has %d bytes, want %d", t.Name, t.DType, t.Shape, len(t.Data), t.Elements()*int64(size))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = info{t.DType, shape, [2]uint64{off, off + uint64(len(t.Data))}}
		off += uint64(len(t.Data))
	}
	h, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: write: %w", err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	var hl [8]byte
	binary.LittleEndian.PutUint64(hl[:], uint64(len(h)))
	for _, b := range [][]byte{hl[:], h} {
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("safetensors: write: %w", err)
		}
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("safetensors: write: %w", err)
		}
	}
	return nil
}
