package sample

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/haeols/haeols/core/half"
)

// scanPatterns returns float32s of every exponent, sign and class: the
// value of every bfloat16 and float16 bit pattern (subnormals, infinities
// and NaNs among them), then random bit patterns.
func scanPatterns() []float32 {
	x := make([]float32, 0, 3<<16)
	for h := range 1 << 16 {
		x = append(x, half.BF16ToF32(uint16(h)), half.F16ToF32(uint16(h)))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 16 {
		x = append(x, math.Float32frombits(r.Uint32()))
	}
	return x
}

// refMaxMag and refFirstNonFinite are the plain loops MaxMag and
// FirstNonFinite must agree with.
func refMaxMag(x []float32) uint32 {
	var m uint32
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return m
}

func refFirstNonFinite(x []float32) int {
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i
		}
	}
	return -1
}

// TestMaxMagPaths checks MaxMag on the vector path (where the build has
// one) and the portable one against refMaxMag, on every window of 0 to 40
// elements (the vector loop's tails) at every start of a stretch of the
// patterns, and on the whole of them.
func TestMaxMagPaths(t *testing.T) {
	x := scanPatterns()
	eachPath(func(w int) {
		if got, want := MaxMag(x), refMaxMag(x); got != want {
			t.Fatalf("vector width %d: MaxMag of all = %#08x, want %#08x", w, got, want)
		}
		for i := 0; i+40 <= len(x); i += 1 + i%97 {
			for n := range 41 {
				if got, want := MaxMag(x[i:i+n]), refMaxMag(x[i:i+n]); got != want {
					t.Fatalf("vector width %d: MaxMag(x[%d:%d]) = %#08x, want %#08x", w, i, i+n, got, want)
				}
			}
		}
	})
}

// eachPath runs f with the vector loops at their width (where the build
// has them) and then with the portable loops (width 0).
func eachPath(f func(w int)) {
	widths := []int{0}
	if vecWidth != 0 {
		widths = []int{vecWidth, 0}
	}
	defer func(w int) { vecWidth = w }(vecWidth)
	for _, w := range widths {
		vecWidth = w
		f(w)
	}
}

// TestFirstNonFinitePaths puts one NaN or infinity, then two, at places
// across scanBlock boundaries and in the vector loop's tails of finite
// patterns, and checks that FirstNonFinite finds the first on both paths.
func TestFirstNonFinitePaths(t *testing.T) {
	var finite []float32
	for _, v := range scanPatterns() {
		if refFirstNonFinite([]float32{v}) < 0 {
			finite = append(finite, v)
		}
	}
	x := append(append([]float32(nil), finite...), finite[:2*scanBlock+13]...)
	bad := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xff800001)}
	places := []int{0, 1, 7, 8, 9, scanBlock - 1, scanBlock, scanBlock + 5, 2 * scanBlock, len(x) - 9, len(x) - 1}
	eachPath(func(w int) {
		if got := FirstNonFinite(x); got != -1 {
			t.Fatalf("vector width %d: FirstNonFinite of finite values = %d, want -1", w, got)
		}
		for k, p := range places {
			for _, q := range places[k:] {
				y := append([]float32(nil), x...)
				y[q] = bad[q%len(bad)]
				y[p] = bad[p%len(bad)]
				if got := FirstNonFinite(y); got != p {
					t.Fatalf("vector width %d: non-finite at %d and %d: FirstNonFinite = %d", w, p, q, got)
				}
				if got := FirstNonFinite(y[:p]); got != -1 {
					t.Fatalf("vector width %d: FirstNonFinite before %d = %d, want -1", w, p, got)
				}
			}
		}
	})
}

// TestHeadMaxima checks headMaxima against refMaxMag per part and
// refFirstNonFinite on the whole, with the non-finite values of
// TestFirstNonFinitePaths put in the first, a middle and the last part, at
// the parts' and the blocks' edges.
func TestHeadMaxima(t *testing.T) {
	var finite []float32
	for _, v := range scanPatterns() {
		if refFirstNonFinite([]float32{v}) < 0 {
			finite = append(finite, v)
		}
	}
	const parts = 5
	size := scanBlock + 37
	x := finite[:parts*size]
	heads := make([]uint32, parts)
	if got := headMaxima(x, heads); got != -1 {
		t.Fatalf("headMaxima of finite values = %d, want -1", got)
	}
	for h := range parts {
		if want := refMaxMag(x[h*size : (h+1)*size]); heads[h] != want {
			t.Errorf("part %d: maximum %#x, want %#x", h, heads[h], want)
		}
	}
	bad := []float32{float32(math.Inf(1)), float32(math.NaN()), math.Float32frombits(0xff800001)}
	for k, at := range []int{0, size - 1, size, 2*size + scanBlock - 1, 2*size + scanBlock, parts*size - 1} {
		y := append([]float32(nil), x...)
		y[at] = bad[k%len(bad)]
		if at+size < len(y) {
			y[at+size] = bad[(k+1)%len(bad)] // a later one too
		}
		if got := headMaxima(y, make([]uint32, parts)); got != at {
			t.Errorf("non-finite at %d: headMaxima = %d", at, got)
		}
		if got := headMaxima(y, nil); got != at {
			t.Errorf("non-finite at %d: headMaxima without parts = %d", at, got)
		}
	}
}
