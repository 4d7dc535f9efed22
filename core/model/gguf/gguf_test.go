package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model/quant"
)

// everyValue has one pair of every GGUF value type, arrays of every
// element type, an empty array and an array of arrays.
func everyValue() []KV {
	return []KV{
		{"general.architecture", "llama"},
		{"u8", uint8(255)}, {"i8", int8(-128)}, {"u16", uint16(65535)}, {"i16", int16(-32768)},
		{"u32", uint32(1 << 31)}, {"i32", int32(-1)}, {"f32", float32(-0.5)}, {"t", true}, {"f", false},
		{"s", "héllo\x00world"}, {"empty", ""}, {"u64", uint64(math.MaxUint64)}, {"i64", int64(math.MinInt64)},
		{"f64", math.Pi}, {"nan32", float32(math.NaN())},
		{"a.u8", []uint8{0, 1, 255}}, {"a.i8", []int8{-1, 2}}, {"a.u16", []uint16{7}}, {"a.i16", []int16{-7, 8}},
		{"a.u32", []uint32{1, 2, 3}}, {"a.i32", []int32{-3, 0}}, {"a.f32", []float32{1.5, -2}},
		{"a.bool", []bool{true, false, true}}, {"a.str", []string{"a", "", "ü"}}, {"a.u64", []uint64{1 << 40}},
		{"a.i64", []int64{-1 << 40}}, {"a.f64", []float64{1e300}}, {"a.none", []int32{}},
		{"a.nested", []any{[]string{"x", "y"}, []float32{}, []any{[]uint8{9}}}},
	}
}

func sameValue(a, b any) bool {
	if x, ok := a.(float32); ok && x != x {
		y, ok := b.(float32)
		return ok && y != y
	}
	return reflect.DeepEqual(a, b)
}

func testTensors(t *testing.T) []*Tensor {
	t.Helper()
	var ts []*Tensor
	for i, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
		cols := uint64(256)
		dims := []uint64{cols, uint64(i%3 + 1)}
		if i%4 == 0 {
			dims = []uint64{cols}
		}
		n := uint64(1)
		for _, d := range dims {
			n *= d
		}
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(math.Sin(float64(j*(i+1)))) * 0.1
		}
		tn, err := NewTensor("t."+typ.String(), typ, dims, x)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tn)
	}
	return ts
}

func encode(t *testing.T, kv []KV, ts []*Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, kv, ts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 1, 64} {
		kv := everyValue()
		if align != 0 {
			kv = append(kv, KV{KeyAlignment, align})
		}
		ts := testTensors(t)
		data := encode(t, kv, ts)
		f, err := Decode("rt.gguf", data)
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		want := int(align)
		if align == 0 {
			want = DefaultAlignment
		}
		if f.Version != Version || f.Alignment != want || f.DataOffset%int64(want) != 0 {
			t.Errorf("align %d: version %d alignment %d data offset %d", align, f.Version, f.Alignment, f.DataOffset)
		}
		if len(f.KV) != len(kv) {
			t.Fatalf("%d pairs, want %d", len(f.KV), len(kv))
		}
		for i, p := range kv {
			if f.KV[i].Key != p.Key || !sameValue(f.KV[i].Value, p.Value) {
				t.Errorf("pair %d: got %s = %#v, want %s = %#v", i, f.KV[i].Key, f.KV[i].Value, p.Key, p.Value)
			}
		}
		for i, w := range ts {
			g := f.Tensors[i]
			if g.Name != w.Name || g.Type != w.Type || !reflect.DeepEqual(g.Dims, w.Dims) || g.Offset != w.Offset || !bytes.Equal(g.Data, w.Data) {
				t.Errorf("tensor %d: got %s %s %v @%d, want %s %s %v @%d", i, g.Name, g.Type, g.Dims, g.Offset, w.Name, w.Type, w.Dims, w.Offset)
			}
			if g.Offset%uint64(want) != 0 {
				t.Errorf("tensor %s offset %d not aligned to %d", g.Name, g.Offset, want)
			}
		}
		// Writing what was read gives the same bytes.
		if again := encode(t, f.KV, f.Tensors); !bytes.Equal(again, data) {
			t.Errorf("align %d: rewrite differs", align)
		}
		if len(data)%want != 0 {
			t.Errorf("file of %d bytes not padded to %d", len(data), want)
		}
	}
}

func TestAccessors(t *testing.T) {
	f, err := Decode("a", encode(t, everyValue(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := f.String("general.architecture"); err != nil || s != "llama" {
		t.Errorf("String = %q, %v", s, err)
	}
	if u, err := f.Uint("u16"); err != nil || u != 65535 {
		t.Errorf("Uint(u16) = %d, %v", u, err)
	}
	if _, err := f.Uint("i32"); err == nil || !strings.Contains(err.Error(), "non-negative") {
		t.Errorf("Uint(-1) = %v", err)
	}
	if v, err := f.Float("f32"); err != nil || v != -0.5 {
		t.Errorf("Float(f32) = %v, %v", v, err)
	}
	if v, err := f.Float("u8"); err != nil || v != 255 {
		t.Errorf("Float(u8) = %v, %v", v, err)
	}
	if b, err := f.Bool("t"); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if _, err := f.String("u8"); err == nil || !strings.Contains(err.Error(), "is UINT8, want STRING") {
		t.Errorf("String(u8) = %v", err)
	}
	if _, err := f.String("a.str"); err == nil || !strings.Contains(err.Error(), "ARRAY of STRING") {
		t.Errorf("String(a.str) = %v", err)
	}
	if _, err := f.Uint("missing"); err == nil || !strings.Contains(err.Error(), "missing is missing") {
		t.Errorf("Uint(missing) = %v", err)
	}
}

// header builds the start of a file by hand.
type header struct{ bytes.Buffer }

func (h *header) u32(v uint32) *header { binary.Write(&h.Buffer, binary.LittleEndian, v); return h }
func (h *header) u64(v uint64) *header { binary.Write(&h.Buffer, binary.LittleEndian, v); return h }
func (h *header) str(s string) *header { h.u64(uint64(len(s))); h.WriteString(s); return h }
func start(version uint32, nt, nkv uint64) *header {
	h := &header{}
	h.WriteString("GGUF")
	return h.u32(version).u64(nt).u64(nkv)
}

// tensorFile is a one-tensor file: F32 dims [dims...] at offset off, with
// body bytes of data after the aligned header.
func tensorFile(typ uint32, dims []uint64, off uint64, body int) []byte {
	h := start(3, 1, 0).str("w").u32(uint32(len(dims)))
	for _, d := range dims {
		h.u64(d)
	}
	h.u32(typ).u64(off)
	for h.Len()%32 != 0 {
		h.WriteByte(0)
	}
	h.Write(make([]byte, body))
	return h.Bytes()
}

func TestHostile(t *testing.T) {
	good := encode(t, everyValue(), testTensors(t))
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"magic", []byte("GGML\x03\x00\x00\x00"), `starts with "GGML"`},
		{"v1", start(1, 0, 0).Bytes(), "version 1"},
		{"big-endian", (&header{}).u32(0x46554747).u32(0x03000000).Bytes(), "big-endian"},
		{"v4", start(4, 0, 0).Bytes(), "version 4"},
		{"tensor count", start(3, 1<<40, 0).Bytes(), "1099511627776 tensors"},
		{"kv count lies", start(3, 0, 1000).Bytes(), "1000 metadata pairs and 0 tensors need"},
		{"key length", start(3, 0, 1).u64(1 << 50).u64(0).u64(0).Bytes(), "more than the"},
		{"key truncated", start(3, 0, 1).u64(100).Bytes(), "truncated"},
		{"value type", start(3, 0, 1).str("k").u32(13).Bytes(), "unknown value type 13"},
		{"array length", start(3, 0, 1).str("k").u32(9).u32(4).u64(1 << 23).Bytes(), "needs at least"},
		{"array huge", start(3, 0, 1).str("k").u32(9).u32(0).u64(1 << 40).Bytes(), "more than the"},
		{"string array lies", start(3, 0, 1).str("k").u32(9).u32(8).u64(1000).Bytes(), "needs at least 8000 bytes"},
		{"array elem type", start(3, 0, 1).str("k").u32(9).u32(77).u64(1).Bytes(), "unknown value type 77"},
		{"bool", func() []byte { h := start(3, 0, 1).str("k").u32(7); h.WriteByte(2); return h.Bytes() }(), "BOOL byte is 2"},
		{"dup key", start(3, 0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(1).Bytes(), `"k" appears twice`},
		{"alignment type", start(3, 0, 1).str(KeyAlignment).u32(10).u64(32).Bytes(), "want a UINT32 power of two"},
		{"alignment 48", start(3, 0, 1).str(KeyAlignment).u32(4).u32(48).Bytes(), "power of two"},
		{"unsupported type", tensorFile(16, []uint64{256}, 0, 66), "IQ2_XXS"},
		{"undefined type", tensorFile(99, []uint64{256}, 0, 66), "type 99"},
		{"rank 0", tensorFile(0, nil, 0, 0), "0 dimensions"},
		{"rank 5", tensorFile(0, []uint64{1, 1, 1, 1, 1}, 0, 4), "5 dimensions"},
		{"zero dim", tensorFile(0, []uint64{4, 0}, 0, 0), "dimension 1 is 0"},
		{"absurd dims", tensorFile(0, []uint64{1 << 30, 1 << 30}, 0, 0), "at most"},
		{"block", tensorFile(8, []uint64{33}, 0, 34), "not a multiple of the Q8_0 block size 32"},
		{"offset align", tensorFile(0, []uint64{4}, 8, 32), "not a multiple of the alignment"},
		{"lying size", tensorFile(0, []uint64{1000}, 0, 100), "runs past the end"},
		{"trailing", tensorFile(0, []uint64{4}, 0, 100), "after the last tensor"},
		{"trunc data", good[:len(good)-40], "runs past the end"},
	} {
		_, err := Decode(c.name, c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		} else if !errors.Is(err, ErrFormat) && !errors.Is(err, quant.ErrUnsupported) {
			t.Errorf("%s: %v wraps neither ErrFormat nor ErrUnsupported", c.name, err)
		}
	}
}

// TestOverlap: two tensors claiming the same bytes.
func TestOverlap(t *testing.T) {
	h := start(3, 2, 0)
	for _, n := range []string{"a", "b"} {
		h.str(n).u32(1).u64(8).u32(0).u64(0)
	}
	for h.Len()%32 != 0 {
		h.WriteByte(0)
	}
	h.Write(make([]byte, 32))
	if _, err := Decode("o", h.Bytes()); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlap: %v", err)
	}
}

// TestTruncations: every prefix of a valid file fails cleanly.
func TestTruncations(t *testing.T) {
	data := encode(t, everyValue()[:8], testTensors(t)[:2])
	for n := 0; n < len(data); n += 1 + n/64 {
		if _, err := Decode("p", data[:n]); err == nil {
			t.Fatalf("prefix of %d of %d bytes accepted", n, len(data))
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ts := testTensors(t)
	data := encode(t, everyValue(), ts)
	path := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ts {
		if !bytes.Equal(f.Tensors[i].Data, w.Data) {
			t.Errorf("Open: tensor %s differs", w.Name)
		}
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(dir) = %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	tn := func(typ quant.Type, dims []uint64, n int) *Tensor {
		return &Tensor{Name: "x", Type: typ, Dims: dims, Data: make([]byte, n)}
	}
	for _, c := range []struct {
		name string
		kv   []KV
		ts   []*Tensor
		want string
	}{
		{"value", []KV{{"k", 3}}, nil, "int cannot be stored"},
		{"dup", []KV{{"k", uint8(1)}, {"k", uint8(2)}}, nil, "twice"},
		{"align", []KV{{KeyAlignment, uint32(3)}}, nil, "power of two"},
		{"nested", []KV{{"k", []any{uint8(1)}}}, nil, "array of arrays"},
		{"size", nil, []*Tensor{tn(quant.F32, []uint64{4}, 15)}, "want 16"},
		{"type", nil, []*Tensor{tn(quant.IQ4_XS, []uint64{256}, 136)}, "IQ4_XS"},
		{"block", nil, []*Tensor{tn(quant.Q4_K, []uint64{32}, 0)}, "block size 256"},
		{"names", nil, []*Tensor{tn(quant.F32, []uint64{1}, 4), tn(quant.F32, []uint64{1}, 4)}, "repeated"},
	} {
		if err := Write(&bytes.Buffer{}, c.kv, c.ts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestHandBuilt decodes a file laid out byte by byte from the
// specification, not by Write: version 2, alignment 64, a UINT32 and an
// array of strings, an F32 tensor [2, 3] (ne order) and a Q8_0 tensor
// [32] at the next aligned offset.
func TestHandBuilt(t *testing.T) {
	h := start(2, 2, 2)
	h.str(KeyAlignment).u32(uint32(TypeUint32)).u32(64)
	h.str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("a").str("bc")
	h.str("w").u32(2).u64(2).u64(3).u32(0).u64(0)
	h.str("q").u32(1).u64(32).u32(8).u64(64)
	for h.Len()%64 != 0 {
		h.WriteByte(0)
	}
	start := h.Len()
	for i := 0; i < 6; i++ {
		h.u32(math.Float32bits(float32(i) + 0.5))
	}
	for h.Len() < start+64 {
		h.WriteByte(0)
	}
	h.Write([]byte{0x00, 0x3c}) // d = 1
	for i := 0; i < 32; i++ {
		h.WriteByte(byte(int8(i - 16)))
	}
	f, err := Decode("hand.gguf", h.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || f.Alignment != 64 || f.DataOffset != int64(start) {
		t.Fatalf("version %d alignment %d data offset %d (want %d)", f.Version, f.Alignment, f.DataOffset, start)
	}
	if v, _ := f.Get("tokenizer.ggml.tokens"); !reflect.DeepEqual(v, []string{"a", "bc"}) {
		t.Errorf("tokens %#v", v)
	}
	w, _ := f.Tensor("w")
	x := make([]float32, 6)
	if err := quant.Dequantize(w.Type, x, w.Data); err != nil || x[5] != 5.5 || !reflect.DeepEqual(w.Dims, []uint64{2, 3}) {
		t.Errorf("w: %v %v %v", w.Dims, x, err)
	}
	q, _ := f.Tensor("q")
	y := make([]float32, 32)
	if err := quant.Dequantize(q.Type, y, q.Data); err != nil || y[0] != -16 || y[31] != 15 || q.Offset != 64 {
		t.Errorf("q: offset %d %v %v", q.Offset, y, err)
	}
}
