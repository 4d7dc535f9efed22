package transformer

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/internal/fmacheck"
)

// newDense is a dense KV cache for c of up to 1,024 positions (the
// context of the test models; a real model's longer context would only
// waste memory).
func newDense(c model.Config) *kvcache.Dense {
	return kvcache.NewDense(kvcache.Shape{Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads, HeadSize: c.HeadDim}, min(c.Context, 1024))
}

func randomLlama(t testing.TB, seed uint64) *llama.Model {
	m, err := llama.Random(llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 40, SeqLen: 32}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAgainstLlama2C: on the same weights, the logits and the observed
// q/k/v (q and k permuted back to llama2.c's interleaved order) agree with
// core/llama's transcription of run.c within float32 rounding (the sums
// run in another order), and greedy decoding picks the same tokens.
func TestAgainstLlama2C(t *testing.T) {
	lm := randomLlama(t, 3)
	ck, err := model.FromLlama2C(lm)
	if err != nil {
		t.Fatal(err)
	}
	compareWithLlama(t, lm, ck, 24, 1e-4)
}

// compareWithLlama runs n greedy steps through both and compares.
func compareWithLlama(t *testing.T, lm *llama.Model, ck *model.Checkpoint, n int, tol float64) []int {
	t.Helper()
	m, err := New(ck)
	if err != nil {
		t.Fatal(err)
	}
	c := ck.Config
	st := m.NewState(newDense(c))
	ref := lm.NewState()
	var refQ, gotQ [][]float32
	ref.Observe = func(l, pos int, q, k, v, out []float32) { refQ = append(refQ, append([]float32(nil), q...)) }
	st.Observe = func(l, pos int, q, k, v, out []float32) { gotQ = append(gotQ, append([]float32(nil), q...)) }
	tok, toks := 1, []int{}
	for pos := 0; pos < n; pos++ {
		want := lm.Forward(tok, pos, ref)
		got := m.Forward(tok, pos, st)
		var mx, worst float64
		for i := range want {
			mx = max(mx, math.Abs(float64(want[i])))
			worst = max(worst, math.Abs(float64(got[i]-want[i])))
		}
		if worst > tol*max(mx, 1) {
			t.Fatalf("pos %d: logits differ by %.3g (largest %.3g)", pos, worst, mx)
		}
		a, b := argmax(want), argmax(got)
		if a != b {
			t.Fatalf("pos %d: greedy token %d, llama2.c %d", pos, b, a)
		}
		toks = append(toks, b)
		tok = b
	}
	// q of every layer and position: half-split i, i+d/2 <-> interleaved 2i, 2i+1.
	hd := c.HeadDim
	for s := range refQ {
		for h := 0; h < c.Heads; h++ {
			for i := 0; i < hd/2; i++ {
				for j := 0; j < 2; j++ {
					w, g := refQ[s][h*hd+2*i+j], gotQ[s][h*hd+j*hd/2+i]
					if math.Abs(float64(w-g)) > tol*(1+math.Abs(float64(w))) {
						t.Fatalf("observation %d head %d: q %v vs llama2.c %v", s, h, g, w)
					}
				}
			}
		}
	}
	return toks
}

func argmax(x []float32) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

// reference is a float64 forward pass written from the definitions,
// independent of the float32 code: dequantized weights, half-split RoPE
// with the rope factors, biases, per-head q/k RMSNorm, GQA softmax
// attention, SwiGLU.
type reference struct {
	c    model.Config
	w    map[string][]float64
	keys [][][]float64
	vals [][][]float64
}

func newReference(t *testing.T, ck *model.Checkpoint) *reference {
	r := &reference{c: ck.Config, w: map[string][]float64{}, keys: make([][][]float64, ck.Config.Layers), vals: make([][][]float64, ck.Config.Layers)}
	for name, w := range ck.Weights {
		x, err := w.Floats()
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(v)
		}
		r.w[name] = y
	}
	return r
}

func (r *reference) mv(name string, x []float64, rows int) []float64 {
	w := r.w[name]
	cols := len(x)
	out := make([]float64, rows)
	for i := range out {
		for j, v := range x {
			out[i] += w[i*cols+j] * v
		}
	}
	if b, ok := r.w[name[:len(name)-len("weight")]+"bias"]; ok {
		for i := range out {
			out[i] += b[i]
		}
	}
	return out
}

func (r *reference) norm(x, w []float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+r.c.RMSEps)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = w[i] * v * s
	}
	return out
}

func (r *reference) forward(tok, pos int) []float64 {
	c := r.c
	hd := c.HeadDim
	x := append([]float64(nil), r.w["token_embd.weight"][tok*c.Dim:(tok+1)*c.Dim]...)
	rope := func(v []float64) {
		for h := 0; h < len(v)/hd; h++ {
			for i := 0; i < hd/2; i++ {
				f := math.Pow(c.RopeTheta, -float64(2*i)/float64(hd))
				if c.RopeFactors != nil {
					f /= float64(c.RopeFactors[i])
				}
				s, co := math.Sincos(float64(pos) * f)
				a, b := v[h*hd+i], v[h*hd+i+hd/2]
				v[h*hd+i], v[h*hd+i+hd/2] = a*co-b*s, a*s+b*co
			}
		}
	}
	for l := 0; l < c.Layers; l++ {
		p := func(s string) string { return "blk." + itoa(l) + "." + s }
		xb := r.norm(x, r.w[p("attn_norm.weight")])
		q := r.mv(p("attn_q.weight"), xb, c.Heads*hd)
		k := r.mv(p("attn_k.weight"), xb, c.KVHeads*hd)
		v := r.mv(p("attn_v.weight"), xb, c.KVHeads*hd)
		if c.QKNorm {
			for h := 0; h < c.Heads; h++ {
				copy(q[h*hd:], r.norm(q[h*hd:(h+1)*hd], r.w[p("attn_q_norm.weight")]))
			}
			for h := 0; h < c.KVHeads; h++ {
				copy(k[h*hd:], r.norm(k[h*hd:(h+1)*hd], r.w[p("attn_k_norm.weight")]))
			}
		}
		rope(q)
		rope(k)
		r.keys[l] = append(r.keys[l][:pos], k)
		r.vals[l] = append(r.vals[l][:pos], v)
		att := make([]float64, c.Heads*hd)
		for h := 0; h < c.Heads; h++ {
			kv := (h / (c.Heads / c.KVHeads)) * hd
			lg := make([]float64, pos+1)
			mx := math.Inf(-1)
			for t := range lg {
				for i := 0; i < hd; i++ {
					lg[t] += q[h*hd+i] * r.keys[l][t][kv+i]
				}
				lg[t] /= math.Sqrt(float64(hd))
				mx = math.Max(mx, lg[t])
			}
			var sum float64
			for t := range lg {
				lg[t] = math.Exp(lg[t] - mx)
				sum += lg[t]
			}
			for t := range lg {
				for i := 0; i < hd; i++ {
					att[h*hd+i] += lg[t] / sum * r.vals[l][t][kv+i]
				}
			}
		}
		o := r.mv(p("attn_output.weight"), att, c.Dim)
		for i := range x {
			x[i] += o[i]
		}
		xb = r.norm(x, r.w[p("ffn_norm.weight")])
		g := r.mv(p("ffn_gate.weight"), xb, c.FFN)
		u := r.mv(p("ffn_up.weight"), xb, c.FFN)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		d := r.mv(p("ffn_down.weight"), g, c.Dim)
		for i := range x {
			x[i] += d[i]
		}
	}
	x = r.norm(x, r.w["output_norm.weight"])
	out := "output.weight"
	if c.Tied {
		out = "token_embd.weight"
	}
	return r.mv(out, x, c.Vocab)
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + itoa(i%10)
}

// variants turns a llama2.c checkpoint into each architecture's features:
// Qwen2 (random q/k/v biases), Qwen3 (q/k norms, head dim != dim/heads is
// not reachable from llama2.c shapes, so dim/heads), Llama with
// attention_bias and Llama 3.1 rope factors; weights quantized to Q8_0.
func variants(t *testing.T, base *model.Checkpoint) map[string]*model.Checkpoint {
	r := rand.New(rand.NewPCG(4, 4))
	vecOf := func(n int, scale float64, offset float64) *model.Weight {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(offset + scale*r.NormFloat64())
		}
		w, _ := model.NewWeight(quant.F32, 1, n, x)
		return w
	}
	clone := func() *model.Checkpoint {
		ck := &model.Checkpoint{Config: base.Config, Weights: map[string]*model.Weight{}}
		for k, v := range base.Weights {
			ck.Weights[k] = v
		}
		return ck
	}
	c := base.Config
	out := map[string]*model.Checkpoint{"llama": clone()}
	q2 := clone()
	q2.Config.Arch, q2.Config.QKVBias = model.Qwen2, true
	q3 := clone()
	q3.Config.Arch, q3.Config.QKNorm = model.Qwen3, true
	lb := clone()
	lb.Config.QKVBias, lb.Config.OutputBias = true, true
	lb.Config.RopeFactors = model.Llama3Factors(c.HeadDim, c.RopeTheta, 8, 1, 4, 8)
	for l := 0; l < c.Layers; l++ {
		p := func(s string) string { return "blk." + itoa(l) + "." + s }
		for _, ck := range []*model.Checkpoint{q2, lb} {
			ck.Weights[p("attn_q.bias")] = vecOf(c.Heads*c.HeadDim, 0.1, 0)
			ck.Weights[p("attn_k.bias")] = vecOf(c.KVHeads*c.HeadDim, 0.1, 0)
			ck.Weights[p("attn_v.bias")] = vecOf(c.KVHeads*c.HeadDim, 0.1, 0)
		}
		lb.Weights[p("attn_output.bias")] = vecOf(c.Dim, 0.1, 0)
		q3.Weights[p("attn_q_norm.weight")] = vecOf(c.HeadDim, 0.2, 1)
		q3.Weights[p("attn_k_norm.weight")] = vecOf(c.HeadDim, 0.2, 1)
	}
	out["qwen2"], out["qwen3"], out["llama+bias+rope3"] = q2, q3, lb
	q8 := clone()
	for k, w := range q8.Weights {
		if w.Rows > 1 {
			x, _ := w.Floats()
			if q8.Weights[k], _ = model.NewWeight(quant.Q8_0, w.Rows, w.Cols, x); q8.Weights[k] == nil {
				t.Fatalf("quantizing %s", k)
			}
		}
	}
	out["llama Q8_0"] = q8
	return out
}

// TestAgainstReference: every architecture's features against the float64
// forward pass, logits within float32 rounding over 12 positions.
func TestAgainstReference(t *testing.T) {
	base, err := model.FromLlama2C(randomLlama(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	for name, ck := range variants(t, base) {
		m, err := New(ck)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		st := m.NewState(newDense(ck.Config))
		ref := newReference(t, ck)
		for pos, tok := range []int{1, 7, 3, 3, 39, 0, 12, 5, 8, 2, 30, 11} {
			got := m.Forward(tok, pos, st)
			want := ref.forward(tok, pos)
			var mx, worst float64
			for i := range want {
				mx = max(mx, math.Abs(want[i]))
				worst = max(worst, math.Abs(float64(got[i])-want[i]))
			}
			if worst > 2e-5*max(mx, 1) {
				t.Fatalf("%s pos %d: logits off the float64 reference by %.3g (largest %.3g)", name, pos, worst, mx)
			}
		}
	}
}

// TestStories260K: the real model, through GGUF F32 and back, decodes
// greedily from BOS what models/README.md says and what the llama2.c path
// decodes.
func TestStories260K(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("native only (slow under Node)")
	}
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "shared", "models")
	}
	p := filepath.Join(dir, "stories260K.bin")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the real model %s is absent", p)
	}
	lm, err := llama.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := model.FromLlama2C(lm)
	if err != nil {
		t.Fatal(err)
	}
	// Through files: GGUF llama (interleaved rows on disk), GGUF qwen2
	// with zero biases (half-split on disk), a Hugging Face folder, F32.
	var buf bytes.Buffer
	if err := model.WriteGGUF(&buf, ck, model.GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	fromGGUF := func(b []byte) *model.Checkpoint {
		f, err := gguf.Decode("m.gguf", b)
		if err != nil {
			t.Fatal(err)
		}
		back, err := model.FromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	q2 := &model.Checkpoint{Config: ck.Config, Weights: map[string]*model.Weight{}}
	for k, w := range ck.Weights {
		q2.Weights[k] = w
	}
	q2.Config.Arch, q2.Config.QKVBias = model.Qwen2, true
	c := ck.Config
	for l := 0; l < c.Layers; l++ {
		for name, n := range map[string]int{"attn_q.bias": c.Heads * c.HeadDim, "attn_k.bias": c.KVHeads * c.HeadDim, "attn_v.bias": c.KVHeads * c.HeadDim} {
			q2.Weights["blk."+itoa(l)+"."+name], _ = model.NewWeight(quant.F32, 1, n, make([]float32, n))
		}
	}
	var qbuf bytes.Buffer
	if err := model.WriteGGUF(&qbuf, q2, model.GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	hfDir := filepath.Join(t.TempDir(), "hf")
	if err := model.WriteHF(hfDir, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	fromHF, err := model.Open(hfDir)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{461, 461, 401, 401, 401, 461, 378, 455, 473, 456}
	for name, c := range map[string]*model.Checkpoint{
		"llama2.c": ck, "gguf llama": fromGGUF(buf.Bytes()), "gguf qwen2": fromGGUF(qbuf.Bytes()), "hf": fromHF,
	} {
		toks := compareWithLlama(t, lm, c, 10, 1e-4)
		for i := range want {
			if toks[i] != want[i] {
				t.Fatalf("%s: greedy tokens %v, want %v", name, toks, want)
			}
		}
	}
}

func TestNoFusedMultiplyAdd(t *testing.T) { fmacheck.Check(t, ".") }

// TestPrefill: Prefill gives Forward's bits (logits, observations, and the
// cache, seen through the next Forward), for every variant, in two blocks;
// so does ForwardBlock, for every position's logits.
func TestPrefill(t *testing.T) {
	base, err := model.FromLlama2C(randomLlama(t, 6))
	if err != nil {
		t.Fatal(err)
	}
	toks := []int{1, 5, 9, 9, 2, 33, 17, 4, 0, 21}
	for name, ck := range variants(t, base) {
		m, err := New(ck)
		if err != nil {
			t.Fatal(err)
		}
		type obs struct {
			l, pos int
			q      []float32
		}
		seq, blk := m.NewState(newDense(ck.Config)), m.NewState(newDense(ck.Config))
		var so, bo []obs
		seq.Observe = func(l, pos int, q, k, v, out []float32) {
			so = append(so, obs{l, pos, append(append([]float32(nil), q...), out...)})
		}
		blk.Observe = func(l, pos int, q, k, v, out []float32) {
			bo = append(bo, obs{l, pos, append(append([]float32(nil), q...), out...)})
		}
		var want []float32
		for pos, tok := range toks {
			want = append([]float32(nil), m.Forward(tok, pos, seq)...)
		}
		m.Prefill(toks[:4], 0, blk)
		got := m.Prefill(toks[4:], 4, blk)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: logit %d: Prefill %v, Forward %v", name, i, got[i], want[i])
			}
		}
		// ForwardBlock: every position's logits, as Forward gave them.
		fwd, fb := m.NewState(newDense(ck.Config)), m.NewState(newDense(ck.Config))
		var each [][]float32
		for pos, tok := range toks {
			each = append(each, append([]float32(nil), m.Forward(tok, pos, fwd)...))
		}
		blocks := append(append([][]float32(nil), m.ForwardBlock(toks[:3], 0, fb)...), m.ForwardBlock(toks[3:], 3, fb)...)
		if len(blocks) != len(toks) {
			t.Fatalf("%s: ForwardBlock gave %d rows of logits for %d tokens", name, len(blocks), len(toks))
		}
		for p := range toks {
			for i := range each[p] {
				if math.Float32bits(blocks[p][i]) != math.Float32bits(each[p][i]) {
					t.Fatalf("%s: position %d logit %d: ForwardBlock %v, Forward %v", name, p, i, blocks[p][i], each[p][i])
				}
			}
		}
		// Observations: the same set (Prefill's come layer by layer).
		key := func(o obs) [2]int { return [2]int{o.l, o.pos} }
		byKey := map[[2]int][]float32{}
		for _, o := range so {
			byKey[key(o)] = o.q
		}
		for _, o := range bo {
			w := byKey[key(o)]
			for i := range w {
				if math.Float32bits(w[i]) != math.Float32bits(o.q[i]) {
					t.Fatalf("%s: layer %d pos %d: observation differs", name, o.l, o.pos)
				}
			}
		}
		a, b := m.Forward(3, len(toks), seq), m.Forward(3, len(toks), blk)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s: the cache after Prefill differs", name)
			}
		}
	}
}

// TestQwen3HeadDim: Qwen3 sets head_dim apart from hidden/heads (Qwen3-0.6B:
// 1024 wide, 16 heads of 128). A random qwen3 checkpoint of that kind, read
// back from a Hugging Face folder and from GGUF, runs as the float64
// reference says.
func TestQwen3HeadDim(t *testing.T) {
	c := model.Config{Arch: model.Qwen3, Dim: 64, FFN: 96, Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Vocab: 40,
		Context: 64, RMSEps: 1e-6, RopeTheta: 1000000, QKNorm: true}
	r := rand.New(rand.NewPCG(8, 8))
	ck := &model.Checkpoint{Config: c, Weights: map[string]*model.Weight{}}
	add := func(name string, rows, cols int, one bool) {
		x := make([]float32, rows*cols)
		for i := range x {
			x[i] = float32(r.NormFloat64()) / float32(math.Sqrt(float64(cols)))
			if one {
				x[i] = 1 + x[i]/4
			}
		}
		w, err := model.NewWeight(quant.F32, rows, cols, x)
		if err != nil {
			t.Fatal(err)
		}
		ck.Weights[name] = w
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	add("token_embd.weight", c.Vocab, c.Dim, false)
	add("output_norm.weight", 1, c.Dim, true)
	add("output.weight", c.Vocab, c.Dim, false)
	for l := 0; l < c.Layers; l++ {
		p := func(s string) string { return "blk." + itoa(l) + "." + s }
		add(p("attn_norm.weight"), 1, c.Dim, true)
		add(p("ffn_norm.weight"), 1, c.Dim, true)
		add(p("attn_q_norm.weight"), 1, c.HeadDim, true)
		add(p("attn_k_norm.weight"), 1, c.HeadDim, true)
		add(p("attn_q.weight"), q, c.Dim, false)
		add(p("attn_k.weight"), kv, c.Dim, false)
		add(p("attn_v.weight"), kv, c.Dim, false)
		add(p("attn_output.weight"), c.Dim, q, false)
		add(p("ffn_gate.weight"), c.FFN, c.Dim, false)
		add(p("ffn_up.weight"), c.FFN, c.Dim, false)
		add(p("ffn_down.weight"), c.Dim, c.FFN, false)
	}
	dir := filepath.Join(t.TempDir(), "qwen3")
	if err := model.WriteHF(dir, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	fromHF, err := model.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := model.WriteGGUF(&buf, ck, model.GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	fromGGUF, err := model.Decode(map[string][]byte{"qwen3.gguf": buf.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	for name, back := range map[string]*model.Checkpoint{"hf": fromHF, "gguf": fromGGUF} {
		if back.Config.HeadDim != 32 || !back.Config.QKNorm || back.Config.Arch != model.Qwen3 {
			t.Fatalf("%s: config %+v", name, back.Config)
		}
		m, err := New(back)
		if err != nil {
			t.Fatal(err)
		}
		st := m.NewState(newDense(back.Config))
		ref := newReference(t, ck)
		for pos, tok := range []int{1, 4, 9, 16, 25, 36} {
			got, want := m.Forward(tok, pos, st), ref.forward(tok, pos)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 2e-5*(1+math.Abs(want[i])) {
					t.Fatalf("%s pos %d logit %d: %v, float64 reference %v", name, pos, i, got[i], want[i])
				}
			}
		}
	}
}
