package main

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/sample"
)

// TestParseIndices checks the -layers/-heads syntax: indices and ranges,
// and usage errors naming the flag.
func TestParseIndices(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"", nil, ""},
		{"3", []int{3}, ""},
		{"0,3", []int{0, 3}, ""},
		{"0-3", []int{0, 1, 2, 3}, ""},
		{" 5 , 1-2 ,0", []int{5, 1, 2, 0}, ""},
		{"2-2", []int{2}, ""},
		{"x", nil, `-layers: "x" is not an index or a range a-b of indices (counted from 0)`},
		{"1,", nil, `-layers: "" is not an index`},
		{"-1", nil, `-layers: "-1" is not an index`},
		{"3-1", nil, `-layers: range "3-1" runs backwards`},
		{"1-2-3", nil, `-layers: "1-2-3" is not an index`},
		{"0-1,1", nil, "-layers: index 1 given twice"},
		{"0-100000", nil, "-layers: more than 65536 indices"},
	}
	for _, tc := range tests {
		got, err := parseIndices("layers", tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestCaptureSelection captures the byte model (2 layers, 4 query heads, 2
// KV heads) as a llama2.c file, a GGUF file and a Hugging Face folder,
// whole and with -layers/-heads: the selected capture is the corresponding
// slice of the whole one bit for bit, with the selection in its metadata;
// indices out of range name the flag and the model's count.
func TestCaptureSelection(t *testing.T) {
	bin, ggufPath, ck := byteGGUF(t)
	dir := t.TempDir()
	hfDir := filepath.Join(dir, "bytes-hf")
	if err := model.WriteHF(hfDir, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	capture := func(t *testing.T, m, name string, flags ...string) *sample.Sample {
		t.Helper()
		out := filepath.Join(dir, name+".safetensors")
		args := append([]string{"capture", "-tokens", "24", "-dtype", "F32", "-o", out}, flags...)
		if code, _, errOut := cli(t, append(args, m)...); code != 0 {
			t.Fatalf("capture %v %s: exit %d: %s", flags, m, code, errOut)
		}
		s, err := sample.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	for _, m := range []struct{ name, path string }{{"llama2c", bin}, {"gguf", ggufPath}, {"hf", hfDir}} {
		t.Run(m.name, func(t *testing.T) {
			full := capture(t, m.path, m.name+"-full")
			for _, c := range []struct {
				flags         []string
				layers, heads []int // original indices kept
				meta          map[string]string
			}{
				{[]string{"-layers", "1"}, []int{1}, []int{0, 1}, map[string]string{"layers": "[1]"}},
				{[]string{"-heads", "1"}, []int{0, 1}, []int{1}, map[string]string{"kv_heads": "[1]"}},
				{[]string{"-layers", "1,0", "-heads", "0-1"}, []int{1, 0}, []int{0, 1}, map[string]string{"layers": "[1,0]", "kv_heads": "[0,1]"}},
			} {
				sel := capture(t, m.path, m.name+"-sel", c.flags...)
				if sel.L != len(c.layers) || sel.HKV != len(c.heads) || sel.H != 2*len(c.heads) || sel.N != full.N || sel.Prefix() != full.Prefix() {
					t.Fatalf("%v: shape L=%d H=%d HKV=%d N=%d", c.flags, sel.L, sel.H, sel.HKV, sel.N)
				}
				for i, l := range c.layers {
					for j, kv := range c.heads {
						if !same(sel.KHead(i, j), full.KHead(l, kv)) || !same(sel.VHead(i, j), full.VHead(l, kv)) ||
							!same(sel.QHead(i, 2*j), full.QHead(l, 2*kv)) || !same(sel.QHead(i, 2*j+1), full.QHead(l, 2*kv+1)) {
							t.Errorf("%v: layer %d KV head %d differs from the whole capture", c.flags, l, kv)
						}
					}
				}
				for k, v := range c.meta {
					if sel.Meta.Extra[k] != v {
						t.Errorf("%v: metadata %q = %q, want %q", c.flags, k, sel.Meta.Extra[k], v)
					}
				}
				if sel.Meta.Extra["token_ids"] != full.Meta.Extra["token_ids"] || !strings.Contains(sel.Meta.Description, "this sample keeps layers") {
					t.Errorf("%v: metadata %+v", c.flags, sel.Meta)
				}
			}
			out := filepath.Join(dir, "x.safetensors")
			for _, c := range []struct{ flag, value, want string }{
				{"-layers", "0,2", "-layers: index 2 out of range: " + m.path + " has 2 layers (0..1)"},
				{"-heads", "2", "-heads: index 2 out of range: " + m.path + " has 2 KV heads (0..1)"},
				{"-heads", "a", `-heads: "a" is not an index`},
			} {
				code, _, errOut := cli(t, "capture", "-tokens", "24", c.flag, c.value, "-o", out, m.path)
				if code != exitUsage || !strings.Contains(errOut, c.want) {
					t.Errorf("%s %s: exit %d, %q; want exit %d and %q", c.flag, c.value, code, errOut, exitUsage, c.want)
				}
			}
		})
	}
}
