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
// section exactly (no overlap, no gap, nothing after). Duplicate keys are
// refused.
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

// span is a tensor's data offsets.
type span struct{ begin, end uint64 }

// parseHeader parses the JSON header of a file whose data section has n
// bytes, returning the tensors (Data unset) in data order and their spans.
func parseHeader(header []byte, n uint64) (*File, []span, error) {
	entries, err := parseObject(header)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	if len(entries) > MaxTensors+1 {
		return nil, nil, fmt.Errorf("%w: %d tensors, more than the %d this reader accepts", ErrFormat, len(entries), MaxTensors)
	}
	f := &File{Metadata: map[string]string{}, byName: map[string]*Tensor{}}
	var spans []span
	for _, e := range entries {
		if e.key == KeyMetadata {
			if f.Metadata, err = parseMetadata(e.value); err != nil {
				return nil, nil, err
			}
			continue
		}
		t, s, err := parseInfo(e.key, e.value, n)
		if err != nil {
			return nil, nil, err
		}
		f.Tensors = append(f.Tensors, t)
		f.byName[t.Name] = t
		spans = append(spans, s)
	}
	idx := make([]int, len(f.Tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return spans[idx[a]].begin < spans[idx[b]].begin })
	ts, ss := make([]*Tensor, len(idx)), make([]span, len(idx))
	end := uint64(0)
	for i, j := range idx {
		ts[i], ss[i] = f.Tensors[j], spans[j]
		switch s := ss[i]; {
		case s.begin < end:
			return nil, nil, fmt.Errorf("%w: tensor %s: data_offsets [%d, %d] overlap tensor %s", ErrFormat, ts[i].Name, s.begin, s.end, ts[i-1].Name)
		case s.begin > end:
			return nil, nil, fmt.Errorf("%w: tensor %s: data_offsets [%d, %d] leave a gap of %d bytes before them", ErrFormat, ts[i].Name, s.begin, s.end, s.begin-end)
		}
		end = ss[i].end
	}
	if end != n {
		return nil, nil, fmt.Errorf("%w: the data section has %d bytes, the tensors end at %d", ErrFormat, n, end)
	}
	f.Tensors = ts
	return f, ss, nil
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

func parseMetadata(v json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	if string(v) == "null" {
		return out, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("%w: %s is not an object: %v", ErrFormat, KeyMetadata, err)
	}
	for k, r := range m {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, fmt.Errorf("%w: %s %q: value %.40s is not a string", ErrFormat, KeyMetadata, k, r)
		}
		out[k] = s
	}
	return out, nil
}

// parseInfo parses {"dtype", "shape", "data_offsets"} of tensor name and
// checks it against a data section of n bytes.
func parseInfo(name string, v json.RawMessage, n uint64) (*Tensor, span, error) {
	fail := func(format string, a ...any) (*Tensor, span, error) {
		return nil, span{}, fmt.Errorf("%w: tensor %s: %s", ErrFormat, name, fmt.Sprintf(format, a...))
	}
	var info struct {
		DType   *string           `json:"dtype"`
		Shape   []json.RawMessage `json:"shape"`
		Offsets []json.RawMessage `json:"data_offsets"`
	}
	if err := json.Unmarshal(v, &info); err != nil {
		return fail("bad tensor info %.80s: %v", v, err)
	}
	if info.DType == nil || info.Shape == nil || info.Offsets == nil {
		return fail("tensor info %.80s lacks dtype, shape or data_offsets", v)
	}
	size := DTypeSize(*info.DType)
	if size == 0 {
		return fail("unknown dtype %q", *info.DType)
	}
	if len(info.Shape) > MaxRank {
		return fail("shape has rank %d, more than %d", len(info.Shape), MaxRank)
	}
	t := &Tensor{Name: name, DType: *info.DType, Shape: make([]int, len(info.Shape))}
	elems := uint64(1)
	for i, r := range info.Shape {
		d, err := strconv.ParseUint(string(r), 10, 64)
		if err != nil || d > MaxElements || (d > 0 && elems > MaxElements/d) {
			return fail("shape %s: dimension %s is not an integer of at most %d elements in all", joinRaw(info.Shape), r, uint64(MaxElements))
		}
		t.Shape[i] = int(d)
		elems *= d
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
		return fail("data_offsets [%d, %d] hold %d bytes, shape %v of %s needs %d", s[0], s[1], have, t.Shape, t.DType, need)
	}
	if s[1] > n {
		return fail("data_offsets [%d, %d] run past the end of the %d-byte data section (truncated?)", s[0], s[1], n)
	}
	return t, span{s[0], s[1]}, nil
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
		return 0, fmt.Errorf("%w: %d bytes, too short for the 8-byte header length", ErrFormat, size)
	}
	hl := binary.LittleEndian.Uint64(prefix)
	switch {
	case hl > MaxHeader:
		return 0, fmt.Errorf("%w: header length %d exceeds the %d-byte limit", ErrFormat, hl, MaxHeader)
	case hl > uint64(size-8):
		return 0, fmt.Errorf("%w: header length %d runs past the end of the %d-byte file (truncated?)", ErrFormat, hl, size)
	}
	return hl, nil
}

// Decode parses the safetensors file held in data; the tensors' Data
// alias it. name labels errors.
func Decode(name string, data []byte) (*File, error) {
	hl, err := headerLength(data, int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", name, err)
	}
	body := data[8+hl:]
	f, ss, err := parseHeader(data[8:8+hl], uint64(len(body)))
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", name, err)
	}
	for i, t := range f.Tensors {
		t.Data = body[ss[i].begin:ss[i].end:ss[i].end]
	}
	return f, nil
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
	var prefix [8]byte
	n, _ := fd.ReadAt(prefix[:], 0)
	hl, err := headerLength(prefix[:n], size)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	header := make([]byte, hl)
	if m, err := fd.ReadAt(header, 8); m != len(header) {
		return nil, fmt.Errorf("safetensors: %s: reading the header: %w", path, err)
	}
	body := uint64(size) - 8 - hl
	f, ss, err := parseHeader(header, body)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	data := make([]byte, body)
	if m, err := fd.ReadAt(data, int64(8+hl)); m != len(data) {
		return nil, fmt.Errorf("safetensors: %s: reading the data: %w", path, err)
	}
	for i, t := range f.Tensors {
		t.Data = data[ss[i].begin:ss[i].end:ss[i].end]
	}
	return f, nil
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
