package gen

import (
	"math"
	"testing"
)

func TestNormal(t *testing.T) {
	r := newRNG(7, 1)
	const n = 200000
	var s1, s2, s4 float64
	var tail int
	for range n {
		x := r.norm()
		s1 += x
		s2 += x * x
		s4 += x * x * x * x
		if math.Abs(x) > zigR {
			tail++
		}
	}
	mean, vr, kurt := s1/n, s2/n, s4/n
	if math.Abs(mean) > 0.01 || math.Abs(vr-1) > 0.02 || math.Abs(kurt-3) > 0.1 {
		t.Errorf("normal draws: mean %.4f variance %.4f fourth moment %.3f, want 0, 1, 3", mean, vr, kurt)
	}
	// P(|x| > 3.4426) = 5.76e-4: about 115 of 200000.
	if tail < 70 || tail > 170 {
		t.Errorf("%d draws beyond the ziggurat base, want about 115", tail)
	}
}

func TestStreamsIndependent(t *testing.T) {
	a, b, c := newRNG(1, 3, 0, 0), newRNG(1, 3, 0, 1), newRNG(1, 3, 0, 0)
	x, y, z := a.r.Uint64(), b.r.Uint64(), c.r.Uint64()
	if x == y {
		t.Error("streams (3,0,0) and (3,0,1) start alike")
	}
	if x != z {
		t.Error("the same stream label gave different draws")
	}
}

// TestXoshiro checks the generator against the reference sequence of
// xoshiro256** from state {1, 2, 3, 4}.
func TestXoshiro(t *testing.T) {
	x := &xoshiro{s: [4]uint64{1, 2, 3, 4}}
	want := []uint64{11520, 0, 1509978240, 1215971899390074240}
	for i, w := range want {
		if got := x.Uint64(); got != w {
			t.Fatalf("draw %d = %d, want %d", i, got, w)
		}
	}
}
