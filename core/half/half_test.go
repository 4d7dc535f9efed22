package half

import (
	"encoding/binary"
	"math"
	"os"
	"sort"
	"testing"
)

func TestF16KnownValues(t *testing.T) {
	tests := []struct {
		name string
		f    float32
		h    uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"one third", 0.333251953125, 0x3555},
		{"max", MaxF16, 0x7bff},
		{"smallest normal", SmallestNormalF16, 0x0400},
		{"largest subnormal", SmallestNormalF16 - SmallestF16, 0x03ff},
		{"smallest subnormal", SmallestF16, 0x0001},
		{"negative smallest subnormal", -SmallestF16, 0x8001},
		{"infinity", float32(math.Inf(1)), 0x7c00},
		{"negative infinity", float32(math.Inf(-1)), 0xfc00},
		{"pi", 3.140625, 0x4248},
		{"1024", 1024, 0x6400},
		{"2048 (last integer spacing 1)", 2048, 0x6800},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToF16(tt.f); got != tt.h {
				t.Errorf("F32ToF16(%v) = %#04x, want %#04x", tt.f, got, tt.h)
			}
			if got := F16ToF32(tt.h); math.Float32bits(got) != math.Float32bits(tt.f) {
				t.Errorf("F16ToF32(%#04x) = %v, want %v", tt.h, got, tt.f)
			}
		})
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	tests := []struct {
		name string
		f    float32
		h    uint16
	}{
		{"0.1 rounds down", 0.1, 0x2e66},
		{"pi rounds to 3.140625", math.Pi, 0x4248},
		{"2049 ties to even 2048", 2049, 0x6800},
		{"2051 ties to even 2052", 2051, 0x6802},
		{"2050.0001 rounds up", 2050.001, 0x6801},
		{"65519 rounds to max", 65519, 0x7bff},
		{"65520 ties to infinity", 65520, 0x7c00},
		{"1e6 overflows", 1e6, 0x7c00},
		{"-1e6 overflows", -1e6, 0xfc00},
		{"max float32 overflows", math.MaxFloat32, 0x7c00},
		{"half the smallest subnormal ties to zero", SmallestF16 / 2, 0x0000},
		{"just above half the smallest subnormal", math.Nextafter32(SmallestF16/2, 1), 0x0001},
		{"1.5 smallest subnormal ties to 2", 1.5 * SmallestF16, 0x0002},
		{"2.5 smallest subnormal ties to 2", 2.5 * SmallestF16, 0x0002},
		{"1e-10 underflows", 1e-10, 0x0000},
		{"-1e-10 underflows to negative zero", -1e-10, 0x8000},
		{"float32 subnormal underflows", math.SmallestNonzeroFloat32, 0x0000},
		{"largest subnormal rounds up to smallest normal", math.Nextafter32(SmallestNormalF16, 0), 0x0400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToF16(tt.f); got != tt.h {
				t.Errorf("F32ToF16(%v) = %#04x, want %#04x", tt.f, got, tt.h)
			}
		})
	}
}

func TestF16NaN(t *testing.T) {
	tests := []struct {
		name string
		f32  uint32
		h    uint16
	}{
		{"quiet NaN", 0x7fc00000, 0x7e00},
		{"negative quiet NaN", 0xffc00000, 0xfe00},
		{"signaling NaN becomes quiet", 0x7f800001, 0x7e00},
		{"payload kept", 0x7fc02000, 0x7e01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToF16(math.Float32frombits(tt.f32)); got != tt.h {
				t.Errorf("F32ToF16(%#08x) = %#04x, want %#04x", tt.f32, got, tt.h)
			}
		})
	}
}

// TestF16RoundTripExhaustive converts every float16 to float32 and back.
func TestF16RoundTripExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := F16ToF32(h)
		back := F32ToF16(f)
		isNaN := h&f16ExpMask == f16ExpMask && h&0x3ff != 0
		if isNaN {
			if f == f {
				t.Fatalf("F16ToF32(%#04x) = %v, want NaN", h, f)
			}
			if back != h|f16QuietBit {
				t.Fatalf("NaN %#04x came back as %#04x, want %#04x", h, back, h|f16QuietBit)
			}
			continue
		}
		if back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
		if math.Signbit(float64(f)) != (h&f16SignMask != 0) {
			t.Fatalf("F16ToF32(%#04x) = %v has the wrong sign", h, f)
		}
		if RoundF16(f) != f {
			t.Fatalf("RoundF16(%v) = %v, want unchanged", f, RoundF16(f))
		}
	}
}

// TestF16Midpoints checks rounding at, just below and just above the midpoint
// of every pair of adjacent finite float16 values of both signs, including the
// pair (max, "next") whose midpoint 65520 rounds to infinity.
func TestF16Midpoints(t *testing.T) {
	for h := uint16(0); h < 0x7c00; h++ {
		a, b := float64(F16ToF32(h)), float64(F16ToF32(h+1))
		if h+1 == 0x7c00 {
			b = 65536 // where the next value would be
		}
		mid := float32((a + b) / 2) // exact: a and b are adjacent
		if float64(mid) != (a+b)/2 {
			t.Fatalf("midpoint of %#04x not exact", h)
		}
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		for _, sign := range []uint16{0, f16SignMask} {
			s := float32(1)
			if sign != 0 {
				s = -1
			}
			checks := []struct {
				f    float32
				want uint16
			}{
				{s * mid, even | sign},
				{s * math.Nextafter32(mid, 0), h | sign},
				{s * math.Nextafter32(mid, math.MaxFloat32), (h + 1) | sign},
			}
			for _, c := range checks {
				if got := F32ToF16(c.f); got != c.want {
					t.Fatalf("F32ToF16(%v) = %#04x, want %#04x", c.f, got, c.want)
				}
			}
		}
	}
}

// refF16 is an independent reference: the nearest float16 by table lookup.
func refF16(tbl []float32, f float32) uint16 {
	if f != f {
		return 0x7e00
	}
	var sign uint16
	if math.Signbit(float64(f)) {
		sign, f = f16SignMask, -f
	}
	if f >= 65520 {
		return sign | 0x7c00
	}
	// tbl[i] <= f < tbl[i+1]
	i := sort.Search(len(tbl), func(i int) bool { return tbl[i] > f }) - 1
	if i == len(tbl)-1 {
		return sign | uint16(i)
	}
	mid := (float64(tbl[i]) + float64(tbl[i+1])) / 2
	switch {
	case float64(f) < mid:
		return sign | uint16(i)
	case float64(f) > mid:
		return sign | uint16(i+1)
	case i%2 == 0:
		return sign | uint16(i)
	default:
		return sign | uint16(i+1)
	}
}

// TestF32ToF16Reference compares against refF16 on a strided sweep of all
// float32 bit patterns (every one with HALF_EXHAUSTIVE=1, a minute or so).
func TestF32ToF16Reference(t *testing.T) {
	tbl := make([]float32, 0x7c00)
	for i := range tbl {
		tbl[i] = F16ToF32(uint16(i))
	}
	stride := uint64(4099)
	if os.Getenv("HALF_EXHAUSTIVE") == "1" {
		stride = 1
	}
	for b := uint64(0); b < 1<<32; b += stride {
		f := math.Float32frombits(uint32(b))
		got, want := F32ToF16(f), refF16(tbl, f)
		if f != f {
			if got&0x7fff <= 0x7c00 || got&f16QuietBit == 0 {
				t.Fatalf("F32ToF16(%#08x) = %#04x, want a quiet NaN", b, got)
			}
			continue
		}
		if got != want {
			t.Fatalf("F32ToF16(%v = %#08x) = %#04x, want %#04x", f, b, got, want)
		}
	}
}

func TestBF16KnownValues(t *testing.T) {
	tests := []struct {
		name string
		f    float32
		b    uint16
		back float32
	}{
		{"zero", 0, 0x0000, 0},
		{"one", 1, 0x3f80, 1},
		{"minus two", -2, 0xc000, -2},
		{"pi", math.Pi, 0x4049, 3.140625},
		{"0.1", 0.1, 0x3dcd, 0.10009765625},
		{"max", MaxBF16, 0x7f7f, MaxBF16},
		{"max float32 overflows", math.MaxFloat32, 0x7f80, float32(math.Inf(1))},
		{"infinity", float32(math.Inf(-1)), 0xff80, float32(math.Inf(-1))},
		{"257 ties to even 256", 257, 0x4380, 256},
		{"259 ties to even 260", 259, 0x4382, 260},
		{"float32 subnormal kept", 0x1p-133, 0x0001, 0x1p-133},
		{"smallest float32 rounds to zero", math.SmallestNonzeroFloat32, 0x0000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToBF16(tt.f); got != tt.b {
				t.Errorf("F32ToBF16(%v) = %#04x, want %#04x", tt.f, got, tt.b)
			}
			if got := RoundBF16(tt.f); math.Float32bits(got) != math.Float32bits(tt.back) {
				t.Errorf("RoundBF16(%v) = %v, want %v", tt.f, got, tt.back)
			}
		})
	}
}

func TestBF16NaN(t *testing.T) {
	tests := []struct {
		name string
		f32  uint32
		b    uint16
	}{
		{"quiet NaN", 0x7fc00000, 0x7fc0},
		{"negative quiet NaN", 0xffc00000, 0xffc0},
		{"signaling NaN with low payload stays NaN", 0x7f800001, 0x7fc0},
		{"payload kept", 0x7fc10000, 0x7fc1},
		{"all ones does not overflow into the sign", 0x7fffffff, 0x7fff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := F32ToBF16(math.Float32frombits(tt.f32)); got != tt.b {
				t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", tt.f32, got, tt.b)
			}
		})
	}
}

func TestBF16RoundTripExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		b := uint16(i)
		f := BF16ToF32(b)
		back := F32ToBF16(f)
		if b&0x7f80 == 0x7f80 && b&0x7f != 0 { // NaN
			if f == f || back != b|0x0040 {
				t.Fatalf("NaN %#04x -> %v -> %#04x", b, f, back)
			}
			continue
		}
		if back != b {
			t.Fatalf("%#04x -> %v -> %#04x", b, f, back)
		}
	}
}

func TestBF16Midpoints(t *testing.T) {
	for b := uint16(0); b < 0x7f80; b++ {
		lo, hi := float64(BF16ToF32(b)), float64(BF16ToF32(b+1))
		if b+1 == 0x7f80 {
			hi = 0x1p128
		}
		mid := float32((lo + hi) / 2)
		if float64(mid) != (lo+hi)/2 {
			t.Fatalf("midpoint of %#04x not exact", b)
		}
		even := b
		if b&1 == 1 {
			even = b + 1
		}
		for _, c := range []struct {
			f    float32
			want uint16
		}{
			{mid, even},
			{-mid, even | 0x8000},
			{math.Nextafter32(mid, 0), b},
			{math.Nextafter32(mid, math.MaxFloat32), b + 1},
		} {
			if got := F32ToBF16(c.f); got != c.want {
				t.Fatalf("F32ToBF16(%v) = %#04x, want %#04x", c.f, got, c.want)
			}
		}
	}
}

func TestRoundF16(t *testing.T) {
	tests := []struct {
		in, want float32
	}{
		{1, 1},
		{0.1, 0.0999755859375},
		{70000, float32(math.Inf(1))},
		{1e-9, 0},
	}
	for _, tt := range tests {
		if got := RoundF16(tt.in); got != tt.want {
			t.Errorf("RoundF16(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// DecodeF16 and DecodeBF16 give F16ToF32 and BF16ToF32 of every 16-bit
// pattern, bit for bit (NaN payloads too), in both byte orders.
func TestDecodeExhaustive(t *testing.T) {
	le, be := make([]byte, 2<<16), make([]byte, 2<<16)
	for h := 0; h < 1<<16; h++ {
		le[2*h], le[2*h+1] = byte(h), byte(h>>8)
		be[2*h], be[2*h+1] = byte(h>>8), byte(h)
	}
	for _, c := range []struct {
		name   string
		decode func([]float32, []byte, bool)
		one    func(uint16) float32
	}{{"F16", DecodeF16, F16ToF32}, {"BF16", DecodeBF16, BF16ToF32}} {
		for _, big := range []bool{false, true} {
			src := le
			if big {
				src = be
			}
			dst := make([]float32, 1<<16)
			c.decode(dst, src, big)
			for h := range dst {
				if got, want := math.Float32bits(dst[h]), math.Float32bits(c.one(uint16(h))); got != want {
					t.Fatalf("%s big endian %v: %#04x gives %#08x, want %#08x", c.name, big, h, got, want)
				}
			}
		}
	}
}

// patterns returns every 16-bit pattern in order, stored little or big
// endian, after pad bytes (so that the data may start at any address).
func patterns(bigEndian bool, pad int) []byte {
	b := make([]byte, pad+2<<16)
	for h := 0; h < 1<<16; h++ {
		hi, lo := byte(h>>8), byte(h)
		if bigEndian {
			hi, lo = lo, hi
		}
		b[pad+2*h], b[pad+2*h+1] = lo, hi
	}
	return b[pad:]
}

// TestDecodePaths runs DecodeF16 and DecodeBF16 on every 16-bit pattern in
// both byte orders, on the vector path (where the build has one) and the
// portable one, from every start address modulo 16 and in every length
// modulo 8 (the vector loops' tails), and checks each value's bits against
// F16ToF32 and BF16ToF32.
func TestDecodePaths(t *testing.T) {
	widths := []int{0}
	if vecWidth != 0 {
		widths = []int{vecWidth, 0}
	}
	defer func(w int) { vecWidth = w }(vecWidth)
	for _, c := range []struct {
		name   string
		decode func([]float32, []byte, bool)
		one    func(uint16) float32
	}{{"F16", DecodeF16, F16ToF32}, {"BF16", DecodeBF16, BF16ToF32}} {
		for _, w := range widths {
			vecWidth = w
			for _, big := range []bool{false, true} {
				for pad := range 16 {
					src := patterns(big, pad)
					// Split the patterns into runs of 1 to 16 elements and
					// a last long one, each decoded by its own call.
					dst := make([]float32, 1<<16)
					for i, k := 0, 1+pad%8; i < len(dst); i, k = i+k, k%16+1 {
						if i > 1<<15 {
							k = len(dst) - i
						}
						k = min(k, len(dst)-i)
						c.decode(dst[i:i+k], src[2*i:2*i+2*k], big)
					}
					for h := range dst {
						if got, want := math.Float32bits(dst[h]), math.Float32bits(c.one(uint16(h))); got != want {
							t.Fatalf("%s vector width %d big endian %v pad %d: %#04x gives %#08x, want %#08x", c.name, w, big, pad, h, got, want)
						}
					}
				}
			}
		}
	}
}

// TestDecodeLeavesTheRest checks that a decode writes dst[:len(dst)] and
// nothing past it, and reads no byte of src past 2*len(dst).
func TestDecodeLeavesTheRest(t *testing.T) {
	for _, decode := range []func([]float32, []byte, bool){DecodeF16, DecodeBF16} {
		for n := range 40 {
			src := patterns(false, 0)[: 2*n : 2*n]
			buf := make([]float32, n+8)
			for i := range buf {
				buf[i] = -7
			}
			decode(buf[:n:n], src, false)
			for i := n; i < len(buf); i++ {
				if buf[i] != -7 {
					t.Fatalf("n = %d: dst[%d] = %v, want it left alone", n, i, buf[i])
				}
			}
		}
	}
}

// BenchmarkDecodeF16 widens 32,768 float16s (one chunk of sample's
// decoder), on the vector path and the portable one.
func BenchmarkDecodeF16(b *testing.B) {
	benchDecode(b, DecodeF16)
}

// BenchmarkDecodeBF16 is BenchmarkDecodeF16 for bfloat16s.
func BenchmarkDecodeBF16(b *testing.B) {
	benchDecode(b, DecodeBF16)
}

func benchDecode(b *testing.B, decode func([]float32, []byte, bool)) {
	src := patterns(false, 0)[:2<<15]
	dst := make([]float32, 1<<15)
	defer func(w int) { vecWidth = w }(vecWidth)
	for _, w := range []int{vecWidth, 0} {
		name := "portable"
		if w != 0 {
			name = "vector"
		}
		b.Run(name, func(b *testing.B) {
			vecWidth = w
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				decode(dst, src, false)
			}
		})
		if w == 0 {
			break
		}
	}
}

// TestDecodeF32: DecodeF32 gives each stored float32's bits, NaN payloads
// and signed zeros too, in either byte order and for every length up to 9
// (the copy and the conversion paths alike).
func TestDecodeF32(t *testing.T) {
	vals := []uint32{0, 0x80000000, 0x3f800000, 0x7f800000, 0xff800000, 0x7fc00001, 0xffbfffff, 0x00000001, 0x7f7fffff}
	for _, big := range []bool{false, true} {
		for n := 0; n <= len(vals); n++ {
			src := make([]byte, 4*n+3) // longer than needed: only 4n bytes are read
			for i, v := range vals[:n] {
				if big {
					binary.BigEndian.PutUint32(src[4*i:], v)
				} else {
					binary.LittleEndian.PutUint32(src[4*i:], v)
				}
			}
			dst := make([]float32, n)
			DecodeF32(dst, src, big)
			for i, v := range vals[:n] {
				if got := math.Float32bits(dst[i]); got != v {
					t.Errorf("big endian %v, n %d: element %d = %#08x, want %#08x", big, n, i, got, v)
				}
			}
		}
	}
}
