package attnmap

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// small is a 2 x 4 map with two synthetic tokens: column 0 exact, 1 and 2
// through token 1 (shares 0.25, 0.75), 3 evicted; row 1 keeps nothing.
func small() *Factored {
	return &Factored{Rows: 2, Cols: 4, C: 2,
		Scale: []float32{0.5, -1}, Inv: []float32{0.1, 0},
		Syn:    []float32{3, 4, 5, 6},
		Source: []int32{Exact, 1, 1, None}, Share: []float32{0, 0.25, 0.75, 0}}
}

func TestExpand(t *testing.T) {
	f := small()
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	orig := []float32{0.2, 0.3, 0.4, 0.1, 0.7, 0.1, 0.1, 0.1}
	dst := []float32{9, 9, 9, 9, 9, 9, 9, 9}
	f.Expand(dst, orig)
	want := []float32{0.2 * 0.5, 4 * 0.25 * 0.1, 4 * 0.75 * 0.1, 0, 0, 0, 0, 0}
	for i := range want {
		if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
			t.Errorf("cell %d = %v, want %v", i, dst[i], want[i])
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(f *Factored)
		want  string
	}{
		{"negative", func(f *Factored) { f.C = -1 }, "negative"},
		{"short scale", func(f *Factored) { f.Scale = f.Scale[:1] }, "row scales"},
		{"short inv", func(f *Factored) { f.Inv = nil }, "row scales"},
		{"short syn", func(f *Factored) { f.Syn = f.Syn[:3] }, "synthetic weights"},
		{"huge C", func(f *Factored) { f.C = 1 << 62 }, "synthetic weights"},
		{"short share", func(f *Factored) { f.Share = f.Share[:3] }, "column sources"},
		{"source too big", func(f *Factored) { f.Source[2] = 2 }, "column 2: source 2"},
		{"source too small", func(f *Factored) { f.Source[0] = -3 }, "column 0: source -3"},
	} {
		f := small()
		tc.spoil(f)
		if err := f.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func ExampleFactored_Expand() {
	// One row over three tokens: token 0 kept exactly, tokens 1 and 2
	// summarized by one synthetic token that carries 0.4 of the row.
	f := &Factored{Rows: 1, Cols: 3, C: 1, Scale: []float32{1.5}, Inv: []float32{0.5},
		Syn: []float32{0.8}, Source: []int32{Exact, 0, 0}, Share: []float32{0, 0.5, 0.5}}
	orig := []float32{0.4, 0.5, 0.1}
	comp := make([]float32, 3)
	f.Expand(comp, orig)
	fmt.Println(comp)
	// Output: [0.6 0.2 0.2]
}
