package sample

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pattern is the value make.py stores at flat index i of tensor name.
func pattern(name string, i int) float32 {
	if name == "attn" {
		const n = 9
		if i%n == (i/n*5+3)%n {
			return 0.5
		}
		return 1.0 / 16
	}
	off := map[string]int{"q": 0, "k": 1, "v": 2}[name]
	return float32((i*7+off*5)%17-8) / 4
}

func checkPattern(t *testing.T, name string, x []float32, n int) {
	t.Helper()
	if len(x) != n {
		t.Fatalf("tensor %s has %d elements, want %d", name, len(x), n)
	}
	for i, v := range x {
		if v != pattern(name, i) {
			t.Fatalf("tensor %s[%d] = %v, want %v", name, i, v, pattern(name, i))
		}
	}
}

// TestInteropFiles reads files written by NumPy and by a safetensors writer
// laid out as the reference implementation (testdata/interop/make.py).
func TestInteropFiles(t *testing.T) {
	const L, H, HKV, N, D = 2, 4, 2, 9, 3
	tests := []struct {
		file          string
		l, h, hkv, d  int
		qkv, attn     bool
		dtype         string
		prefix        int
		model, source string
	}{
		{"attn_nn_f4.npy", 1, 1, 0, 0, false, true, "F32", 0, "", ""},
		{"attn_hnn_f2.npy", 1, H, 0, 0, false, true, "F16", 0, "", ""},
		{"attn_lhnn_be_f8.npy", L, H, 0, 0, false, true, "F64", 0, "", ""},
		{"attn_v2.npy", 1, H, 0, 0, false, true, "F32", 0, "", ""},
		{"attn_v3.npy", 1, H, 0, 0, false, true, "F32", 0, "", ""},
		{"qkv_f4.npz", L, H, HKV, D, true, false, "F32", 0, "", ""},
		{"qkv_attn_mixed_deflated.npz", L, H, HKV, D, true, true, "attn=F64 k=F16 q=F16 v=F16", 0, "", ""},
		{"qkv_bf16.safetensors", L, H, HKV, D, true, false, "BF16", 7, "numpy-pattern", "testdata/interop/make.py"},
		{"qkv_attn_f16.safetensors", L, H, HKV, D, true, true, "F16", 0, "", ""},
		{"attn_f64.safetensors", 1, H, 0, 0, false, true, "F64", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Read(filepath.Join("testdata", "interop", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.L != tt.l || s.H != tt.h || s.HKV != tt.hkv || s.N != N || s.D != tt.d {
				t.Fatalf("shape L=%d H=%d HKV=%d N=%d D=%d, want %d %d %d %d %d", s.L, s.H, s.HKV, s.N, s.D, tt.l, tt.h, tt.hkv, N, tt.d)
			}
			if s.HasQKV() != tt.qkv || s.HasAttn() != tt.attn {
				t.Fatalf("HasQKV %t HasAttn %t, want %t %t", s.HasQKV(), s.HasAttn(), tt.qkv, tt.attn)
			}
			if tt.qkv {
				checkPattern(t, "q", s.Q, tt.l*tt.h*N*tt.d)
				checkPattern(t, "k", s.K, tt.l*tt.hkv*N*tt.d)
				checkPattern(t, "v", s.V, tt.l*tt.hkv*N*tt.d)
			}
			if tt.attn {
				checkPattern(t, "attn", s.Attn, tt.l*tt.h*N*N)
			}
			if s.SourceDType != tt.dtype {
				t.Errorf("SourceDType %q, want %q", s.SourceDType, tt.dtype)
			}
			if s.Meta.Prefix != tt.prefix || s.Meta.Model != tt.model || s.Meta.Source != tt.source {
				t.Errorf("Meta %+v, want prefix %d model %q source %q", s.Meta, tt.prefix, tt.model, tt.source)
			}
		})
	}
}

func TestInteropMetadata(t *testing.T) {
	s, err := Read(filepath.Join("testdata", "interop", "qkv_bf16.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{
		Model:        "numpy-pattern",
		Source:       "testdata/interop/make.py",
		Description:  "pattern(t, i) = ((7i + 5 offset(t)) mod 17 - 8) / 4",
		Prefix:       7,
		Scale:        0.5,
		Tokens:       []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"},
		Needles:      []int{1, 4},
		NeedleProbes: []int{0},
		Extra:        map[string]string{"made_by": "make.py"},
	}
	if !reflect.DeepEqual(s.Meta, want) {
		t.Errorf("Meta\n got %+v\nwant %+v", s.Meta, want)
	}
	if s.Prefix() != 7 || s.Scale() != 0.5 {
		t.Errorf("Prefix() %d Scale() %v, want 7 0.5", s.Prefix(), s.Scale())
	}
}

// TestDecodeVariants covers accepted inputs that are not interop files.
func TestDecodeVariants(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		data    func(t *testing.T) []byte
		l, h, n int
		check   func(t *testing.T, s *Sample)
	}{
		{"safetensors by header shape, no extension", "sample", func(*testing.T) []byte { return qkvST("") }, 1, 2, 8, nil},
		{"safetensors with padded header and null metadata", "x.safetensors", func(*testing.T) []byte {
			return st(header("null", tinfo("attn", "F32", []int{4, 4}, 0, 64))+"       ", probs(16, 4))
		}, 1, 1, 4, nil},
		{"safetensors with offsets out of name order", "x.safetensors", func(*testing.T) []byte {
			return st(header("",
				tinfo("q", "F32", []int{1, 2, 8, 4}, 0, 256),
				tinfo("v", "F32", []int{1, 1, 8, 4}, 256, 384),
				tinfo("k", "F32", []int{1, 1, 8, 4}, 384, 512)), f32s(128))
		}, 1, 2, 8, func(t *testing.T, s *Sample) {
			if s.Q[1] != 0.125 || s.V[0] != 0 || s.K[0] != 0 || s.K[1] != 0.125 {
				t.Errorf("tensors read from the wrong offsets: q[1]=%v v[0]=%v k[1]=%v", s.Q[1], s.V[0], s.K[1])
			}
		}},
		{"safetensors attn [H,N,N] with q", "x.safetensors", func(*testing.T) []byte {
			return st(header("",
				tinfo("attn", "F32", []int{2, 8, 8}, 0, 512),
				tinfo("k", "F32", []int{1, 1, 8, 4}, 512, 640),
				tinfo("q", "F32", []int{1, 2, 8, 4}, 640, 896),
				tinfo("v", "F32", []int{1, 1, 8, 4}, 896, 1024)), append(probs(128, 8), f32s(128)...))
		}, 1, 2, 8, nil},
		{"metadata with unknown keys and empty strings", "x.safetensors", func(*testing.T) []byte {
			return qkvST(`{"haeols.format":"1","model":"","zzz":"1","aaa":"<s> & \"q\""}`)
		}, 1, 2, 8, func(t *testing.T, s *Sample) {
			want := map[string]string{"zzz": "1", "aaa": `<s> & "q"`}
			if !reflect.DeepEqual(s.Meta.Extra, want) {
				t.Errorf("Extra %v, want %v", s.Meta.Extra, want)
			}
		}},
		{"npy big-endian float32", "a.npy", func(*testing.T) []byte {
			b := []byte{0x3f, 0x80, 0, 0, 0, 0, 0, 0, 0x3e, 0x80, 0, 0, 0x3f, 0x40, 0, 0} // 1, 0, 0.25, 0.75
			return npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", b)
		}, 1, 1, 2, func(t *testing.T, s *Sample) {
			if !reflect.DeepEqual(s.Attn, []float32{1, 0, 0.25, 0.75}) {
				t.Errorf("Attn %v, want [1 0 0.25 0.75]", s.Attn)
			}
		}},
		{"npy with Python 2 long dims and double quotes", "a.npy", func(*testing.T) []byte {
			return npy(`{"descr": "<f4", "fortran_order": False, "shape": (2L, 2L)}`, probs(4, 2))
		}, 1, 1, 2, nil},
		{"npy version 2", "a.npy", func(*testing.T) []byte {
			return npyVersion(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", probs(9, 3))
		}, 1, 1, 3, nil},
		{"npz attention only, deflated", "a.npz", func(t *testing.T) []byte {
			return npz(t, member{name: "attn.npy", data: npyProbs(3, 4, 4), method: zip.Deflate})
		}, 1, 3, 4, nil},
		{"npz large deflated member read in chunks", "a.npz", func(t *testing.T) []byte {
			return npz(t, member{name: "attn.npy", data: npyProbs(2, 128, 128), method: zip.Deflate})
		}, 1, 2, 128, func(t *testing.T, s *Sample) {
			for i, v := range s.Attn {
				if v != probAt(i, 128) {
					t.Fatalf("attn[%d] = %v, want %v", i, v, probAt(i, 128))
				}
			}
		}},
		{"magic beats a wrong extension", "a.safetensors", func(*testing.T) []byte { return npyProbs(4, 4) }, 1, 1, 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Decode(tt.file, tt.data(t))
			if err != nil {
				t.Fatal(err)
			}
			if s.L != tt.l || s.H != tt.h || s.N != tt.n {
				t.Errorf("L=%d H=%d N=%d, want %d %d %d", s.L, s.H, s.N, tt.l, tt.h, tt.n)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// TestNPZInflatesPastDeclaredSize checks that a member whose data inflates to
// more than its declared size is rejected, not read to the end.
func TestNPZInflatesPastDeclaredSize(t *testing.T) {
	arr := npyProbs(4, 4)
	data := append(arr, make([]byte, 1<<20)...) // 1 MiB more than the header says
	b := npz(t, member{name: "attn.npy", data: data, method: zip.Deflate, usize: uint64(len(arr))})
	_, err := Decode("bomb.npz", b)
	if err == nil || !strings.Contains(err.Error(), `tensor "attn": reading data after all 16 elements`) {
		t.Fatalf("err = %v, want a read error after the data", err)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		is   error  // the cause, if it has a sentinel
		want string // else text in the message
	}{
		{"missing file", filepath.Join(dir, "nope.safetensors"), fs.ErrNotExist, ""},
		{"directory", dir, nil, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(tt.path)
			var e *Error
			if err == nil || !errors.As(err, &e) || e.File != tt.path {
				t.Fatalf("Read(%s) error %v, want an *Error naming the file", tt.path, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read(%s) error %v, want %v / %q", tt.path, err, tt.is, tt.want)
			}
		})
	}
}

// TestDecodeDoesNotKeepData checks that the sample does not alias the input.
func TestDecodeDoesNotKeepData(t *testing.T) {
	b := qkvST("")
	s, err := Decode("x.safetensors", b)
	if err != nil {
		t.Fatal(err)
	}
	q0 := s.Q[1]
	for i := range b {
		b[i] = 0xff
	}
	if s.Q[1] != q0 || math.IsNaN(float64(s.Q[1])) {
		t.Fatalf("sample changed with the input buffer")
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"x.NPY", []byte("anything"), "npy"},
		{"x.npz", nil, "npz"},
		{"dir.npy/file", []byte("x"), ""},
		{"x", []byte(npyMagic), "npy"},
		{"x", []byte(zipMagic), "npz"},
		{"x", []byte(zipEmpty), "npz"},
		{"x", append(make([]byte, 8), '{'), "safetensors"},
		{"x.bin", bytes.Repeat([]byte{1}, 16), ""},
	}
	for _, tt := range tests {
		if got := detect(tt.name, tt.data); got != tt.want {
			t.Errorf("detect(%q, %q) = %q, want %q", tt.name, tt.data, got, tt.want)
		}
	}
}
