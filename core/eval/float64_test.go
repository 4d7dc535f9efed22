package eval

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/llama"
)

// model64 is a llama2.c checkpoint read by this test on its own, in
// float64, for an independent check of the end-to-end evaluation.
type model64 struct {
	dim, hid, layers, heads, kvHeads, vocab, seqLen int
	emb, rmsAtt, wq, wk, wv, wo, rmsFFN, w1, w2, w3 []float64
	rmsFinal, wcls                                  []float64
}

func readModel64(t *testing.T, path string) *model64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := make([]int, 7)
	for i := range h {
		h[i] = int(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	m := &model64{dim: h[0], hid: h[1], layers: h[2], heads: h[3], kvHeads: h[4], vocab: h[5], seqLen: h[6]}
	shared := m.vocab > 0
	if !shared {
		m.vocab = -m.vocab
	}
	off := 28
	take := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:])))
		}
		off += 4 * n
		return x
	}
	d, l, kv := m.dim, m.layers, m.kvHeads*(m.dim/m.heads)
	m.emb = take(m.vocab * d)
	m.rmsAtt = take(l * d)
	m.wq = take(l * d * d)
	m.wk = take(l * kv * d)
	m.wv = take(l * kv * d)
	m.wo = take(l * d * d)
	m.rmsFFN = take(l * d)
	m.w1 = take(l * m.hid * d)
	m.w2 = take(l * d * m.hid)
	m.w3 = take(l * m.hid * d)
	m.rmsFinal = take(d)
	take(m.seqLen * (d / m.heads)) // freq_cis_real and _imag
	if shared {
		m.wcls = m.emb
	} else {
		m.wcls = take(m.vocab * d)
	}
	return m
}

func mv64(out, w, x []float64) {
	n := len(x)
	for i := range out {
		var s float64
		for j, v := range x {
			s += w[i*n+j] * v
		}
		out[i] = s
	}
}

func rms64(o, x, w []float64) {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	ss = 1 / math.Sqrt(ss/float64(len(x))+1e-5)
	for i := range o {
		o[i] = w[i] * ss * x[i]
	}
}

// run64 feeds tokens at positions 0..len-1 with a float64 forward pass in
// which position pos of layer l and KV head kv attends to the prefix
// positions keep(l, kv, pos) allows (all of them when keep is nil) and to
// every position from prefix to pos. It returns the log-probabilities after
// each position from prefix-1 on.
func (m *model64) run64(tokens []int, prefix int, keep func(l, kv, j int) bool) [][]float64 {
	d, hs := m.dim, m.dim/m.heads
	kvDim := m.kvHeads * hs
	n := len(tokens)
	keys := make([]float64, m.layers*n*kvDim)
	vals := make([]float64, m.layers*n*kvDim)
	x, xb, xb2 := make([]float64, d), make([]float64, d), make([]float64, d)
	q := make([]float64, d)
	hb, hb2 := make([]float64, m.hid), make([]float64, m.hid)
	logits := make([]float64, m.vocab)
	var out [][]float64
	for pos, tok := range tokens {
		copy(x, m.emb[tok*d:(tok+1)*d])
		for l := 0; l < m.layers; l++ {
			rms64(xb, x, m.rmsAtt[l*d:(l+1)*d])
			k := keys[(l*n+pos)*kvDim : (l*n+pos+1)*kvDim]
			v := vals[(l*n+pos)*kvDim : (l*n+pos+1)*kvDim]
			mv64(q, m.wq[l*d*d:(l+1)*d*d], xb)
			mv64(k, m.wk[l*kvDim*d:(l+1)*kvDim*d], xb)
			mv64(v, m.wv[l*kvDim*d:(l+1)*kvDim*d], xb)
			for i := 0; i < d; i += 2 {
				f := 1 / math.Pow(10000, float64(i%hs)/float64(hs))
				s, c := math.Sincos(float64(pos) * f)
				q[i], q[i+1] = q[i]*c-q[i+1]*s, q[i]*s+q[i+1]*c
				if i < kvDim {
					k[i], k[i+1] = k[i]*c-k[i+1]*s, k[i]*s+k[i+1]*c
				}
			}
			for h := 0; h < m.heads; h++ {
				kv := h / (m.heads / m.kvHeads)
				var att []float64
				var idx []int
				for j := 0; j <= pos; j++ {
					if j < prefix && pos >= prefix && keep != nil && !keep(l, kv, j) {
						continue
					}
					kj := keys[(l*n+j)*kvDim+kv*hs:]
					var s float64
					for i := 0; i < hs; i++ {
						s += q[h*hs+i] * kj[i]
					}
					att = append(att, s/math.Sqrt(float64(hs)))
					idx = append(idx, j)
				}
				mx := math.Inf(-1)
				for _, a := range att {
					mx = max(mx, a)
				}
				var z float64
				for i := range att {
					att[i] = math.Exp(att[i] - mx)
					z += att[i]
				}
				o := xb[h*hs : (h+1)*hs]
				clear(o)
				for i, j := range idx {
					vj := vals[(l*n+j)*kvDim+kv*hs:]
					for c := range o {
						o[c] += att[i] / z * vj[c]
					}
				}
			}
			mv64(xb2, m.wo[l*d*d:(l+1)*d*d], xb)
			for i := range x {
				x[i] += xb2[i]
			}
			rms64(xb, x, m.rmsFFN[l*d:(l+1)*d])
			mv64(hb, m.w1[l*m.hid*d:(l+1)*m.hid*d], xb)
			mv64(hb2, m.w3[l*m.hid*d:(l+1)*m.hid*d], xb)
			for i, a := range hb {
				hb[i] = a / (1 + math.Exp(-a)) * hb2[i]
			}
			mv64(xb, m.w2[l*d*m.hid:(l+1)*d*m.hid], hb)
			for i := range x {
				x[i] += xb[i]
			}
		}
		if pos < prefix-1 {
			continue
		}
		rms64(xb, x, m.rmsFinal)
		mv64(logits, m.wcls, xb)
		mx := math.Inf(-1)
		for _, v := range logits {
			mx = max(mx, v)
		}
		var z float64
		for _, v := range logits {
			z += math.Exp(v - mx)
		}
		lp := make([]float64, m.vocab)
		for i, v := range logits {
			lp[i] = v - mx - math.Log(z)
		}
		out = append(out, lp)
	}
	return out
}

// TestTopKAgainstFloat64 checks the end-to-end evaluation of topk on the
// real model stories260K against an independent float64 forward pass that
// attends, in the continuation, only to the prefix tokens topk kept: the
// per-position KL to the full cache agrees within 2e-4 nats + 2 %, and the
// reference's log-probabilities within 2e-3.
func TestTopKAgainstFloat64(t *testing.T) {
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "models")
	}
	path := filepath.Join(dir, "stories260K.bin")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipped: the real model %s is absent (set HAEOLS_MODELS): %v", path, err)
	}
	lm, err := llama.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m64 := readModel64(t, path)
	toks := Continue(lm.Decoder(), []int{BOS}, 256)
	ref, err := Prepare(lm.Decoder(), Sequence{Tokens: toks, Prefix: 224}, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := core.DefaultParams(0.3)
	res, err := ref.Evaluate("topk", p)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[[2]int]map[int]bool{}
	for l := 0; l < m64.layers; l++ {
		for kv := 0; kv < m64.kvHeads; kv++ {
			g, err := ref.Model.Group(l, kv)
			if err != nil {
				t.Fatal(err)
			}
			c, err := g.Compress("topk", p)
			if err != nil {
				t.Fatal(err)
			}
			set := map[int]bool{}
			for _, j := range c.Exact {
				set[int(j)] = true
			}
			kept[[2]int{l, kv}] = set
		}
	}
	full64 := m64.run64(toks, 224, nil)
	topk64 := m64.run64(toks, 224, func(l, kv, j int) bool { return kept[[2]int{l, kv}][j] })
	var worst float64
	for i, row := range full64 {
		for v, lp := range row {
			worst = max(worst, math.Abs(lp-ref.Logp[i][v]))
		}
	}
	if worst > 2e-3 {
		t.Errorf("reference log-probabilities differ from float64 by up to %g", worst)
	}
	for i := range res.KLs {
		var kl float64
		for v, lf := range full64[i+1] {
			kl += math.Exp(lf) * (lf - topk64[i+1][v])
		}
		if d := math.Abs(kl - res.KLs[i]); d > 2e-4+0.02*kl {
			t.Errorf("position %d: kl %g, float64 %g", 224+i, res.KLs[i], kl)
		}
	}
	if res.KL <= 0 {
		t.Errorf("topk at 0.3 has kl %g: the check compared nothing", res.KL)
	}
	t.Logf("topk at 0.3 on stories260K: kl %.4g (float64 check passed at %d positions), reference within %.2g", res.KL, len(res.KLs), worst)
}
