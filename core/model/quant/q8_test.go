package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestQ8Widen: the vector decoding of Q8_0 blocks (where the build has it)
// gives the scalar loop's bits for every byte value and for scales that
// are zero, negative, subnormal, infinite and NaN (any NaN for a NaN).
func TestQ8Widen(t *testing.T) {
	if !q8Vec {
		t.Skip("no vector Q8_0 decoding in this build")
	}
	scales := []uint16{0x3c00, 0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x2e66, 0xb555}
	b := make([]byte, 2+QK)
	for _, d := range scales {
		for start := 0; start < 256; start += QK {
			binary.LittleEndian.PutUint16(b, d)
			for j := 0; j < QK; j++ {
				b[2+j] = byte(start + j*7 + j/3)
			}
			got, want := make([]float32, QK), make([]float32, QK)
			dequantQ8_0(got, 1, b)
			q8Vec = false
			dequantQ8_0(want, 1, b)
			q8Vec = true
			for j := range got {
				g, w := got[j], want[j]
				if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
					t.Fatalf("scale %#04x, byte %#02x: vector %v (%#08x), scalar %v (%#08x)", d, b[2+j], g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	}
}
