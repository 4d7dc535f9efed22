package sample

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/haeols/haeols/core/safetensors"
)

// MaxHeader is the largest safetensors JSON header a reader accepts, in bytes
// (the limit of the reference implementation, safetensors.MaxHeader).
const MaxHeader = safetensors.MaxHeader

// decodeSafetensors parses a safetensors file of size bytes read from r
// with core/safetensors (the framing, the JSON header, the entries and
// their offsets), checking each tensor's name, dtype and shape as a sample
// needs them before its size and offsets are checked. Only the header is
// read here; each tensor's open reads its bytes. When the file is in
// memory, mem holds its size bytes and each tensor keeps its own (raw.mem).
func decodeSafetensors(r io.ReaderAt, size int64, mem []byte, lazy bool) (*Sample, error) {
	elems := map[string]int{}
	check := func(name, dt string, shape []int) error {
		if !knownTensor(name) {
			return &Error{Tensor: name, Err: fmt.Errorf("unexpected tensor (want q, k, v and/or attn)")}
		}
		if _, ok := stDTypes[dt]; !ok {
			return &Error{Tensor: name, Err: fmt.Errorf("unsupported dtype %q (want F32, F16, BF16 or F64)", dt)}
		}
		n, err := checkShape(name, shape)
		elems[name] = n
		return err
	}
	h, base, err := safetensors.ReadHeader(r, size, check)
	if err != nil {
		var se *safetensors.Error
		var own *Error
		switch {
		case errors.As(err, &own):
			return nil, own
		case errors.As(err, &se) && se.Tensor != "":
			return nil, &Error{Tensor: se.Tensor, Err: se.Err}
		case errors.As(err, &se) && se.Key != "":
			return nil, &Error{Key: se.Key, Err: se.Err}
		case errors.As(err, &se):
			return nil, fmt.Errorf("safetensors: %w", se.Err)
		}
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var ts []*raw
	for _, info := range h.Tensors {
		sec := io.NewSectionReader(r, base+int64(info.Begin), int64(info.End-info.Begin))
		t := &raw{name: info.Name, dt: stDTypes[info.DType], shape: info.Shape, n: elems[info.Name],
			open: func() (io.ReadCloser, error) { return io.NopCloser(sec), nil }}
		if mem != nil {
			b, e := base+int64(info.Begin), base+int64(info.End)
			t.mem = mem[b:e:e]
		}
		ts = append(ts, t)
	}
	m, err := decodeMeta(h.Metadata)
	if err != nil {
		return nil, err
	}
	return assemble(ts, m, lazy)
}

// stDTypes are the safetensors dtypes a sample may hold.
var stDTypes = map[string]dtype{"F32": dtF32, "F16": dtF16, "BF16": dtBF16, "F64": dtF64}

// decodeMeta turns the string metadata of HAE-OLS.md §6 into a Meta.
func decodeMeta(kv map[string]string) (Meta, error) {
	var m Meta
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys) // report the first bad key deterministically
	for _, k := range keys {
		v := kv[k]
		var err error
		switch k {
		case KeyFormat:
			if v != Format {
				err = fmt.Errorf("unsupported format %q (this reader knows %q)", v, Format)
			}
		case KeyModel:
			m.Model = v
		case KeySource:
			m.Source = v
		case KeyDescription:
			m.Description = v
		case KeyPrefix:
			var p uint64
			p, err = strconv.ParseUint(v, 10, 31)
			if err != nil {
				err = fmt.Errorf("%q is not a non-negative integer", v)
			}
			m.Prefix = int(p)
		case KeyScale:
			m.Scale, err = strconv.ParseFloat(v, 64)
			if err != nil || !(m.Scale >= 0) || math.IsInf(m.Scale, 0) {
				err = fmt.Errorf("%q is not a finite non-negative number", v)
			}
		case KeyTokens:
			if err = json.Unmarshal([]byte(v), &m.Tokens); err != nil {
				err = fmt.Errorf("not a JSON array of strings: %w", err)
			}
		case KeyNeedles:
			if err = json.Unmarshal([]byte(v), &m.Needles); err != nil {
				err = fmt.Errorf("not a JSON array of integers: %w", err)
			}
		case KeyNeedleProbes:
			if err = json.Unmarshal([]byte(v), &m.NeedleProbes); err != nil {
				err = fmt.Errorf("not a JSON array of integers: %w", err)
			}
		default:
			if m.Extra == nil {
				m.Extra = map[string]string{}
			}
			m.Extra[k] = v
		}
		if err != nil {
			return Meta{}, &Error{Key: k, Err: err}
		}
	}
	// An empty list means none, as when the key is absent (and as written).
	if len(m.Needles) == 0 {
		m.Needles = nil
	}
	if len(m.NeedleProbes) == 0 {
		m.NeedleProbes = nil
	}
	return m, nil
}

// Dtypes WriteSafetensors writes.
const (
	F32  = "F32"
	F16  = "F16"
	BF16 = "BF16"
)
