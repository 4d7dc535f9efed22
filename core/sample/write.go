package sample

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/haeols/haeols/internal/inputs"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/half"
)

// WriteSafetensors writes s as a safetensors file (HAE-OLS.md §6) with every
// tensor in dtype: "F32" (exact), "F16" or "BF16" (rounded to nearest even,
// as half.RoundF16 and half.RoundBF16 do).
//
// The output is deterministic byte for byte: tensors in name order (attn, k,
// q, v) both in the header and in the data, each 4-dimensional; metadata keys
// sorted; the header padded with spaces to a multiple of 8 bytes. The
// metadata holds haeols.format = "1", every non-empty, non-zero Meta field and
// Meta.Extra.
//
// s must pass Validate, and in F16 every value must fit (|x| < 65520, else
// it would become infinite); both are checked before anything is written.
// Errors are *Error values.
func WriteSafetensors(w io.Writer, s *Sample, dtype string) error {
	dt, err := writeDType(dtype)
	if err != nil {
		return err
	}
	if err := s.Validate(); err != nil {
		return err
	}
	s.Widen()
	ts := writeTensors(s)
	for _, t := range ts {
		if i := firstOverflow(t.x, dt); i >= 0 {
			return &Error{Tensor: t.name, Err: fmt.Errorf("value %v at %v (flat index %d) does not fit %s; write F32 or BF16", t.x[i], unflatten(i, t.shape), i, dt.name)}
		}
	}
	header, err := safetensorsHeader(s, ts, dt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, chunk)
	var hl [8]byte
	binary.LittleEndian.PutUint64(hl[:], uint64(len(header)))
	bw.Write(hl[:])
	bw.Write(header)
	buf := make([]byte, 0, chunk)
	for _, t := range ts {
		for i, x := range t.x {
			buf = appendValue(buf, x, dt)
			if len(buf) == cap(buf) || i == len(t.x)-1 {
				if _, err := bw.Write(buf); err != nil {
					return &Error{Err: err}
				}
				buf = buf[:0]
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return &Error{Err: err}
	}
	return nil
}

// WriteFile writes s to path with WriteSafetensors. It writes a temporary file
// next to path and renames it, so path never holds a partial file. It
// refuses a path that exists and is not a regular file (a device, a named
// pipe, a directory), which the rename would replace.
func WriteFile(path string, s *Sample, dtype string) (err error) {
	if _, err := writeDType(dtype); err != nil {
		return withFile(path, err)
	}
	if err := s.Validate(); err != nil {
		return withFile(path, err)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// Renaming over a device or a named pipe would replace it.
		return &Error{File: path, Err: fmt.Errorf("%w; WriteFile replaces regular files only (write to it with WriteSafetensors)", inputs.Regular(fi))}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return &Error{File: path, Err: err}
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := WriteSafetensors(f, s, dtype); err != nil {
		return withFile(path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return &Error{File: path, Err: err}
	}
	if err := f.Close(); err != nil {
		return &Error{File: path, Err: err}
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return &Error{File: path, Err: err}
	}
	return nil
}

func writeDType(name string) (dtype, error) {
	switch name {
	case F32:
		return dtF32, nil
	case F16:
		return dtF16, nil
	case BF16:
		return dtBF16, nil
	}
	return dtype{}, &Error{Err: fmt.Errorf("cannot write dtype %q (want F32, F16 or BF16)", name)}
}

type outTensor struct {
	name  string
	x     []float32
	shape []int
}

// writeTensors lists the tensors of a valid sample in name order.
func writeTensors(s *Sample) []outTensor {
	var ts []outTensor
	if s.HasAttn() {
		ts = append(ts, outTensor{"attn", s.Attn, []int{s.L, s.H, s.N, s.N}})
	}
	if s.HasQKV() {
		ts = append(ts,
			outTensor{"k", s.K, []int{s.L, s.HKV, s.N, s.D}},
			outTensor{"q", s.Q, []int{s.L, s.H, s.N, s.D}},
			outTensor{"v", s.V, []int{s.L, s.HKV, s.N, s.D}})
	}
	return ts
}

func firstOverflow(x []float32, dt dtype) int {
	switch dt.name {
	case "F16":
		for i, v := range x {
			if half.F32ToF16(v)&0x7fff == 0x7c00 {
				return i
			}
		}
	case "BF16":
		for i, v := range x {
			if half.F32ToBF16(v)&0x7fff == 0x7f80 {
				return i
			}
		}
	}
	return -1
}

func appendValue(b []byte, x float32, dt dtype) []byte {
	switch dt.name {
	case "F16":
		return binary.LittleEndian.AppendUint16(b, half.F32ToF16(x))
	case "BF16":
		return binary.LittleEndian.AppendUint16(b, half.F32ToBF16(x))
	}
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
}

type tensorInfo struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets []uint64 `json:"data_offsets"`
}

// safetensorsHeader returns the JSON header, padded with spaces to a
// multiple of 8 bytes.
func safetensorsHeader(s *Sample, ts []outTensor, dt dtype) ([]byte, error) {
	meta, err := encodeMeta(&s.Meta)
	if err != nil {
		return nil, err
	}
	h := map[string]any{"__metadata__": meta}
	off := uint64(0)
	for _, t := range ts {
		n := uint64(len(t.x)) * uint64(dt.size)
		h[t.name] = tensorInfo{DType: dt.name, Shape: t.shape, Offsets: []uint64{off, off + n}}
		off += n
	}
	b, err := marshal(h)
	if err != nil {
		return nil, &Error{Err: err}
	}
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	return b, nil
}

// encodeMeta returns the string metadata for m.
func encodeMeta(m *Meta) (map[string]string, error) {
	kv := map[string]string{KeyFormat: Format}
	for k, v := range m.Extra {
		kv[k] = v
	}
	set := func(k, v string) {
		if v != "" {
			kv[k] = v
		}
	}
	set(KeyModel, m.Model)
	set(KeySource, m.Source)
	set(KeyDescription, m.Description)
	if m.Prefix > 0 {
		kv[KeyPrefix] = strconv.Itoa(m.Prefix)
	}
	if m.Scale > 0 {
		kv[KeyScale] = strconv.FormatFloat(m.Scale, 'g', -1, 64)
	}
	for _, f := range []struct {
		key string
		v   any
		n   int
	}{
		{KeyTokens, m.Tokens, len(m.Tokens)},
		{KeyNeedles, m.Needles, len(m.Needles)},
		{KeyNeedleProbes, m.NeedleProbes, len(m.NeedleProbes)},
	} {
		if f.n == 0 {
			continue
		}
		b, err := marshal(f.v)
		if err != nil {
			return nil, &Error{Key: f.key, Err: err}
		}
		kv[f.key] = string(b)
	}
	return kv, nil
}

// marshal is json.Marshal without HTML escaping (so tokens like "<s>" stay
// readable) and without the trailing newline. Map keys come out sorted.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
