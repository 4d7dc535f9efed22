package heatmap

import (
	"encoding/binary"
	"fmt"
	"image/color"
	"math"

	"github.com/haeols/haeols/assets"
)

// DefaultFloor is the smallest attention probability the colour scale
// distinguishes: values at or below it (including the zeros of evicted
// tokens) get the colour of the floor. Attention is heavy-tailed: in the
// shipped samples the median probability of a head's map lies between
// 1e-7 and 1e-3 and its largest near 1, so six decades show the structure
// of peaked and of diffuse heads alike.
const DefaultFloor = 1e-6

// Colormap is the colormap (package assets) of every heatmap haeols draws:
// viridis, perceptually uniform, readable in grey and under the common
// colour-vision deficiencies.
const Colormap = "viridis"

// Scale maps a value to [0, 1] by log10, clipped to [Floor, Top]:
// t = (log10 v - log10 Floor) / (log10 Top - log10 Floor).
//
// The heatmap uses one Scale, [DefaultFloor, 1] = [1e-6, 1], for the original map, the
// compressed map and their absolute difference |comp - orig|: attention
// probabilities never exceed 1, so the same colour means the same number in
// every panel and the colours do not shift while the ratio is scrubbed.
type Scale struct {
	Floor, Top float64
}

// NewScale returns the scale over [floor, top]. It fails unless
// 0 < floor < top and both are finite.
func NewScale(floor, top float64) (Scale, error) {
	if !(floor > 0) || !(top > floor) || math.IsInf(top, 0) {
		return Scale{}, fmt.Errorf("heatmap: scale needs 0 < floor < top, got floor %g top %g", floor, top)
	}
	return Scale{Floor: floor, Top: top}, nil
}

// DefaultScale is the scale [DefaultFloor, 1] used for all three panels.
func DefaultScale() Scale { return Scale{Floor: DefaultFloor, Top: 1} }

// T maps v to [0, 1]. NaN and values at or below Floor give 0, values at or
// above Top give 1.
func (s Scale) T(v float64) float64 {
	if !(v > s.Floor) { // also NaN
		return 0
	}
	if v >= s.Top {
		return 1
	}
	return (math.Log10(v) - math.Log10(s.Floor)) / (math.Log10(s.Top) - math.Log10(s.Floor))
}

// Value is the inverse of T for t in [0, 1] (clamped).
func (s Scale) Value(t float64) float64 {
	t = min(max(t, 0), 1)
	lf, lt := math.Log10(s.Floor), math.Log10(s.Top)
	return math.Pow(10, lf+t*(lt-lf))
}

// Ticks returns the powers of ten in [Floor, Top], ascending, for the legend.
func (s Scale) Ticks() []float64 {
	var ts []float64
	for e := math.Ceil(math.Log10(s.Floor) - 1e-9); e <= math.Log10(s.Top)+1e-9; e++ {
		ts = append(ts, math.Pow(10, e))
	}
	return ts
}

// lutSize is the number of colours precomputed from a colormap.
const lutSize = 256

// Colors maps values to colours: a Scale followed by a colormap from package
// assets, read through a 256-entry lookup table.
type Colors struct {
	Scale Scale
	Name  string // colormap name
	lut   [lutSize]color.RGBA
	// px are the lut's colours as opaque RGBA bytes, then NoData's (at
	// lutSize, the colour of NaN).
	px [lutSize + 1][4]byte
	// word are px as little-endian words, for writing a pixel at once.
	word [lutSize + 1]uint32
	// thresholds[i] is the smallest value whose lookup index is >= i
	// (i >= 1), so Index needs no logarithm.
	thresholds [lutSize]float32
	// byPrefix narrows the search by the top 16 bits of a positive
	// float32: the indices of the smallest (low byte) and the largest
	// (high byte) float with those bits. Most prefixes lie within one
	// colour, so Index rarely searches.
	byPrefix [1 << 16]uint16
	// pixel is, per top 16 bits of a float32, its index into px when every
	// float with those bits has the same one (nearly all do): Pixel then
	// needs one table lookup, no comparison. A prefix of two neighbouring
	// colours i and i+1 holds split+i (one comparison with thresholds[i+1]
	// tells them apart), any other mixed.
	pixel [1 << 16]uint16
}

// split and mixed mark bit prefixes of Colors.pixel whose floats have
// more than one colour: two neighbouring ones (split + the lower), or
// more, NaN among them (mixed).
const (
	split = 0x8000
	mixed = 0xffff
)

// NewColors builds the mapping of s through the named colormap of package
// assets (e.g. "viridis").
func NewColors(s Scale, colormap string) (*Colors, error) {
	m, err := assets.Colormap(colormap)
	if err != nil {
		return nil, err
	}
	c := &Colors{Scale: s, Name: colormap}
	for i := range c.lut {
		c.lut[i] = m.At(float64(i) / (lutSize - 1))
		c.px[i] = [4]byte{c.lut[i].R, c.lut[i].G, c.lut[i].B, 255}
	}
	c.px[lutSize] = [4]byte{NoData.R, NoData.G, NoData.B, 255}
	for i, p := range c.px {
		c.word[i] = binary.LittleEndian.Uint32(p[:])
	}
	// Index i covers t in [(i-0.5)/(n-1), (i+0.5)/(n-1)): round(t*(n-1)).
	for i := 1; i < lutSize; i++ {
		c.thresholds[i] = float32(s.Value((float64(i) - 0.5) / (lutSize - 1)))
	}
	c.prefixTables()
	return c, nil
}

// prefixTables fills byPrefix and pixel from the thresholds. Each entry
// comes from the smallest and the largest float of its prefix: search
// (lower bound 1) for byPrefix, slowPixel for pixel. The positive finite
// prefixes ascend in value, and so do those two floats, so one sweep over
// the thresholds gives them all (a binary search per end took tens of
// milliseconds in V8's baseline code, at the heatmap page's start); every
// negative float gets 1 and 0, and the few prefixes from +Inf up (NaNs,
// both infinities) are looked up one by one.
func (c *Colors) prefixTables() {
	ks, kp := 1, 0 // search's lower bound is 1, Index's 0
	next := func(k *int, v float32) int {
		for *k < lutSize-1 && c.thresholds[*k+1] <= v {
			*k++
		}
		return *k
	}
	const inf, negInf = 0x7f80, 0xff80 // prefixes of +Inf and -Inf
	for p := range c.pixel {
		lo, hi := math.Float32frombits(uint32(p)<<16), math.Float32frombits(uint32(p)<<16|0xffff)
		var plo, phi int
		switch {
		case p < inf:
			c.byPrefix[p] = uint16(next(&ks, lo)) | uint16(next(&ks, hi))<<8
			plo, phi = next(&kp, lo), next(&kp, hi)
		case p >= 0x8000 && p < negInf:
			c.byPrefix[p] = 1 | 1<<8
		default:
			// slowPixel reads byPrefix (of +Inf): set it first.
			c.byPrefix[p] = uint16(c.search(lo, 1, lutSize-1)) | uint16(c.search(hi, 1, lutSize-1))<<8
			plo, phi = c.slowPixel(lo), c.slowPixel(hi)
		}
		// Floats of one prefix and sign are ordered like their low bits,
		// and the slow lookup is monotone in the value, so a prefix whose
		// smallest and largest floats get the same colour gives it to all
		// between (the NaN prefixes are all NaN; the one of +Inf holds NaNs
		// too, so it is mixed).
		switch {
		case plo == phi:
			c.pixel[p] = uint16(plo)
		case phi == plo+1 && phi < lutSize:
			c.pixel[p] = split + uint16(plo)
		default:
			c.pixel[p] = mixed
		}
	}
}

// Index returns the lookup-table index of v: round(Scale.T(v) * 255),
// found among precomputed thresholds (no logarithm), narrowed first by the
// bits of v.
func (c *Colors) Index(v float32) int {
	if !(v > c.thresholds[1]) {
		if v == c.thresholds[1] {
			return 1
		}
		return 0
	}
	// v > thresholds[1] > 0: v is positive (or +Inf), and floats of one
	// bit prefix are ordered like their bits.
	r := c.byPrefix[math.Float32bits(v)>>16]
	lo, hi := int(r&0xff), int(r>>8)
	if lo == hi {
		return lo
	}
	return c.search(v, lo, hi)
}

// search returns the largest i in [lo, hi] with thresholds[i] <= v, for
// thresholds[lo] <= v (or lo when none is).
func (c *Colors) search(v float32, lo, hi int) int {
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.thresholds[mid] <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// At returns the colour of v.
func (c *Colors) At(v float32) color.RGBA { return c.lut[c.Index(v)] }

// Pixel returns the opaque RGBA bytes of v's colour, NoData's for NaN.
func (c *Colors) Pixel(v float32) [4]byte {
	k := int(c.pixel[math.Float32bits(v)>>16])
	if k >= split {
		k = c.splitPixel(k, v)
	}
	return c.px[k]
}

// PixelRow writes the colours of vals into dst as 4-byte RGBA pixels
// (dst holds at least 4*len(vals) bytes): Pixel for a whole row, with no
// call per pixel.
func (c *Colors) PixelRow(dst []byte, vals []float32) {
	dst = dst[:4*len(vals)]
	for x, v := range vals {
		k := int(c.pixel[math.Float32bits(v)>>16])
		if k >= split {
			k = c.splitPixel(k, v)
		}
		binary.LittleEndian.PutUint32(dst[4*x:], c.word[k])
	}
}

// splitPixel is Pixel's index into px for v of a prefix that pixel marks
// k >= split.
func (c *Colors) splitPixel(k int, v float32) int {
	if k == mixed {
		return c.slowPixel(v)
	}
	k -= split
	if c.thresholds[k+1] <= v {
		k++
	}
	return k
}

// slowPixel is Pixel's index into px without the prefix table. It is not
// inlined, so that Pixel is.
//
//go:noinline
func (c *Colors) slowPixel(v float32) int {
	if v != v {
		return lutSize
	}
	return c.Index(v)
}

// AtT returns the colour at t in [0, 1] of the colormap (for the legend).
func (c *Colors) AtT(t float64) color.RGBA {
	t = min(max(t, 0), 1)
	if t != t {
		t = 0
	}
	return c.lut[int(math.Round(t*(lutSize-1)))]
}
