package quant

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/half"
)

var quantized = []Type{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}
var all = append([]Type{F32, F16, BF16}, quantized...)

// TestTypeTable pins the block geometry to the sizes ggml-common.h
// asserts for each block struct.
func TestTypeTable(t *testing.T) {
	for _, c := range []struct {
		t         Type
		name      string
		id        uint32
		bs, bytes int
	}{
		{F32, "F32", 0, 1, 4}, {F16, "F16", 1, 1, 2}, {BF16, "BF16", 30, 1, 2},
		{Q4_0, "Q4_0", 2, 32, 18}, {Q4_1, "Q4_1", 3, 32, 20}, {Q5_0, "Q5_0", 6, 32, 22},
		{Q5_1, "Q5_1", 7, 32, 24}, {Q8_0, "Q8_0", 8, 32, 34}, {Q2_K, "Q2_K", 10, 256, 84},
		{Q3_K, "Q3_K", 11, 256, 110}, {Q4_K, "Q4_K", 12, 256, 144}, {Q5_K, "Q5_K", 13, 256, 176},
		{Q6_K, "Q6_K", 14, 256, 210},
	} {
		if c.t.String() != c.name || uint32(c.t) != c.id || c.t.BlockSize() != c.bs || c.t.BlockBytes() != c.bytes || !c.t.Supported() {
			t.Errorf("%s: got name %s id %d block %d/%d supported %v", c.name, c.t, uint32(c.t), c.t.BlockSize(), c.t.BlockBytes(), c.t.Supported())
		}
		if p, err := ParseType(c.name); err != nil || p != c.t {
			t.Errorf("ParseType(%q) = %v, %v", c.name, p, err)
		}
	}
	for _, c := range []struct {
		t    Type
		want string
	}{{IQ2_XXS, "IQ2_XXS"}, {Q8_K, "Q8_K"}, {MXFP4, "MXFP4"}, {Type(4), "type 4 is not defined"}, {Type(1000), "type 1000"}} {
		err := c.t.Check()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: Check() = %v, want ErrUnsupported naming %q", uint32(c.t), err, c.want)
		}
		if _, err := c.t.RowBytes(256); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: RowBytes: %v", c.t, err)
		}
	}
	if _, err := Q4_K.RowBytes(100); err == nil || !strings.Contains(err.Error(), "block size 256") {
		t.Errorf("RowBytes(100) of Q4_K: %v", err)
	}
	if _, err := ParseType("Q4_K_M"); err == nil {
		t.Error("ParseType(Q4_K_M) accepted a file type name")
	}
}

// Edge scales: zero, one, negative, the largest float16, its smallest
// subnormal and smallest normal.
var edgeScales = []float32{0, 1, -1, 0.0078125, half.MaxF16, half.SmallestF16, half.SmallestNormalF16, -3.5}

// crafted is a block described by its definition: the stored unsigned
// integer of each element, the group scales and mins as stored integers,
// and the float16 super-scales. pack writes it in the layout of
// docs/CHECKPOINTS.md, each element addressed by its own formula, and
// value gives the element the definition says it stands for.
type crafted struct {
	u      []int // per element, as stored (offset not removed)
	sc, mn []int // per group, as stored
	d, dm  float32
}

func put16(b []byte, v float32) { binary.LittleEndian.PutUint16(b, half.F32ToF16(v)) }

func setBit(b []byte, bit int, on bool) {
	if on {
		b[bit/8] |= 1 << uint(bit%8)
	}
}

// pack builds the block of type t from c.
func (c crafted) pack(t Type) []byte {
	b := make([]byte, t.BlockBytes())
	switch t {
	case Q4_0, Q4_1, Q5_0, Q5_1, Q8_0:
		put16(b, c.d)
		qs := 2
		if t == Q4_1 || t == Q5_1 {
			put16(b[2:], c.dm)
			qs = 4
		}
		if t == Q8_0 {
			for e, u := range c.u {
				b[2+e] = byte(u)
			}
			return b
		}
		if t == Q5_0 || t == Q5_1 {
			for e, u := range c.u {
				setBit(b[qs:], e, u >= 16) // bit e of the little-endian word
			}
			qs += 4
		}
		for e, u := range c.u {
			b[qs+e%16] |= byte(u&15) << (4 * uint(e/16))
		}
	case Q2_K:
		for g := 0; g < 16; g++ {
			b[g] = byte(c.sc[g] | c.mn[g]<<4)
		}
		for e, u := range c.u {
			// Element e sits in byte 16 + 32*(e/128) + e%32, bits 2*((e%128)/32).
			b[16+32*(e/128)+e%32] |= byte(u) << uint(2*(e%128/32))
		}
		put16(b[80:], c.d)
		put16(b[82:], c.dm)
	case Q3_K:
		for e, u := range c.u {
			b[32+32*(e/128)+e%32] |= byte(u&3) << uint(2*(e%128/32))
			setBit(b[0:32], 8*(e%32)+e/32, u >= 4) // hmask byte e%32, bit e/32
		}
		for g, s := range c.sc {
			// low nibble of byte g%8 (g < 8) or its high nibble; top two
			// bits in byte 8+g%4 at bit 2*(g/4).
			b[96+g%8] |= byte(s&15) << (4 * uint(g/8))
			b[96+8+g%4] |= byte(s>>4) << uint(2*(g/4))
		}
		put16(b[108:], c.d)
	case Q4_K, Q5_K:
		put16(b, c.d)
		put16(b[2:], c.dm)
		s := b[4:16]
		for g := 0; g < 8; g++ {
			if g < 4 {
				s[g] |= byte(c.sc[g])
				s[g+4] |= byte(c.mn[g])
			} else {
				s[g+4] |= byte(c.sc[g]&15) | byte(c.mn[g]&15)<<4
				s[g-4] |= byte(c.sc[g]>>4) << 6
				s[g] |= byte(c.mn[g]>>4) << 6
			}
		}
		qs := 16
		if t == Q5_K {
			for e, u := range c.u {
				setBit(b[16:48], 8*(e%32)+e/32, u >= 16) // byte e%32, bit e/32
			}
			qs = 48
		}
		for e, u := range c.u {
			b[qs+32*(e/64)+e%32] |= byte(u&15) << (4 * uint(e%64/32))
		}
	case Q6_K:
		for e, u := range c.u {
			b[64*(e/128)+e%64] |= byte(u&15) << (4 * uint(e%128/64))
			b[128+32*(e/128)+e%32] |= byte(u>>4) << uint(2*(e%128/32))
		}
		for g, s := range c.sc {
			b[192+g] = byte(int8(s))
		}
		put16(b[208:], c.d)
	}
	return b
}

// value is element e by the definition, in float32 with every product
// rounded: the stored scales are read back through float16.
func (c crafted) value(t Type, e int) float32 {
	d, dm := half.RoundF16(c.d), half.RoundF16(c.dm)
	u := c.u[e]
	switch t {
	case Q4_0:
		return float32(u-8) * d
	case Q5_0:
		return float32(u-16) * d
	case Q4_1, Q5_1:
		return float32(float32(u)*d) + dm
	case Q8_0:
		return float32(int8(u)) * d
	case Q2_K:
		g := e / 16
		return float32(float32(d*float32(c.sc[g]))*float32(u)) - float32(dm*float32(c.mn[g]))
	case Q3_K:
		return float32(d*float32(c.sc[e/16]-32)) * float32(u-4)
	case Q4_K, Q5_K:
		g := e / 32
		return float32(float32(d*float32(c.sc[g]))*float32(u)) - float32(dm*float32(c.mn[g]))
	case Q6_K:
		return float32(d*float32(int8(c.sc[e/16]))) * float32(u-32)
	}
	panic(t)
}

// levels are the stored values an element, a group scale and a group min
// take in each type: elements in [0, eu), scales in [0, su), mins [0, mu).
func levels(t Type) (eu, groups, su, mu int) {
	switch t {
	case Q4_0, Q4_1:
		return 16, 0, 0, 0
	case Q5_0, Q5_1:
		return 32, 0, 0, 0
	case Q8_0:
		return 256, 0, 0, 0
	case Q2_K:
		return 4, 16, 16, 16
	case Q3_K:
		return 8, 16, 64, 0
	case Q4_K:
		return 16, 8, 64, 64
	case Q5_K:
		return 32, 8, 64, 64
	case Q6_K:
		return 64, 16, 256, 0
	}
	panic(t)
}

// TestDequantDefinition decodes crafted blocks whose elements run through
// every stored value (in several orders) and whose scales run through the
// edge values and every stored scale and min, and compares each element
// with its definition, bit for bit and against float64 within rounding.
func TestDequantDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for _, typ := range quantized {
		eu, groups, su, mu := levels(typ)
		bs := typ.BlockSize()
		for trial := 0; trial < 3*len(edgeScales); trial++ {
			c := crafted{u: make([]int, bs), sc: make([]int, groups), mn: make([]int, groups)}
			c.d = edgeScales[trial%len(edgeScales)]
			c.dm = edgeScales[(trial+3)%len(edgeScales)]
			for e := range c.u {
				switch trial / len(edgeScales) {
				case 0:
					c.u[e] = e % eu // every value in order
				case 1:
					c.u[e] = (eu - 1 - e%eu) // descending
				default:
					c.u[e] = r.IntN(eu)
				}
			}
			for g := range c.sc {
				c.sc[g] = (g*su/groups + trial) % su // sweeps every scale over the trials
				if mu > 0 {
					c.mn[g] = (g*7 + trial) % mu
				}
			}
			if trial == 0 && groups > 0 { // the extremes
				c.sc[0], c.sc[groups-1] = su-1, 0
				if mu > 0 {
					c.mn[0], c.mn[groups-1] = 0, mu-1
				}
			}
			b := c.pack(typ)
			y := make([]float32, bs)
			if err := Dequantize(typ, y, b); err != nil {
				t.Fatal(err)
			}
			for e := range y {
				want := c.value(typ, e)
				if math.Float32bits(y[e]) != math.Float32bits(want) {
					t.Fatalf("%s trial %d: element %d (stored %d) = %v, definition %v", typ, trial, e, c.u[e], y[e], want)
				}
			}
		}
	}
}

// TestDequantEveryScale sweeps each K-quant's scales and mins through all
// stored values, with the element values all equal, so a scale or min
// read from the wrong bits shows.
func TestDequantEveryScale(t *testing.T) {
	for _, typ := range []Type{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K} {
		eu, groups, su, mu := levels(typ)
		for s := 0; s < su; s++ {
			c := crafted{u: make([]int, typ.BlockSize()), sc: make([]int, groups), mn: make([]int, groups), d: 0.5, dm: 0.25}
			for e := range c.u {
				c.u[e] = eu - 1
			}
			for g := range c.sc {
				c.sc[g] = (s + g) % su
				if mu > 0 {
					c.mn[g] = (s + 3*g) % mu
				}
			}
			y := make([]float32, typ.BlockSize())
			dequantRow(typ, y, c.pack(typ))
			for e := range y {
				if want := c.value(typ, e); y[e] != want {
					t.Fatalf("%s scale sweep %d: element %d = %v, want %v", typ, s, e, y[e], want)
				}
			}
		}
	}
}

// TestDequantLiteral decodes blocks written out byte by byte.
func TestDequantLiteral(t *testing.T) {
	// Q4_0, d = 0.5 (0x3800): byte j = 0x(j)(15-j): element j is j-8
	// halves... low nibble 15-j, high nibble j.
	b := []byte{0x00, 0x38}
	for j := 0; j < 16; j++ {
		b = append(b, byte(j)<<4|byte(15-j))
	}
	y := make([]float32, 32)
	if err := Dequantize(Q4_0, y, b); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 16; j++ {
		if y[j] != float32(15-j-8)*0.5 || y[j+16] != float32(j-8)*0.5 {
			t.Fatalf("Q4_0 literal: y[%d], y[%d] = %v, %v", j, j+16, y[j], y[j+16])
		}
	}
	// Q8_0, d = -2 (0xc000), elements -128..127 step 8.
	b = []byte{0x00, 0xc0}
	for j := 0; j < 32; j++ {
		b = append(b, byte(int8(-128+8*j)))
	}
	if err := Dequantize(Q8_0, y, b); err != nil {
		t.Fatal(err)
	}
	for j := range y {
		if y[j] != float32(-128+8*j)*-2 {
			t.Fatalf("Q8_0 literal: y[%d] = %v", j, y[j])
		}
	}
	// Q4_K, d = 1, dmin = 1 (0x3c00), scale 0 = 2, min 0 = 3 (bytes 0 and
	// 4), scale 4 = 0x25 = 37 (byte 8 low nibble 5, byte 0 bits 6-7 = 2),
	// nibbles of qs[0] = 0x7, qs[32] high = 0x9 (element 96, group 3).
	b = make([]byte, 144)
	b[1], b[3] = 0x3c, 0x3c
	b[4+0] = 2 | 2<<6
	b[4+4] = 3
	b[4+8] = 5
	b[16+0] = 7
	b[16+64] = 11 // element 128: group 4, low nibble of byte 64
	b[16+32] = 9 << 4
	y = make([]float32, 256)
	if err := Dequantize(Q4_K, y, b); err != nil {
		t.Fatal(err)
	}
	if y[0] != 2*7-3 || y[1] != -3 || y[128] != 37*11 || y[96] != 0 || y[64] != 0 {
		t.Fatalf("Q4_K literal: y[0]=%v y[1]=%v y[128]=%v y[96]=%v y[64]=%v", y[0], y[1], y[128], y[96], y[64])
	}
}

func TestFloatTypes(t *testing.T) {
	x := []float32{0, -0, 1, -2.5, 65504, 1e-8, float32(math.Inf(1)), 3.0e38, 1.0 / 3}
	for _, typ := range []Type{F32, F16, BF16} {
		b, err := Quantize(typ, x[:6])
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float32, 6)
		if err := Dequantize(typ, y, b); err != nil {
			t.Fatal(err)
		}
		for i := range y {
			want := x[i]
			switch typ {
			case F16:
				want = half.RoundF16(want)
			case BF16:
				want = half.RoundBF16(want)
			}
			if y[i] != want {
				t.Errorf("%s element %d: %v, want %v", typ, i, y[i], want)
			}
		}
	}
	if _, err := Quantize(F16, x); err == nil {
		t.Error("Quantize accepted +Inf")
	}
}

// bound is the largest error the quantizer of t may make on a block whose
// elements lie in [-a, a] (a = the block's largest magnitude): half a
// level of the coarsest group, plus for the K-quants the rounding of the
// group scales to their stored bits (up to half a super-scale step on
// each of top levels) and of the mins.
func bound(t Type, a float32) float64 {
	A := float64(a)
	return rel(t, A) + absolute[t]*0x1p-24
}

// absolute is the largest product of stored integers (scale times level,
// plus min) of each type: a float16 scale in the subnormal range is off
// by up to 2^-25, and this many times that shifts an element.
var absolute = map[Type]float64{
	F16: 1, Q8_0: 128, Q4_0: 8, Q5_0: 16, Q4_1: 16, Q5_1: 32, Q2_K: 15*3 + 15,
	Q3_K: 32 * 4, Q4_K: 63*15 + 63, Q5_K: 63*31 + 63, Q6_K: 128 * 32,
}

func rel(t Type, A float64) float64 {
	switch t {
	case F32:
		return 0
	case F16:
		return A * 0x1p-11
	case BF16:
		return A * 0x1p-8
	case Q8_0:
		return A/127/2 + A*0x1p-11
	case Q4_0: // a value of the other sign near -max clamps a full step
		return A/8 + A*0x1p-10
	case Q5_0:
		return A/16 + A*0x1p-10
	case Q4_1:
		return 2*A/15/2 + A*0x1p-9
	case Q5_1:
		return 2*A/31/2 + A*0x1p-9
	case Q2_K:
		s := 2 * A / 3 // group scale at most range/3, d = max/15
		return s/2 + 3*s/15/2 + A/15/2 + A*0x1p-8
	case Q3_K:
		s := A / 4
		return s + 4*s/31/2 + A*0x1p-8 // q clamps to 3 on the positive side
	case Q4_K:
		s := 2 * A / 15
		return s/2 + 15*s/63/2 + A/63/2 + A*0x1p-8
	case Q5_K:
		s := 2 * A / 31
		return s/2 + 31*s/63/2 + A/63/2 + A*0x1p-8
	case Q6_K:
		s := A / 32
		return s + 32*s/127/2 + A*0x1p-8 // clamps a step as Q3_K
	}
	panic(t)
}

func testInputs(bs int) map[string][]float32 {
	r := rand.New(rand.NewPCG(7, 8))
	in := map[string][]float32{}
	n := 2 * max(bs, QKK)
	mk := func(name string, f func(i int) float32) {
		x := make([]float32, n)
		for i := range x {
			x[i] = f(i)
		}
		in[name] = x
	}
	mk("zeros", func(int) float32 { return 0 })
	mk("constant", func(int) float32 { return 0.75 })
	mk("negative", func(int) float32 { return -1 - r.Float32() })
	mk("uniform", func(int) float32 { return 2*r.Float32() - 1 })
	mk("normal", func(int) float32 { return float32(r.NormFloat64()) * 0.02 })
	mk("spike", func(i int) float32 {
		if i%97 == 5 {
			return 40
		}
		return float32(r.NormFloat64())
	})
	mk("tiny", func(int) float32 { return float32(r.NormFloat64()) * 1e-6 })
	return in
}

// TestQuantizeRoundTrip quantizes varied rows and checks every element of
// the decoded row against the bound of its type.
func TestQuantizeRoundTrip(t *testing.T) {
	for _, typ := range all {
		bs := typ.BlockSize()
		chunk := max(bs, 1)
		if bs == 1 {
			chunk = 1
		}
		for name, x := range testInputs(bs) {
			b, err := Quantize(typ, x)
			if err != nil {
				t.Fatalf("%s %s: %v", typ, name, err)
			}
			if err := CheckFinite(typ, b); err != nil {
				t.Fatalf("%s %s: %v", typ, name, err)
			}
			y := make([]float32, len(x))
			if err := Dequantize(typ, y, b); err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i := 0; i < len(x); i += chunk {
				var a float32
				for _, v := range x[i : i+chunk] {
					a = max(a, abs(v))
				}
				lim := bound(typ, a)
				for j := i; j < i+chunk; j++ {
					e := math.Abs(float64(y[j]) - float64(x[j]))
					if e > lim {
						t.Fatalf("%s %s: element %d = %v decodes to %v, error %.3g > bound %.3g", typ, name, j, x[j], y[j], e, lim)
					}
					worst = max(worst, e/max(float64(a), 1e-30))
				}
			}
			if name == "zeros" && worst != 0 {
				t.Errorf("%s: zeros do not round-trip exactly", typ)
			}
			t.Logf("%-5s %-8s worst error / block max = %.4f", typ, name, worst)
		}
	}
}

// TestQuantizeExtremes: the element of largest magnitude of a symmetric
// type's block comes back exactly up to the float16 rounding of d.
func TestQuantizeExtremes(t *testing.T) {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32(i-10) / 4
	}
	for _, typ := range []Type{Q4_0, Q5_0, Q8_0} {
		b, _ := Quantize(typ, x)
		y := make([]float32, 32)
		dequantRow(typ, y, b)
		tol := 0.0 // 5.25/8 and 5.25/16 are float16 numbers
		if typ == Q8_0 {
			tol = 5.25 * 0x1p-11 // 127 times half an ulp of d
		}
		if math.Abs(float64(y[31])-5.25) > tol {
			t.Errorf("%s: extreme 5.25 decodes to %v", typ, y[31])
		}
	}
}

func TestDotMatVec(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols = 520, 512 // large enough for MatVec's goroutines
	x := make([]float32, cols)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	for _, typ := range all {
		b, err := Quantize(typ, w)
		if err != nil {
			t.Fatal(err)
		}
		deq := make([]float32, len(w))
		dequantRow(typ, deq, b)
		dst := make([]float32, rows)
		MatVec(typ, dst, b, rows, cols, x)
		rb, _ := typ.RowBytes(cols)
		for i := 0; i < rows; i++ {
			var ref, mag float64
			for j := 0; j < cols; j++ {
				p := float64(deq[i*cols+j]) * float64(x[j])
				ref += p
				mag += math.Abs(p)
			}
			// float32 sums of cols products: within cols * 2^-24 of the
			// sum of magnitudes.
			if e := math.Abs(float64(dst[i]) - ref); e > float64(cols)*0x1p-24*mag {
				t.Errorf("%s row %d: dot %v, float64 reference %v (error %.3g)", typ, i, dst[i], ref, e)
			}
			if d := Dot(typ, b[i*rb:(i+1)*rb], x); d != dst[i] {
				t.Errorf("%s row %d: Dot %v != MatVec %v", typ, i, d, dst[i])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	y := make([]float32, 32)
	if err := Dequantize(Q8_0, y, make([]byte, 33)); err == nil {
		t.Error("Dequantize accepted 33 bytes for one Q8_0 block")
	}
	if err := Dequantize(IQ4_NL, y, make([]byte, 18)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "IQ4_NL") {
		t.Errorf("IQ4_NL: %v", err)
	}
	b := make([]byte, 2*144)
	binary.LittleEndian.PutUint16(b[144+2:], 0x7e00) // dmin of block 1: NaN
	if err := CheckFinite(Q4_K, b); err == nil || !strings.Contains(err.Error(), "block 1") {
		t.Errorf("CheckFinite(NaN dmin) = %v", err)
	}
	b = []byte{0, 0, 0x80, 0x7f}
	if err := CheckFinite(BF16, b); err == nil || !strings.Contains(err.Error(), "element 1") {
		t.Errorf("CheckFinite(BF16 inf) = %v", err)
	}
	if err := CheckFinite(F32, []byte{0, 0, 0xc0, 0x7f}); err == nil {
		t.Error("CheckFinite(F32 NaN) = nil")
	}
	defer func() {
		if recover() == nil {
			t.Error("Dot with a short row did not panic")
		}
	}()
	Dot(Q8_0, make([]byte, 30), y)
}

// TestMatMul: MatMul gives Dot's bits for every row and vector, with one
// worker and with several, for every type.
func TestMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, c := range []struct{ rows, cols, n int }{{3, 256, 1}, {37, 512, 5}, {64, 768, 24}} {
		w := make([]float32, c.rows*c.cols)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		x := make([]float32, c.n*c.cols)
		for i := range x {
			x[i] = 2*r.Float32() - 1
		}
		for _, typ := range all {
			b, err := Quantize(typ, w)
			if err != nil {
				t.Fatal(err)
			}
			rb, _ := typ.RowBytes(c.cols)
			dst := make([]float32, c.n*c.rows)
			MatMul(typ, dst, b, c.rows, c.cols, x, c.n)
			for j := 0; j < c.n; j++ {
				for i := 0; i < c.rows; i++ {
					want := Dot(typ, b[i*rb:(i+1)*rb], x[j*c.cols:(j+1)*c.cols])
					if math.Float32bits(dst[j*c.rows+i]) != math.Float32bits(want) {
						t.Fatalf("%s %dx%d n=%d: row %d vector %d: MatMul %v, Dot %v", typ, c.rows, c.cols, c.n, i, j, dst[j*c.rows+i], want)
					}
				}
			}
		}
	}
}
