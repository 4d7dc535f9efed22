package sample

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/haeols/haeols/core/half"
	"github.com/haeols/haeols/internal/inputs"
)

// Read reads the sample file at path (safetensors, .npz or .npy; see Decode).
// It refuses anything that is not a regular file (a directory, a named pipe,
// a device) before opening it, and reads the file in place: the header
// first, checked against the file's size and the limits, then each tensor
// in chunks straight into the sample, so that memory stays within the
// sample's size (see Decode) whatever the file claims.
func Read(path string) (*Sample, error) {
	f, size, err := inputs.Open(path)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	defer f.Close()
	return DecodeReaderAt(path, f, size)
}

// Decode decodes a sample file held in data. The format is told by the magic
// bytes (\x93NUMPY for .npy, PK for .npz), else by the extension of name, else
// by the shape of a safetensors header. name is used only for that and in
// errors.
//
// Safetensors (HAE-OLS.md §6): tensors q [L,H,N,d], k and v [L,Hkv,N,d] and/or
// attn [L,H,N,N] in F32, F16, BF16 or F64, and the string-valued __metadata__
// (keys in the Key constants; others go to Meta.Extra). attn may also be
// [H,N,N] (L = 1) or [N,N] (L = H = 1). Any other tensor name is an error. The
// data offsets must tile the data section exactly, in any order. The JSON
// header must be valid UTF-8, with no escaped lone surrogate, and no key
// twice in any object.
//
// .npz: a zip (stored or deflated) of q.npy, k.npy, v.npy and/or attn.npy with
// the same shapes; .npy: one attention tensor [N,N], [H,N,N] or [L,H,N,N].
// Arrays are float16, float32 or float64 of either byte order, in C order.
// These formats carry no metadata, so the defaults of Meta apply.
//
// Everything the header claims is checked against the size of the data and
// against the limits (MaxHeader, MaxDim, MaxElements for the whole sample)
// before any large allocation, so memory stays within the decoded sample (at
// most 4 x MaxElements bytes, and at most 2 x the data's size but for .npz,
// whose deflated members are bounded by MaxInflateRatio) plus one chunk;
// a deflated .npz member is inflated only up to the size its header
// declares. Then the numbers are decoded and the sample must pass Validate.
// Every error is an *Error naming the file, the tensor or metadata key, and
// the problem. Decode does not keep a reference to data, and does not panic:
// should a bug make it, the panic comes back as an *Error saying "internal
// error".
func Decode(name string, data []byte) (*Sample, error) {
	return decode(name, bytes.NewReader(data), int64(len(data)), data, false)
}

// DecodeReaderAt is Decode reading the size bytes of r in place: it reads
// the header, checks it, then reads each tensor's bytes in chunks, and never
// reads r whole. Read uses it on the open file.
func DecodeReaderAt(name string, r io.ReaderAt, size int64) (*Sample, error) {
	return decode(name, r, size, nil, false)
}

// decode is DecodeReaderAt; when the file is in memory, mem holds its size
// bytes (r reads them), and a safetensors file's tensors are widened
// straight from it rather than copied into a buffer first, or, with lazy,
// when first read where they can be (DecodeLazy).
func decode(name string, r io.ReaderAt, size int64, mem []byte, lazy bool) (s *Sample, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, &Error{File: name, Err: fmt.Errorf("internal error (please report): %v", p)}
		}
	}()
	if size <= 0 {
		return nil, &Error{File: name, Err: errors.New("empty file")}
	}
	var head [16]byte
	n, err := r.ReadAt(head[:min(int64(len(head)), size)], 0)
	if err != nil && !(err == io.EOF && int64(n) == min(int64(len(head)), size)) {
		return nil, &Error{File: name, Err: fmt.Errorf("reading the first bytes: %w", err)}
	}
	switch detect(name, head[:n]) {
	case "safetensors":
		s, err = decodeSafetensors(r, size, mem, lazy)
	case "npz":
		s, err = decodeNPZ(r, size)
	case "npy":
		s, err = decodeNPY(r, size)
	default:
		err = errors.New("unknown format: want .safetensors, .npz or .npy")
	}
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		return nil, withFile(name, err)
	}
	return s, nil
}

const (
	npyMagic = "\x93NUMPY"
	zipMagic = "PK\x03\x04"
	zipEmpty = "PK\x05\x06"
)

// detect returns "safetensors", "npz", "npy" or "", from name and the first
// bytes of the file.
func detect(name string, data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte(npyMagic)):
		return "npy"
	case bytes.HasPrefix(data, []byte(zipMagic)), bytes.HasPrefix(data, []byte(zipEmpty)):
		return "npz"
	}
	ext := strings.ToLower(name)
	if i := strings.LastIndexAny(ext, "./\\"); i >= 0 && ext[i] == '.' {
		ext = ext[i:]
	} else {
		ext = ""
	}
	switch ext {
	case ".safetensors", ".npz", ".npy":
		return ext[1:]
	}
	if len(data) >= 9 && data[8] == '{' {
		return "safetensors"
	}
	return ""
}

// dtype is an on-disk float type.
type dtype struct {
	name      string // safetensors spelling: F32, F16, BF16, F64
	size      int    // bytes per element
	bigEndian bool   // only .npy/.npz arrays may be big-endian
}

var (
	dtF32  = dtype{name: "F32", size: 4}
	dtF16  = dtype{name: "F16", size: 2}
	dtBF16 = dtype{name: "BF16", size: 2}
	dtF64  = dtype{name: "F64", size: 8}
)

// tensorNames are the tensors a sample may hold, in file order.
var tensorNames = []string{"attn", "k", "q", "v"}

func knownTensor(name string) bool {
	for _, n := range tensorNames {
		if n == name {
			return true
		}
	}
	return false
}

// raw is one tensor as a file describes it, checked but not yet decoded.
type raw struct {
	name  string
	dt    dtype
	shape []int // as stored, each dimension in [1, MaxDim]
	n     int   // elements, at most MaxElements
	// open returns a reader of exactly n*dt.size bytes followed by the
	// reader's own end-of-data check (io.EOF).
	open func() (io.ReadCloser, error)
	// mem, when not nil, holds the tensor's bytes (open reads the same);
	// decode widens them in place when they are exactly n*dt.size.
	mem []byte
}

// checkShape checks a stored shape's rank and dimensions and returns its
// element count.
func checkShape(name string, shape []int) (int, error) {
	switch name {
	case "q", "k", "v":
		if len(shape) != 4 {
			return 0, &Error{Tensor: name, Err: fmt.Errorf("shape %v has rank %d, want 4 ([L, H, N, d])", shape, len(shape))}
		}
	case "attn":
		if len(shape) < 2 || len(shape) > 4 {
			return 0, &Error{Tensor: name, Err: fmt.Errorf("shape %v has rank %d, want [N, N], [H, N, N] or [L, H, N, N]", shape, len(shape))}
		}
	}
	for _, d := range shape {
		if d < 1 || d > MaxDim {
			return 0, &Error{Tensor: name, Err: fmt.Errorf("shape %v: dimension %d outside [1, %d]", shape, d, MaxDim)}
		}
	}
	n := elements(shape)
	if n < 0 {
		return 0, &Error{Tensor: name, Err: fmt.Errorf("shape %v has more than MaxElements = %d elements", shape, MaxElements)}
	}
	return n, nil
}

// assemble checks that the tensors fit together, decodes them and returns the
// sample (not yet validated). With lazy, q, k and v are left to be widened
// one KV head at a time where lazyFits says they can be.
func assemble(ts []*raw, meta Meta, lazy bool) (*Sample, error) {
	by := map[string]*raw{}
	for _, t := range ts {
		by[t.name] = t
	}
	q, k, v, a := by["q"], by["k"], by["v"], by["attn"]
	s := &Sample{Meta: meta}
	if q != nil || k != nil || v != nil {
		for _, name := range []string{"q", "k", "v"} {
			if by[name] == nil {
				return nil, &Error{Tensor: name, Err: errors.New("missing: q, k and v go together")}
			}
		}
		s.L, s.H, s.N, s.D = q.shape[0], q.shape[1], q.shape[2], q.shape[3]
		s.HKV = k.shape[1]
		if k.shape[0] != s.L || k.shape[2] != s.N || k.shape[3] != s.D {
			return nil, &Error{Tensor: "k", Err: fmt.Errorf("shape %v does not fit q %v: want [%d, Hkv, %d, %d]", k.shape, q.shape, s.L, s.N, s.D)}
		}
		if s.H%s.HKV != 0 {
			return nil, &Error{Tensor: "k", Err: fmt.Errorf("shape %v: %d KV heads do not divide the %d query heads of q %v", k.shape, s.HKV, s.H, q.shape)}
		}
		if !equal(v.shape, k.shape) {
			return nil, &Error{Tensor: "v", Err: fmt.Errorf("shape %v differs from k %v", v.shape, k.shape)}
		}
	} else if a == nil {
		return nil, errors.New("no tensors: want q, k and v, and/or attn")
	}
	if a != nil {
		sh := a.shape
		for len(sh) < 4 {
			sh = append([]int{1}, sh...)
		}
		if sh[2] != sh[3] {
			return nil, &Error{Tensor: "attn", Err: fmt.Errorf("shape %v: not square in its last two dimensions", a.shape)}
		}
		if q != nil && (sh[0] != s.L || sh[1] != s.H || sh[2] != s.N) {
			return nil, &Error{Tensor: "attn", Err: fmt.Errorf("shape %v does not fit q %v: want [%d, %d, %d, %d]", a.shape, q.shape, s.L, s.H, s.N, s.N)}
		}
		s.L, s.H, s.N = sh[0], sh[1], sh[2]
	}
	total := 0
	for _, t := range ts {
		total += t.n // each at most MaxElements: no overflow
	}
	if total > MaxElements {
		return nil, fmt.Errorf("the tensors hold %d elements in all, more than MaxElements = %d that a sample may hold (%s of float32)", total, MaxElements, byteCount(4*MaxElements))
	}
	names := map[string]string{}
	if lazy && lazyFits(q, k, v, a) {
		s.Q, s.K, s.V = make([]float32, q.n), make([]float32, k.n), make([]float32, v.n)
		s.lazy = newLazy(s, q, k, v)
		ts = nil
		names["q"], names["k"], names["v"] = q.dt.name, k.dt.name, v.dt.name
	}
	for _, t := range ts {
		x, err := t.decode()
		if err != nil {
			return nil, err
		}
		switch t.name {
		case "q":
			s.Q = x
		case "k":
			s.K = x
		case "v":
			s.V = x
		case "attn":
			s.Attn = x
		}
		names[t.name] = t.dt.name
	}
	s.SourceDType = dtypeSummary(names)
	return s, nil
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dtypeSummary returns the common dtype, or "name=dtype ..." when they differ.
func dtypeSummary(names map[string]string) string {
	keys := make([]string, 0, len(names))
	same := ""
	for k, d := range names {
		keys = append(keys, k)
		if same == "" {
			same = d
		} else if same != d {
			same = "-"
		}
	}
	if same != "-" {
		return same
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + names[k]
	}
	return strings.Join(parts, " ")
}

// chunk is the number of bytes decoded at a time from a stream.
const chunk = 64 << 10

// decode converts the tensor's numbers to float32, chunk by chunk.
func (t *raw) decode() ([]float32, error) {
	if t.mem != nil && len(t.mem) == t.n*t.dt.size {
		x := make([]float32, t.n)
		if err := t.widenInto(x, 0); err != nil {
			return nil, err
		}
		return x, nil
	}
	rc, err := t.open()
	if err != nil {
		return nil, &Error{Tensor: t.name, Err: err}
	}
	defer rc.Close()
	x := make([]float32, t.n)
	buf := make([]byte, min(chunk, t.n*t.dt.size))
	per := len(buf) / t.dt.size
	for off := 0; off < t.n; off += per {
		m := min(per, t.n-off)
		b := buf[:m*t.dt.size]
		if _, err := io.ReadFull(rc, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("reading data at element %d of %d: %w", off, t.n, err)}
		}
		if err := t.convert(x[off:off+m], b, off); err != nil {
			return nil, err
		}
	}
	// Read to the end so that the zip reader checks sizes and the CRC.
	var one [1]byte
	if _, err := io.ReadFull(rc, one[:]); err != io.EOF {
		if err == nil {
			err = errors.New("data continues past the shape")
		}
		return nil, &Error{Tensor: t.name, Err: fmt.Errorf("reading data after all %d elements: %w", t.n, err)}
	}
	return x, nil
}

// convert decodes len(dst) elements of t's dtype from src; off is the flat
// index of dst[0], for errors.
func (t *raw) convert(dst []float32, src []byte, off int) error {
	var bo binary.ByteOrder = binary.LittleEndian
	if t.dt.bigEndian {
		bo = binary.BigEndian
	}
	switch t.dt.name {
	case "F32":
		half.DecodeF32(dst, src, t.dt.bigEndian)
	case "F16":
		half.DecodeF16(dst, src, t.dt.bigEndian)
	case "BF16":
		half.DecodeBF16(dst, src, t.dt.bigEndian)
	case "F64":
		for i := range dst {
			f := math.Float64frombits(bo.Uint64(src[8*i:]))
			dst[i] = float32(f)
			if math.IsInf(float64(dst[i]), 0) && !math.IsInf(f, 0) {
				return &Error{Tensor: t.name, Err: fmt.Errorf("F64 value %v at %v (flat index %d) overflows float32", f, unflatten(off+i, t.shape), off+i)}
			}
		}
	default:
		return &Error{Tensor: t.name, Err: fmt.Errorf("internal: no decoder for dtype %s", t.dt.name)}
	}
	return nil
}

// byteCount formats a size in bytes for messages: "4 GiB", "96 MiB", "512 bytes".
func byteCount(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
