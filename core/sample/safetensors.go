package sample

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxHeader is the largest safetensors JSON header a reader accepts, in bytes
// (the limit of the reference implementation).
const MaxHeader = 100 << 20

// decodeSafetensors parses a safetensors file of size bytes read from r: an
// 8-byte little-endian header length, the JSON header, then the data
// section. Only the header is read here; each tensor's open reads its bytes.
func decodeSafetensors(r io.ReaderAt, size int64) (*Sample, error) {
	if size < 8 {
		return nil, fmt.Errorf("safetensors: file is %d bytes, too short for the 8-byte header length", size)
	}
	var pre [9]byte
	if _, err := r.ReadAt(pre[:min(9, size)], 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("safetensors: reading the header length: %w", err)
	}
	hl := binary.LittleEndian.Uint64(pre[:])
	switch {
	case hl > MaxHeader:
		return nil, fmt.Errorf("safetensors: header length %d exceeds the %d-byte limit", hl, MaxHeader)
	case hl > uint64(size-8):
		return nil, fmt.Errorf("safetensors: header length %d runs past the end of the %d-byte file (truncated?)", hl, size)
	case hl < 2 || pre[8] != '{':
		return nil, fmt.Errorf("safetensors: header does not start with '{'")
	}
	header := make([]byte, hl)
	if _, err := r.ReadAt(header, 8); err != nil && !(err == io.EOF && int64(8+hl) == size) {
		return nil, fmt.Errorf("safetensors: reading the %d-byte header: %w", hl, err)
	}
	base, bodySize := int64(8+hl), size-int64(8+hl)
	if err := checkJSON(header); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	entries, err := parseObject(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	var (
		ts   []*raw
		span = map[*raw][2]uint64{}
		meta = map[string]string{}
	)
	for _, e := range entries {
		if e.key == "__metadata__" {
			meta, err = parseMetadata(e.value)
			if err != nil {
				return nil, err
			}
			continue
		}
		t, off, err := parseTensorInfo(e.key, e.value, bodySize)
		if err != nil {
			return nil, err
		}
		sec := io.NewSectionReader(r, base+int64(off[0]), int64(off[1]-off[0]))
		t.open = func() (io.ReadCloser, error) { return io.NopCloser(sec), nil }
		ts = append(ts, t)
		span[t] = off
	}
	// The data offsets must tile the data section: no overlap, no gap.
	sorted := append([]*raw(nil), ts...)
	sort.SliceStable(sorted, func(i, j int) bool { return span[sorted[i]][0] < span[sorted[j]][0] })
	end := uint64(0)
	for i, t := range sorted {
		off := span[t]
		switch {
		case off[0] < end:
			p := sorted[i-1]
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("data_offsets [%d, %d] overlap tensor %q at [%d, %d]", off[0], off[1], p.name, span[p][0], span[p][1])}
		case off[0] > end:
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("data_offsets [%d, %d] leave a gap of %d bytes before them", off[0], off[1], off[0]-end)}
		}
		end = off[1]
	}
	if end != uint64(bodySize) {
		return nil, fmt.Errorf("safetensors: %d bytes of data after the last tensor (data section %d bytes, tensors end at %d)", uint64(bodySize)-end, bodySize, end)
	}
	m, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	return assemble(ts, m)
}

// checkJSON checks what encoding/json lets pass: the header must be valid
// UTF-8 (json would turn bad bytes into U+FFFD silently) with no escaped
// lone surrogate, and no object, at any depth, may hold a key twice (json
// keeps the last).
func checkJSON(b []byte) error {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Errorf("not valid UTF-8 (byte %d of %d is 0x%02x)", i, len(b), b[i])
	}
	if err := checkSurrogates(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	type obj struct {
		path string
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*obj
	path := func() string {
		if len(stack) == 0 || stack[len(stack)-1].path == "" {
			return "the header object"
		}
		return stack[len(stack)-1].path
	}
	last := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // the parsers below report syntax errors in context
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				p := ""
				if top != nil {
					p = strings.TrimPrefix(top.path+"."+last, ".")
				}
				if t == '[' {
					stack = append(stack, &obj{path: p})
				} else {
					stack = append(stack, &obj{path: p, keys: map[string]bool{}, key: true})
				}
				continue
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.keys != nil && top.key {
				if top.keys[t] {
					if top.path == "" {
						return fmt.Errorf("duplicate key %q", t)
					}
					return fmt.Errorf("duplicate key %q in %q", t, path())
				}
				top.keys[t] = true
				top.key = false
				last = t
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].key = true
		}
	}
}

type entry struct {
	key   string
	value json.RawMessage
}

// parseObject parses a JSON object into its entries in order, rejecting
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
	if _, err := dec.Token(); err != nil { // the closing '}'
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

// checkSurrogates refuses a \u escape of a lone UTF-16 surrogate (a high
// one not followed by a low one, or a low one alone): it is no character,
// and encoding/json would turn it into U+FFFD silently.
func checkSurrogates(b []byte) error {
	hex := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range b[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex(i)
		if !ok {
			i++ // skip the escaped character (\\, \", ...)
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if lo, ok := hex(i + 6); ok && lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
			return fmt.Errorf("lone UTF-16 surrogate \\u%04x at byte %d (no character)", r, i)
		case r >= 0xdc00 && r < 0xe000:
			return fmt.Errorf("lone UTF-16 surrogate \\u%04x at byte %d (no character)", r, i)
		}
		i += 5
	}
	return nil
}

// parseTensorInfo parses {"dtype": ..., "shape": [...], "data_offsets":
// [begin, end]} and checks it against a data section of size n.
func parseTensorInfo(name string, v json.RawMessage, n int64) (*raw, [2]uint64, error) {
	var off [2]uint64
	fail := func(format string, a ...any) (*raw, [2]uint64, error) {
		return nil, off, &Error{Tensor: name, Err: fmt.Errorf(format, a...)}
	}
	if !knownTensor(name) {
		return fail("unexpected tensor (want q, k, v and/or attn)")
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
	var dt dtype
	switch *info.DType {
	case "F32":
		dt = dtF32
	case "F16":
		dt = dtF16
	case "BF16":
		dt = dtBF16
	case "F64":
		dt = dtF64
	default:
		return fail("unsupported dtype %q (want F32, F16, BF16 or F64)", *info.DType)
	}
	if len(info.Shape) > 8 {
		return fail("shape has rank %d", len(info.Shape))
	}
	shape := make([]int, len(info.Shape))
	for i, r := range info.Shape {
		d, err := strconv.ParseUint(string(r), 10, 64)
		if err != nil || d > math.MaxInt32 {
			return fail("shape %s: dimension %s is not an integer in [1, %d]", joinRaw(info.Shape), r, MaxDim)
		}
		shape[i] = int(d)
	}
	elems, err := checkShape(name, shape)
	if err != nil {
		return nil, off, err
	}
	if len(info.Offsets) != 2 {
		return fail("data_offsets %s: want [begin, end]", joinRaw(info.Offsets))
	}
	for i, r := range info.Offsets {
		o, err := strconv.ParseUint(string(r), 10, 64)
		if err != nil {
			return fail("data_offsets %s: %s is not a non-negative integer", joinRaw(info.Offsets), r)
		}
		off[i] = o
	}
	if off[1] < off[0] {
		return fail("data_offsets [%d, %d] end before they begin", off[0], off[1])
	}
	if have, need := off[1]-off[0], uint64(elems)*uint64(dt.size); have != need {
		return fail("data_offsets [%d, %d] hold %d bytes, shape %v dtype %s needs %d", off[0], off[1], have, shape, dt.name, need)
	}
	if off[1] > uint64(n) {
		return fail("data_offsets [%d, %d] run past the end of the %d-byte data section (truncated?)", off[0], off[1], n)
	}
	return &raw{name: name, dt: dt, shape: shape, n: elems}, off, nil
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

// parseMetadata parses the __metadata__ object: string keys to string values.
func parseMetadata(v json.RawMessage) (map[string]string, error) {
	if string(v) == "null" {
		return map[string]string{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, fmt.Errorf("safetensors: __metadata__ is not an object of strings: %w", err)
	}
	out := make(map[string]string, len(m))
	for k, r := range m {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, &Error{Key: k, Err: fmt.Errorf("value %.40s is not a string (every __metadata__ value is a string)", r)}
		}
		out[k] = s
	}
	return out, nil
}

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
