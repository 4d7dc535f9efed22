package sample

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxNPYHeader is the largest .npy header dictionary a reader accepts, in
// bytes.
const MaxNPYHeader = 1 << 20

// npyHeader is a parsed .npy header.
type npyHeader struct {
	dt      dtype
	shape   []int
	size    int // bytes of magic, version, length and dictionary
	descr   string
	fortran bool
}

// readNPYHeader reads a .npy preamble and header dictionary from r, reading no
// more than limit bytes. name is the tensor it is for.
func readNPYHeader(r io.Reader, name string, limit int64) (*npyHeader, error) {
	fail := func(format string, a ...any) (*npyHeader, error) {
		return nil, &Error{Tensor: name, Err: fmt.Errorf(format, a...)}
	}
	var pre [10]byte
	if n, err := io.ReadFull(r, pre[:]); err != nil {
		return fail("npy: %d-byte file is too short for the header: %w", n, err)
	}
	if string(pre[:6]) != npyMagic {
		return fail("npy: missing the \\x93NUMPY magic")
	}
	major, minor := pre[6], pre[7]
	var hl, size int64
	switch {
	case major == 1 && minor == 0:
		hl, size = int64(binary.LittleEndian.Uint16(pre[8:])), 10
	case (major == 2 || major == 3) && minor == 0:
		var more [2]byte
		if _, err := io.ReadFull(r, more[:]); err != nil {
			return fail("npy: truncated header length: %w", err)
		}
		hl, size = int64(binary.LittleEndian.Uint32(append(pre[8:10:10], more[:]...))), 12
	default:
		return fail("npy: unsupported format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if hl > MaxNPYHeader {
		return fail("npy: header length %d exceeds the %d-byte limit", hl, MaxNPYHeader)
	}
	if size+hl > limit {
		return fail("npy: header length %d runs past the end of the %d-byte array (truncated?)", hl, limit)
	}
	dict := make([]byte, hl)
	if _, err := io.ReadFull(r, dict); err != nil {
		return fail("npy: truncated header: %w", err)
	}
	h, err := parseNPYDict(dict)
	if err != nil {
		return fail("npy: header %.120q: %w", bytes.TrimRight(dict, " \n"), err)
	}
	h.size = int(size + hl)
	if h.fortran {
		return fail("npy: fortran_order is True; save a C-ordered array (numpy.ascontiguousarray)")
	}
	return h, nil
}

// parseNPYDict parses the header dictionary, a Python literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
func parseNPYDict(b []byte) (*npyHeader, error) {
	p := &pyParser{b: b}
	p.space()
	if !p.eat('{') {
		return nil, errors.New("not a Python dict")
	}
	h := &npyHeader{}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("want ':' after %q", key)
		}
		p.space()
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return nil, fmt.Errorf("descr: %w (structured dtypes are not supported)", err)
			}
		case "fortran_order":
			if h.fortran, err = p.boolean(); err != nil {
				return nil, fmt.Errorf("fortran_order: %w", err)
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return nil, fmt.Errorf("shape: %w", err)
			}
		default:
			return nil, fmt.Errorf("unexpected key %q", key)
		}
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat('}') {
				return nil, fmt.Errorf("want ',' or '}' after %q", key)
			}
			break
		}
	}
	p.space()
	if p.i != len(p.b) {
		return nil, errors.New("text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	var err error
	if h.dt, err = npyDType(h.descr); err != nil {
		return nil, err
	}
	return h, nil
}

// npyDType maps a NumPy descr to a dtype: float16, float32 or float64 of
// either byte order.
func npyDType(descr string) (dtype, error) {
	if len(descr) == 3 && (descr[0] == '<' || descr[0] == '>') && descr[1] == 'f' {
		var dt dtype
		switch descr[2] {
		case '2':
			dt = dtF16
		case '4':
			dt = dtF32
		case '8':
			dt = dtF64
		}
		if dt.size > 0 {
			dt.bigEndian = descr[0] == '>'
			return dt, nil
		}
	}
	return dtype{}, fmt.Errorf("unsupported dtype %q (want float16, float32 or float64: '<f2', '<f4' or '<f8')", descr)
}

// pyParser reads the few Python literals a .npy header uses.
type pyParser struct {
	b []byte
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) str() (string, error) {
	if p.i >= len(p.b) || p.b[p.i] != '\'' && p.b[p.i] != '"' {
		return "", errors.New("want a quoted string")
	}
	q := p.b[p.i]
	end := bytes.IndexByte(p.b[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	s := p.b[p.i+1 : p.i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return "", errors.New("escapes in strings are not supported")
	}
	p.i += end + 2
	return string(s), nil
}

func (p *pyParser) boolean() (bool, error) {
	rest := p.b[p.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("True")):
		p.i += 4
		return true, nil
	case bytes.HasPrefix(rest, []byte("False")):
		p.i += 5
		return false, nil
	}
	return false, errors.New("want True or False")
}

// maxRank bounds the tuples a header may hold (NumPy allows 64 dimensions).
const maxRank = 64

// tuple parses a tuple of non-negative integers, e.g. (), (3,), (2, 3) or
// (2L, 3L).
func (p *pyParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("want a tuple")
	}
	var out []int
	for {
		p.space()
		if p.eat(')') {
			return out, nil
		}
		if len(out) == maxRank {
			return nil, fmt.Errorf("more than %d dimensions", maxRank)
		}
		start := p.i
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, errors.New("want a non-negative integer")
		}
		v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("dimension %.30s is too large", p.b[start:p.i])
		}
		out = append(out, int(v))
		p.eat('L')
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat(')') {
				return nil, errors.New("want ',' or ')'")
			}
			return out, nil
		}
	}
}

// decodeNPY decodes a .npy file of size bytes, read from r, holding one
// attention tensor.
func decodeNPY(r io.ReaderAt, size int64) (*Sample, error) {
	const name = "attn"
	h, err := readNPYHeader(io.NewSectionReader(r, 0, size), name, size)
	if err != nil {
		return nil, err
	}
	t, err := npyRaw(name, h, size)
	if err != nil {
		return nil, err
	}
	sec := io.NewSectionReader(r, int64(h.size), size-int64(h.size))
	t.open = func() (io.ReadCloser, error) { return io.NopCloser(sec), nil }
	return assemble([]*raw{t}, Meta{}, false)
}

// npyRaw checks the header's shape against an array of total bytes.
func npyRaw(name string, h *npyHeader, total int64) (*raw, error) {
	n, err := checkShape(name, h.shape)
	if err != nil {
		return nil, err
	}
	if have, need := total-int64(h.size), int64(n)*int64(h.dt.size); have != need {
		return nil, &Error{Tensor: name, Err: fmt.Errorf("npy: %d bytes of data, shape %v dtype %s needs %d", have, h.shape, h.descr, need)}
	}
	return &raw{name: name, dt: h.dt, shape: h.shape, n: n}, nil
}
