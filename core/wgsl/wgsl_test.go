package wgsl

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestKernelsMatchSources checks that the table agrees with the shader
// texts: every .wgsl file is listed, every entry point exists, and the
// bindings are declared as the table says (uniform at 0, read-only inputs,
// then read_write outputs), since the runners build their bind group layouts
// from the table.
func TestKernelsMatchSources(t *testing.T) {
	names, err := fs.Glob(files, "*.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(Kernels) {
		t.Fatalf("%d .wgsl files, %d kernels in the table", len(names), len(Kernels))
	}
	bind := regexp.MustCompile(`@binding\((\d+)\) var<([a-z_, ]+)>`)
	for _, k := range Kernels {
		src, err := Source(k.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range k.Entries {
			if !strings.Contains(src, "fn "+e+"(") {
				t.Errorf("%s: no entry point %s", k.Name, e)
			}
		}
		ms := bind.FindAllStringSubmatch(src, -1)
		if len(ms) != 1+k.Inputs+k.Writes {
			t.Fatalf("%s: %d bindings, table says %d", k.Name, len(ms), 1+k.Inputs+k.Writes)
		}
		for i, m := range ms {
			want := "storage, read"
			switch {
			case i == 0:
				want = "uniform"
			case i > k.Inputs:
				want = "storage, read_write"
			}
			if m[1] != fmt.Sprint(i) || m[2] != want {
				t.Errorf("%s: binding %s is %q, want %d %q", k.Name, m[1], m[2], i, want)
			}
		}
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source of an unknown kernel: no error")
	}
}
