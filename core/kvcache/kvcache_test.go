package kvcache

import (
	"math"
	"strings"
	"testing"
)

var shape = Shape{Layers: 2, Heads: 4, KVHeads: 2, HeadSize: 8}

// fill returns n pseudo-random floats in [-1, 1).
func fill(n int, seed uint32) []float32 {
	x := make([]float32, n)
	for i := range x {
		seed = seed*1664525 + 1013904223
		x[i] = float32(int32(seed>>8)-1<<23) / (1 << 23)
	}
	return x
}

// TestCompressedAllExactIsDense checks that a prefix that keeps every
// position, continued, attends bit for bit as the dense cache.
func TestCompressedAllExactIsDense(t *testing.T) {
	const n, total = 12, 20
	kvDim, hs := shape.KVDim(), shape.HeadSize
	keys := fill(shape.Layers*total*kvDim, 1)
	vals := fill(shape.Layers*total*kvDim, 2)
	qs := fill(total*shape.Dim(), 3)
	dense := NewDense(shape, total)
	pre := make([]Prefix, shape.Layers*shape.KVHeads)
	for l := 0; l < shape.Layers; l++ {
		for kv := 0; kv < shape.KVHeads; kv++ {
			p := &pre[l*shape.KVHeads+kv]
			for j := 0; j < n; j++ {
				o := (l*total+j)*kvDim + kv*hs
				p.Keys = append(p.Keys, keys[o:o+hs]...)
				p.Values = append(p.Values, vals[o:o+hs]...)
			}
			p.Biased = n
		}
	}
	comp, err := NewCompressed(shape, n, total, pre)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]float32, shape.Dim()), make([]float32, shape.Dim())
	for pos := 0; pos < total; pos++ {
		for l := 0; l < shape.Layers; l++ {
			o := (l*total + pos) * kvDim
			dense.Append(l, pos, keys[o:o+kvDim], vals[o:o+kvDim])
			if pos < n {
				continue
			}
			comp.Append(l, pos, keys[o:o+kvDim], vals[o:o+kvDim])
			q := qs[pos*shape.Dim() : (pos+1)*shape.Dim()]
			dense.Attend(l, pos, q, a)
			comp.Attend(l, pos, q, b)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("layer %d position %d output %d: dense %v, compressed %v", l, pos, i, a[i], b[i])
				}
			}
		}
	}
}

// TestCompressedBias checks the attention over a compressed prefix with a
// biased row against its definition in float64: a row with bias ln 3 weighs
// as three copies of itself.
func TestCompressedBias(t *testing.T) {
	s := Shape{Layers: 1, Heads: 2, KVHeads: 1, HeadSize: 4}
	k := fill(3*4, 5)
	v := fill(3*4, 6)
	pre := []Prefix{{Keys: k, Values: v, Biased: 2, Bias: []float32{float32(math.Log(3))}}}
	c, err := NewCompressed(s, 10, 11, pre)
	if err != nil {
		t.Fatal(err)
	}
	kc, vc := fill(4, 7), fill(4, 8)
	c.Append(0, 10, kc, vc)
	q := fill(8, 9)
	out := make([]float32, 8)
	c.Attend(0, 10, q, out)
	for h := 0; h < 2; h++ {
		rows := [][]float32{k[0:4], k[4:8], k[8:12], kc}
		vr := [][]float32{v[0:4], v[4:8], v[8:12], vc}
		mult := []float64{1, 1, 3, 1}
		var z float64
		want := make([]float64, 4)
		for r, kr := range rows {
			var d float64
			for i := range kr {
				d += float64(q[h*4+i]) * float64(kr[i])
			}
			w := mult[r] * math.Exp(d/2)
			z += w
			for i := range want {
				want[i] += w * float64(vr[r][i])
			}
		}
		for i := range want {
			if got := float64(out[h*4+i]); math.Abs(got-want[i]/z) > 1e-6 {
				t.Errorf("head %d output %d: %v, float64 %v", h, i, got, want[i]/z)
			}
		}
	}
	c.Reset()
	c.Append(0, 10, kc, vc)
	again := make([]float32, 8)
	c.Attend(0, 10, q, again)
	for i := range out {
		if out[i] != again[i] {
			t.Fatalf("after Reset: output %d %v, was %v", i, again[i], out[i])
		}
	}
}

func TestNewCompressedErrors(t *testing.T) {
	good := func() []Prefix {
		return []Prefix{{Keys: make([]float32, 8), Values: make([]float32, 8), Biased: 2}}
	}
	s := Shape{Layers: 1, Heads: 2, KVHeads: 1, HeadSize: 4}
	for _, c := range []struct {
		name  string
		shape Shape
		n, cp int
		pre   func() []Prefix
		want  string
	}{
		{"shape", Shape{Layers: 1, Heads: 3, KVHeads: 2, HeadSize: 4}, 2, 4, good, "not a multiple of 2 KV heads"},
		{"capacity", s, 5, 4, good, "compressed cache of 5 positions with capacity 4"},
		{"count", s, 2, 4, func() []Prefix { return append(good(), good()...) }, "2 prefixes for 1 layers x 1 KV heads"},
		{"values", s, 2, 4, func() []Prefix { p := good(); p[0].Values = p[0].Values[:4]; return p }, "8 key and 4 value floats"},
		{"bias", s, 2, 4, func() []Prefix { p := good(); p[0].Biased = 1; return p }, "2 rows, biased from 1, 0 biases"},
	} {
		_, err := NewCompressed(c.shape, c.n, c.cp, c.pre())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
