package core

import (
	"errors"
	"fmt"
	"math"

	"github.com/haeols/haeols/core/half"
)

func init() { Register(quant{}) }

// ErrDoesNotFit is returned (wrapped) by a method that cannot represent the
// cache at all within the asked ratio.
var ErrDoesNotFit = errors.New("does not fit the budget")

// NeedRatioError is an ErrDoesNotFit that knows the smallest ratio at which
// the method would fit.
type NeedRatioError struct {
	What string  // what does not fit, e.g. "2-bit quantization"
	Need float64 // the smallest ratio that fits
}

func (e *NeedRatioError) Error() string {
	return fmt.Sprintf("%s needs ratio >= %.3f: %v", e.What, e.Need, ErrDoesNotFit)
}

// Unwrap makes errors.Is(err, ErrDoesNotFit) true.
func (e *NeedRatioError) Unwrap() error { return ErrDoesNotFit }

// QuantGroup is the quantization group size of the quant baseline.
const QuantGroup = 32

// quantWidths are the bit widths tried, widest first; 16 stores the tokens
// as they are.
var quantWidths = []int{16, 8, 4, 3, 2}

// quant is a KIVI-like baseline: keys quantized per channel and values per
// token, asymmetric, in groups of 32 with an fp16 scale and zero per group;
// the recent window stays at 16 bits; the bit width is the widest of
// 16/8/4/3/2 that fits.
type quant struct{}

func (quant) Name() string { return "quant" }
func (quant) Describe() string {
	return "KIVI-like quantization: keys per channel, values per token, group 32, recent window at 16 bits"
}

// quantBits is the memory of quantizing m tokens of dim d at width w, with r
// recent tokens at 16 bits.
func quantBits(m, r, d, w int) int64 {
	if w == 16 {
		return int64(m+r) * int64(2*d) * BitsPerNumber
	}
	kg := int64((m+QuantGroup-1)/QuantGroup) * int64(d)
	vg := int64(m) * int64((d+QuantGroup-1)/QuantGroup)
	return 2*int64(m)*int64(d)*int64(w) + (kg+vg)*2*BitsPerNumber + int64(r)*int64(2*d)*BitsPerNumber
}

func (quant) Compress(g *Group, p Params) (*Cache, error) {
	if err := g.needKV(); err != nil {
		return nil, err
	}
	b, err := NewBudget(g.N, g.D, p.Ratio, 0, p.Recent)
	if err != nil {
		return nil, err
	}
	n, d := g.N, g.D
	width, r := 0, b.Recent
	for r >= 0 && width == 0 {
		for _, w := range quantWidths {
			if quantBits(n-r, r, d, w) <= b.Bits() {
				width = w
				break
			}
		}
		if width == 0 {
			if r == 0 {
				break
			}
			r = 0 // give up the 16-bit window before giving up
		}
	}
	if width == 0 {
		need := float64(quantBits(n, 0, d, 2)) / float64(b.FullBits)
		return nil, &NeedRatioError{What: "2-bit quantization", Need: need}
	}
	b.Recent = r
	c := newCache("quant", b)
	c.Stages.QuantBits = width
	if width == 16 {
		c.keepExact(span(0, n), Anchor)
		c.finishExact()
		return c, nil
	}
	c.keepExact(span(n-r, n), Recent)
	m := n - r
	c.C = m
	c.Keys, c.Values = make([]float32, m*d), make([]float32, m*d)
	copy(c.Keys, g.K[:m*d])
	copy(c.Values, g.V[:m*d])
	levels := float32(int(1)<<width - 1)
	// Keys: per channel, groups of QuantGroup tokens.
	for t0 := 0; t0 < m; t0 += QuantGroup {
		t1 := min(t0+QuantGroup, m)
		for ch := 0; ch < d; ch++ {
			quantizeStrided(c.Keys[t0*d+ch:], t1-t0, d, levels)
		}
	}
	// Values: per token, groups of QuantGroup channels.
	for t := 0; t < m; t++ {
		for c0 := 0; c0 < d; c0 += QuantGroup {
			quantizeStrided(c.Values[t*d+c0:], min(QuantGroup, d-c0), 1, levels)
		}
	}
	for i := 0; i < m; i++ {
		c.Class[i] = Approx
	}
	c.Stages.SummaryBits = quantBits(m, 0, d, width)
	c.finishExact()
	return c, nil
}

// quantizeStrided quantizes the count elements x[0], x[stride], ... in place
// to the given number of levels, asymmetric, with the scale and zero rounded
// to fp16 as they would be stored.
func quantizeStrided(x []float32, count, stride int, levels float32) {
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := 0; i < count; i++ {
		v := x[i*stride]
		lo, hi = min(lo, v), max(hi, v)
	}
	zero := half.RoundF16(lo)
	scale := half.RoundF16((hi - lo) / levels)
	for i := 0; i < count; i++ {
		v := &x[i*stride]
		if scale == 0 {
			*v = zero
			continue
		}
		q := float32(math.Round(float64((*v - zero) / scale)))
		q = min(max(q, 0), levels)
		*v = float32(q*scale) + zero
	}
}
