package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func sample() []*Tensor {
	return []*Tensor{
		{"model.embed_tokens.weight", "BF16", []int{3, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"scalar", "F32", []int{}, []byte{0, 0, 128, 63}},
		{"empty", "F16", []int{0, 4}, nil},
		{"ids", "I64", []int{1}, []byte{7, 0, 0, 0, 0, 0, 0, 0}},
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	meta := map[string]string{"format": "pt"}
	if err := Write(&buf, meta, sample()); err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(buf.Bytes())
	if hl%8 != 0 {
		t.Errorf("header length %d not a multiple of 8", hl)
	}
	f, err := Decode("rt", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Errorf("metadata %v", f.Metadata)
	}
	for _, w := range sample() {
		g, ok := f.Tensor(w.Name)
		if !ok || g.DType != w.DType || !reflect.DeepEqual(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("tensor %s: got %+v", w.Name, g)
		}
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Tensors) != 4 || !bytes.Equal(g.Tensors[0].Data, sample()[0].Data) {
		t.Errorf("Open: %+v", g.Tensors)
	}
	if _, err := Open(filepath.Dir(path)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(dir) = %v", err)
	}
}

func file(header string, body int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), make([]byte, body)...)
}

func TestHostile(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte{1, 2}, "too short"},
		{"length lies", binary.LittleEndian.AppendUint64(nil, 1000), "runs past the end"},
		{"length huge", binary.LittleEndian.AppendUint64(nil, 1<<40), "exceeds"},
		{"not object", file(`[1]`, 0), "header does not start with '{'"},
		{"empty header", file(``, 0), "header does not start with '{'"},
		{"bad utf-8", file("{\"__metadata__\":{\"a\":\"\xff\"}}", 0), "header: not valid UTF-8 (byte 22 of 26 is 0xff)"},
		{"lone surrogate", file(`{"__metadata__":{"a":"\ud800"}}`, 0), `header: lone UTF-16 surrogate \ud800 at byte 22 (no character)`},
		{"nested dup", file(`{"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), `header: duplicate key "dtype" in "a"`},
		{"dup", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{}}`, 4), "duplicate key"},
		{"dtype", file(`{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}`, 4), `unknown dtype "F33"`},
		{"size", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4), "needs 8"},
		{"past end", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), "run past the end"},
		{"gap", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "gap of 4"},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), "overlap"},
		{"trailing", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8), "4 bytes of data after the last tensor (the data section has 8 bytes, the tensors end at 4)"},
		{"overflow", file(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, 4), "at most"},
		{"negative", file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4), "not an integer"},
		{"rank", file(`{"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}}`, 4), "rank 9"},
		{"meta", file(`{"__metadata__":{"k":1}}`, 0), "not a string"},
		{"after", file(`{} x`, 0), "invalid character"},
		{"two objects", file(`{} {}`, 0), "after the header"},
		{"missing", file(`{"a":{"dtype":"F32","shape":[1]}}`, 4), "lacks"},
		{"deep", file(`{"__metadata__":{"a":`+strings.Repeat("[", 33)+strings.Repeat("]", 33)+`}}`, 0), "nests more than 32 levels deep (byte 51)"},
		{"brackets in strings", file(`{"__metadata__":{"a":"`+strings.Repeat("[", 40)+`\"{"}}`+strings.Repeat("]", 40), 0), "invalid character ']'"},
	} {
		_, err := Decode(c.name, c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat containing %q", c.name, err, c.want)
		}
	}
}

// TestDeepHeader: a 400 KB header nesting 200,000 levels deep is refused
// before any decoder sees it, in memory within twice its size (it
// took about 680 MB when the decoders saw it first).
func TestDeepHeader(t *testing.T) {
	depth := 200_000
	data := file(`{"__metadata__":{"a":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}}`, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Decode("deep.safetensors", data)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nests more than 32 levels deep") {
		t.Fatalf("%v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(2*len(data)) {
		t.Errorf("refusing it allocated %d bytes, more than twice the file's %d", alloc, len(data))
	}
}

func TestWriteErrors(t *testing.T) {
	for _, ts := range [][]*Tensor{
		{{"a", "F32", []int{2}, make([]byte, 4)}},
		{{"a", "X", []int{1}, make([]byte, 4)}},
		{{KeyMetadata, "F32", []int{1}, make([]byte, 4)}},
		{{"a", "F32", []int{1}, make([]byte, 4)}, {"a", "F32", []int{1}, make([]byte, 4)}},
	} {
		if err := Write(&bytes.Buffer{}, nil, ts); err == nil {
			t.Errorf("Write(%v) accepted", ts[0])
		}
	}
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, map[string]string{"a": "b"}, sample()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode("fuzz", data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, g.Metadata, g.Tensors); err != nil {
			t.Fatalf("decoded file does not write back: %v", err)
		}
		h, err := Decode("again", out.Bytes())
		if err != nil || len(h.Tensors) != len(g.Tensors) {
			t.Fatalf("rewrite: %v", err)
		}
	})
}

// TestParseHeaderCheck: a reader's Check sees each tensor's dtype and shape
// before the size and offsets are checked, and its error comes back
// unchanged; the format's errors are *Error naming the tensor or key.
func TestParseHeaderCheck(t *testing.T) {
	mine := errors.New("not mine")
	var seen []string
	check := func(name, dtype string, shape []int) error {
		seen = append(seen, fmt.Sprint(name, dtype, shape))
		if name == "b" {
			return mine
		}
		return nil
	}
	hdr := `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"X","shape":[7],"data_offsets":[9,1]}}`
	if _, err := ParseHeader([]byte(hdr), 4, check); err != mine {
		t.Errorf("error %v, want check's", err)
	}
	if strings.Join(seen, " ") != "aF32[1] bX[7]" {
		t.Errorf("check saw %q", seen)
	}
	_, err := ParseHeader([]byte(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 4, nil)
	var e *Error
	if !errors.As(err, &e) || e.Tensor != "a" || e.Error() != "not a valid safetensors file: tensor a: data_offsets [0, 4] hold 4 bytes, shape [2] dtype F32 needs 8" {
		t.Errorf("error %#v", err)
	}
	_, err = ParseHeader([]byte(`{"__metadata__":{"k":1}}`), 0, nil)
	if !errors.As(err, &e) || e.Key != "k" || !errors.Is(err, ErrFormat) {
		t.Errorf("error %#v", err)
	}
	h, err := ParseHeader([]byte(`{"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"__metadata__":{"m":"x"}}`), 3, nil)
	if err != nil || len(h.Tensors) != 2 || h.Tensors[0].Name != "a" || h.Tensors[1].Begin != 1 || h.Metadata["m"] != "x" {
		t.Errorf("header %+v, %v", h, err)
	}
}
