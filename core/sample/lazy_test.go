package sample

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// lazyFile writes a q/k/v sample of 2 layers x 4 query heads on 2 KV
// heads in dtype, with values of every size a 16-bit float holds
// (subnormals, the largest, both signs).
func lazyFile(t *testing.T, dtype string) ([]byte, *Sample) {
	t.Helper()
	s := testSample(2, 4, 2, 6, 4, true, false)
	r := rand.New(rand.NewPCG(5, 6))
	for _, x := range [][]float32{s.Q, s.K, s.V} {
		for i := range x {
			x[i] *= float32(math.Pow(2, float64(r.IntN(40)-24)))
		}
	}
	s.K[3], s.V[7], s.Q[11] = 65504, -6e-8, -1e-5
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, s, dtype); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), s
}

// TestDecodeLazy checks that DecodeLazy gives Decode's sample, bit for
// bit, KV head by KV head in any order and from several goroutines at
// once; that its heads' maxima, taken from the file's bits before
// anything is widened, are those of the widened values; that the file's
// bytes are let go once every KV head was widened; and that F32 is
// decoded at once.
func TestDecodeLazy(t *testing.T) {
	for _, dtype := range []string{F16, BF16, F32} {
		t.Run(dtype, func(t *testing.T) {
			data, _ := lazyFile(t, dtype)
			want, err := Decode("lazy.safetensors", data)
			if err != nil {
				t.Fatal(err)
			}
			wantMax, err := want.ValidateMaxima()
			if err != nil {
				t.Fatal(err)
			}
			s, err := DecodeLazy("lazy.safetensors", data)
			if err != nil {
				t.Fatal(err)
			}
			if lazy := s.lazy != nil; lazy != (dtype != F32) {
				t.Fatalf("lazy = %t", lazy)
			}
			gotMax, err := s.ValidateMaxima()
			if err != nil || !reflect.DeepEqual(gotMax, wantMax) {
				t.Fatalf("ValidateMaxima = %v, %v; want %v", gotMax, err, wantMax)
			}
			if s.lazy != nil && s.lazy.left != s.L*s.HKV {
				t.Fatalf("ValidateMaxima widened %d KV heads", s.L*s.HKV-s.lazy.left)
			}
			// Layer 1's KV head 1 first, through a query head.
			if got, w := s.QHead(1, 3), want.QHead(1, 3); !reflect.DeepEqual(got, w) {
				t.Fatalf("QHead(1, 3) = %v, want %v", got, w)
			}
			if s.lazy != nil {
				if s.lazy.left != s.L*s.HKV-1 {
					t.Fatalf("one head asked for: %d KV heads left of %d", s.lazy.left, s.L*s.HKV)
				}
				if !allZero(s.KHeadRaw(0, 0)) {
					t.Fatal("KV head 0/0 widened before it was asked for")
				}
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for l := s.L - 1; l >= 0; l-- {
						for kv := range s.HKV {
							s.VHead(l, kv)
							s.KHead(l, kv)
						}
					}
				})
			}
			wg.Wait()
			if s.lazy != nil && (s.lazy.q != nil || s.lazy.left != 0) {
				t.Fatalf("every KV head widened: %d left, file kept %t", s.lazy.left, s.lazy.q != nil)
			}
			s.lazy = nil
			if !reflect.DeepEqual(s, want) {
				t.Fatal("the lazy sample differs from Decode's")
			}
		})
	}
}

// KHeadRaw is KHead without widening (for tests).
func (s *Sample) KHeadRaw(l, kv int) []float32 {
	o := ((l*s.HKV + kv) * s.N) * s.D
	return s.K[o : o+s.N*s.D]
}

func allZero(x []float32) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestDecodeLazyNonFinite: a file whose last value is an infinity or a
// NaN gives Decode's error.
func TestDecodeLazyNonFinite(t *testing.T) {
	for _, c := range []struct {
		dtype string
		bits  uint16
	}{{F16, 0x7c00}, {F16, 0xfe01}, {BF16, 0xff80}, {BF16, 0x7fc1}} {
		data, _ := lazyFile(t, c.dtype)
		// v is written last (write.go): its last element ends the file.
		binary.LittleEndian.PutUint16(data[len(data)-2:], c.bits)
		_, want := Decode("bad.safetensors", data)
		s, err := DecodeLazy("bad.safetensors", data)
		if want == nil || s != nil || fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("%s %#04x: DecodeLazy = %v, %v; want Decode's error %v", c.dtype, c.bits, s, err, want)
		}
	}
}

// TestMaxMag16Paths checks maxMag16 on the vector path (where the build
// has one) and the portable one against a plain loop, on every window of
// 0 to 80 bytes (the vector loop's tails) along every 16-bit pattern.
func TestMaxMag16Paths(t *testing.T) {
	b := make([]byte, 2<<16)
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(b[2*h:], uint16(h*40503)) // every pattern, shuffled
	}
	ref := func(b []byte) uint16 {
		var m uint16
		for i := 0; i+1 < len(b); i += 2 {
			m = max(m, binary.LittleEndian.Uint16(b[i:])&0x7fff)
		}
		return m
	}
	eachPath(func(w int) {
		if got, want := maxMag16(b), ref(b); got != want {
			t.Fatalf("vector width %d: maxMag16 of all = %#04x, want %#04x", w, got, want)
		}
		for i := 0; i+80 <= len(b); i += 2 + 2*(i%89) {
			for n := 0; n <= 80; n += 2 {
				if got, want := maxMag16(b[i:i+n]), ref(b[i:i+n]); got != want {
					t.Fatalf("vector width %d: maxMag16(b[%d:%d]) = %#04x, want %#04x", w, i, i+n, got, want)
				}
			}
		}
	})
}
