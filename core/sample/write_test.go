package sample

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

	"github.com/haeols/haeols/core/half"
)

func fullMeta() Meta {
	return Meta{
		Model:        "test <model> & co",
		Source:       "generator needle seed=7",
		Description:  "unicode: é 日本 \u2028 \"quoted\"",
		Prefix:       6,
		Scale:        0.1234567890123,
		Tokens:       []string{"<s>", " Once", " upon", "\n", "", "a", "\t", "é"},
		Needles:      []int{1, 5},
		NeedleProbes: []int{0, 1},
		Extra:        map[string]string{"b": "2", "a": "1", "z.y": "", "é": "x"},
	}
}

func TestWriteRoundTrip(t *testing.T) {
	samples := []struct {
		name string
		s    func() *Sample
	}{
		{"qkv and attn", func() *Sample { return testSample(2, 4, 2, 8, 3, true, true) }},
		{"qkv only, full metadata", func() *Sample {
			s := testSample(1, 2, 1, 8, 4, true, false)
			s.Meta = fullMeta()
			return s
		}},
		{"attention only", func() *Sample { return testSample(1, 3, 0, 8, 0, false, true) }},
	}
	dtypes := []struct {
		dtype string
		round func(float32) float32
	}{
		{F32, func(x float32) float32 { return x }},
		{F16, half.RoundF16},
		{BF16, half.RoundBF16},
	}
	for _, sc := range samples {
		for _, dt := range dtypes {
			t.Run(sc.name+"/"+dt.dtype, func(t *testing.T) {
				in := sc.s()
				var buf bytes.Buffer
				if err := WriteSafetensors(&buf, in, dt.dtype); err != nil {
					t.Fatal(err)
				}
				out, err := Decode("rt.safetensors", buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				want := *in
				for _, p := range []*[]float32{&want.Q, &want.K, &want.V, &want.Attn} {
					if *p == nil {
						continue
					}
					r := make([]float32, len(*p))
					for i, x := range *p {
						r[i] = dt.round(x)
					}
					*p = r
				}
				want.SourceDType = dt.dtype
				if !reflect.DeepEqual(*out, want) {
					t.Errorf("round trip changed the sample\n got %+v\nwant %+v", out.Meta, want.Meta)
				}
				if dt.dtype != F32 && in.HasQKV() && reflect.DeepEqual(out.Q, in.Q) {
					t.Errorf("%s round trip is exact: the test values are not discriminating", dt.dtype)
				}
			})
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	s := testSample(1, 2, 1, 8, 4, true, true)
	s.Meta = fullMeta()
	for k := range 50 {
		s.Meta.Extra[string(rune('A'+k))] = "v"
	}
	var first []byte
	for i := range 20 {
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, s, F16); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), first) {
			t.Fatalf("write %d differs from the first", i)
		}
	}
}

// TestWriteGolden pins the exact bytes of a small file
// (testdata/golden/tiny_f16.safetensors; -update rewrites it).
func TestWriteGolden(t *testing.T) {
	s := &Sample{L: 1, H: 2, HKV: 1, N: 3, D: 2,
		Q:    []float32{1, -2, 0.5, 0.1, 65504, float32(math.Copysign(0, -1)), 1e-8, 3, 4, 5, 6, 7},
		K:    []float32{1, 2, 3, 4, 5, 6},
		V:    []float32{-1, -2, -3, -4, -5, -6},
		Attn: []float32{1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5, 1, 0, 0, 0.5, 0.5, 0, 0.25, 0.25, 0.5},
		Meta: Meta{Model: "tiny", Prefix: 2, Tokens: []string{"a", "b", "<c>"}, Needles: []int{1}, Extra: map[string]string{"note": "golden"}},
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, s, F16); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "tiny_f16.safetensors")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), golden) {
		t.Fatalf("output differs from %s (run with -update if the change is intended)\n got %q\nwant %q", path, buf.Bytes(), golden)
	}
	hl := binary.LittleEndian.Uint64(golden)
	wantHeader := `{"__metadata__":{"haeols.format":"1","model":"tiny","needles":"[1]","note":"golden","prefix":"2","tokens":"[\"a\",\"b\",\"<c>\"]"},` +
		`"attn":{"dtype":"F16","shape":[1,2,3,3],"data_offsets":[0,36]},` +
		`"k":{"dtype":"F16","shape":[1,1,3,2],"data_offsets":[36,48]},` +
		`"q":{"dtype":"F16","shape":[1,2,3,2],"data_offsets":[48,72]},` +
		`"v":{"dtype":"F16","shape":[1,1,3,2],"data_offsets":[72,84]}}`
	if got := strings.TrimRight(string(golden[8:8+hl]), " "); got != wantHeader {
		t.Errorf("header\n got %s\nwant %s", got, wantHeader)
	}
	if hl%8 != 0 || uint64(len(golden)) != 8+hl+84 {
		t.Errorf("header length %d not a multiple of 8, or file length %d != 8+%d+84", hl, len(golden), hl)
	}
	// q[4] = 65504 is the largest float16, 0x7bff, at data offset 48+8.
	if q4 := binary.LittleEndian.Uint16(golden[8+hl+56:]); q4 != 0x7bff {
		t.Errorf("q[4] stored as %#04x, want 0x7bff", q4)
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name   string
		s      func() *Sample
		dtype  string
		tensor string
		want   string
	}{
		{"unknown dtype", func() *Sample { return testSample(1, 2, 1, 8, 4, true, false) }, "F8", "", `cannot write dtype "F8" (want F32, F16 or BF16)`},
		{"lower-case dtype", func() *Sample { return testSample(1, 2, 1, 8, 4, true, false) }, "f16", "", `cannot write dtype "f16"`},
		{"invalid sample", func() *Sample {
			s := testSample(1, 2, 1, 8, 4, true, false)
			s.V = nil
			return s
		}, F32, "v", "missing"},
		{"F16 overflow", func() *Sample {
			s := testSample(1, 2, 1, 8, 4, true, false)
			s.K[6] = 65520
			return s
		}, F16, "k", "value 65520 at [0 0 1 2] (flat index 6) does not fit F16; write F32 or BF16"},
		{"BF16 overflow", func() *Sample {
			s := testSample(1, 2, 1, 8, 4, true, true)
			s.V[31] = -math.MaxFloat32
			return s
		}, BF16, "v", "does not fit BF16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := WriteSafetensors(&buf, tt.s(), tt.dtype)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("WriteSafetensors error %v, want one containing %q", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Tensor != tt.tensor {
				t.Errorf("error %#v, want an *Error for tensor %q", err, tt.tensor)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written before the error", buf.Len())
			}
		})
	}
	// F16 keeps the largest finite value.
	s := testSample(1, 2, 1, 8, 4, true, false)
	s.Q[0] = 65519
	if err := WriteSafetensors(&bytes.Buffer{}, s, F16); err != nil {
		t.Errorf("65519 rounds to 65504 in F16, want no error: %v", err)
	}
}

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.after {
		return w.after, errors.New("disk full")
	}
	w.after -= len(p)
	return len(p), nil
}

func TestWriteWriterError(t *testing.T) {
	s := testSample(2, 4, 2, 64, 16, true, true) // more than one buffer of data
	for _, after := range []int{0, 100, 70000} {
		if err := WriteSafetensors(&failWriter{after}, s, F32); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("failing after %d bytes: error %v, want disk full", after, err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.safetensors")
	s := testSample(1, 2, 1, 8, 4, true, true)
	s.Meta = fullMeta()
	if err := WriteFile(path, s, BF16); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.SourceDType != BF16 || !reflect.DeepEqual(got.Meta, s.Meta) || got.Q[3] != half.RoundBF16(s.Q[3]) {
		t.Errorf("read back %+v", got.Meta)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(ents))
	}

	// Errors name the file and leave nothing behind.
	bad := testSample(1, 2, 1, 8, 4, true, false)
	bad.Q[0] = 1e9
	badPath := filepath.Join(dir, "bad.safetensors")
	err = WriteFile(badPath, bad, F16)
	var e *Error
	if !errors.As(err, &e) || e.File != badPath || e.Tensor != "q" {
		t.Errorf("WriteFile error %v, want an *Error naming %s and tensor q", err, badPath)
	}
	noDir := filepath.Join(dir, "missing", "x.safetensors")
	if err := WriteFile(noDir, s, F32); err == nil || !strings.Contains(err.Error(), noDir) {
		t.Errorf("WriteFile into a missing directory: error %v, want one naming %s", err, noDir)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries after failed writes, want 1", len(ents))
	}
}
