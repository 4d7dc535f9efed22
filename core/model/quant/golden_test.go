package quant

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/haeols/haeols/internal/fmacheck"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// TestGolden pins the bits of quantization, dequantization and dot
// products of every type on fixed inputs: the same on every platform,
// natively and under wasm.
func TestGolden(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 4, 512
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	x := make([]float32, cols)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	var out strings.Builder
	for _, typ := range all {
		b, err := Quantize(typ, w)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(w))
		dequantRow(typ, y, b)
		dst := make([]float32, rows)
		MatVec(typ, dst, b, rows, cols, x)
		h := fnv.New64a()
		h.Write(b)
		for _, v := range append(y, dst...) {
			var u [4]byte
			bits := math.Float32bits(v)
			u[0], u[1], u[2], u[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
			h.Write(u[:])
		}
		fmt.Fprintf(&out, "%s %016x\n", typ, h.Sum64())
	}
	const path = "testdata/golden.txt"
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("golden hashes changed (run with -update if intended):\ngot\n%swant\n%s", got, want)
	}
}

// TestNoFusedMultiplyAdd: results must be the same bits on every platform
// (see package fmacheck).
func TestNoFusedMultiplyAdd(t *testing.T) { fmacheck.Check(t, ".") }
