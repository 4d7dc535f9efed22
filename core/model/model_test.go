package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/half"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/model/tokenizer"
	"github.com/haeols/haeols/internal/fmacheck"
)

// fromLlama2C is FromLlama2C or a failed test.
func fromLlama2C(t testing.TB, m *llama.Model) *Checkpoint {
	t.Helper()
	ck, err := FromLlama2C(m)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// sameWeights checks that b holds a's weights within tol(name) times the
// largest magnitude of each weight (0: bit for bit).
func sameWeights(t *testing.T, what string, a, b *Checkpoint, tol func(name string, w *Weight) float64) {
	t.Helper()
	if len(a.Weights) != len(b.Weights) {
		t.Fatalf("%s: %d weights, want %d", what, len(b.Weights), len(a.Weights))
	}
	for name, wa := range a.Weights {
		wb, ok := b.Weights[name]
		if !ok || wa.Rows != wb.Rows || wa.Cols != wb.Cols {
			t.Fatalf("%s: weight %s missing or reshaped", what, name)
		}
		xa, err := wa.Floats()
		if err != nil {
			t.Fatal(err)
		}
		xb, err := wb.Floats()
		if err != nil {
			t.Fatal(err)
		}
		var mx, worst float64
		for i := range xa {
			mx = max(mx, math.Abs(float64(xa[i])))
			worst = max(worst, math.Abs(float64(xa[i])-float64(xb[i])))
		}
		if lim := tol(name, wb) * mx; worst > lim {
			t.Fatalf("%s: weight %s (%s) differs by %.3g, more than %.3g", what, name, wb.Type, worst, lim)
		}
	}
}

func exact(string, *Weight) float64 { return 0 }

// quantTol is the relative error a round trip through type t may add.
func quantTol(_ string, w *Weight) float64 {
	switch w.Type {
	case quant.F32:
		return 0
	case quant.F16:
		return 0x1p-11
	case quant.BF16:
		return 0x1p-8
	case quant.Q8_0:
		return 1.0/127 + 0x1p-10
	case quant.Q4_K:
		return 0.15 // measured worst ~0.07 per 256-block max (TestQuantizeRoundTrip in quant)
	case quant.Q6_K:
		return 0.05
	}
	return 1
}

func writeGGUF(t *testing.T, ck *Checkpoint, opt GGUFOptions) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, ck, opt); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Decode("rt.gguf", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sameConfig(t *testing.T, what string, a, b Config) {
	t.Helper()
	// eps and theta pass through FLOAT32 metadata.
	a.RMSEps, b.RMSEps = float64(float32(a.RMSEps)), float64(float32(b.RMSEps))
	a.RopeTheta, b.RopeTheta = float64(float32(a.RopeTheta)), float64(float32(b.RopeTheta))
	if !equalConfig(a, b) {
		t.Fatalf("%s: config %+v, want %+v", what, b, a)
	}
}

func equalConfig(a, b Config) bool { return reflect.DeepEqual(a, b) }

// randomModel is a llama2.c model with random weights: dim 256 so every
// matrix is a whole number of Q4_K super-blocks, GQA, unshared classifier.
func randomModel(t testing.TB, shared bool) *llama.Model {
	m, err := llama.Random(llama.Config{Dim: 256, HiddenDim: 256, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 48, SeqLen: 16, SharedClassifier: shared}, 7)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// smallModel is a llama2.c model small enough for the tests that do not
// quantize to super-blocks (quick under wasm too).
func smallModel(t testing.TB, shared bool) *llama.Model {
	m, err := llama.Random(llama.Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 32, SeqLen: 16, SharedClassifier: shared}, 11)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGGUFLlamaLayout: a llama2.c model written as GGUF llama stores q
// and k exactly as llama2.c does (both interleaved), and reads back to
// the same checkpoint.
func TestGGUFLlamaLayout(t *testing.T) {
	m := smallModel(t, false)
	ck := fromLlama2C(t, m)
	f := writeGGUF(t, ck, GGUFOptions{Name: m.Name})
	raw, _ := m.MarshalBinary()
	c := ck.Config
	// llama2.c's wq of layer 0 starts after the embedding and rms_att.
	start := llama.HeaderSize + 4*(c.Vocab*c.Dim+c.Layers*c.Dim)
	wq0 := raw[start : start+4*c.Dim*c.Dim]
	q, _ := f.Tensor("blk.0.attn_q.weight")
	if !bytes.Equal(q.Data, wq0) {
		t.Fatal("GGUF llama attn_q differs from llama2.c's wq: the RoPE row order is not interleaved")
	}
	if arch, _ := f.String("general.architecture"); arch != "llama" {
		t.Fatalf("architecture %q", arch)
	}
	back, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	sameConfig(t, "gguf llama", ck.Config, back.Config)
	sameWeights(t, "gguf llama F32", ck, back, exact)
}

// TestGGUFQuantized: Q8_0, Q4_K and Q6_K round trips within their
// precision; norms stay F32.
func TestGGUFQuantized(t *testing.T) {
	ck := fromLlama2C(t, randomModel(t, true))
	types := []quant.Type{quant.F16, quant.Q8_0, quant.Q4_K, quant.Q6_K}
	if runtime.GOOS == "js" {
		types = types[2:3] // slow under Node; quant's own tests cover every type there
	}
	for _, typ := range types {
		f := writeGGUF(t, ck, GGUFOptions{Type: func(name string, w *Weight) quant.Type {
			if w.Rows == 1 {
				return quant.F32
			}
			return typ
		}})
		back, err := FromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		if w := back.Weights["blk.1.attn_k.weight"]; w.Type != typ {
			t.Fatalf("attn_k read back as %s", w.Type)
		}
		sameWeights(t, "gguf "+typ.String(), ck, back, quantTol)
	}
}

// TestGGUFQwen2: written as qwen2 (zero biases), q and k stay in the
// half-split order: the file holds the checkpoint's rows unpermuted.
func TestGGUFQwen2(t *testing.T) {
	ck := fromLlama2C(t, smallModel(t, true))
	ck.Config.Arch, ck.Config.QKVBias = Qwen2, true
	c := ck.Config
	for l := 0; l < c.Layers; l++ {
		for _, b := range []struct {
			name string
			n    int
		}{{"attn_q.bias", c.Heads * c.HeadDim}, {"attn_k.bias", c.KVHeads * c.HeadDim}, {"attn_v.bias", c.KVHeads * c.HeadDim}} {
			w, _ := NewWeight(quant.F32, 1, b.n, make([]float32, b.n))
			ck.Weights[blk(l, b.name)] = w
		}
	}
	f := writeGGUF(t, ck, GGUFOptions{})
	q, _ := f.Tensor("blk.0.attn_q.weight")
	if !bytes.Equal(q.Data, ck.Weights["blk.0.attn_q.weight"].Data) {
		t.Fatal("GGUF qwen2 permuted q rows; it stores the half-split order")
	}
	back, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config.Arch != Qwen2 || !back.Config.QKVBias {
		t.Fatalf("config %+v", back.Config)
	}
	sameWeights(t, "gguf qwen2", ck, back, exact)
}

// TestHFRoundTrip: F32 exact, BF16 and F16 within rounding, sharded.
func TestHFRoundTrip(t *testing.T) {
	ck := fromLlama2C(t, smallModel(t, false))
	cases := []struct {
		dtype string
		shard int64
	}{{"F32", 0}, {"BF16", 30_000}, {"F16", 0}}
	if runtime.GOOS == "js" {
		cases = cases[1:2] // file I/O under Node is slow; the code is the same
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "m")
		if err := WriteHF(dir, ck, c.dtype, c.shard); err != nil {
			t.Fatal(err)
		}
		f, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromHF(f)
		if err != nil {
			t.Fatal(err)
		}
		sameConfig(t, "hf "+c.dtype, ck.Config, back.Config)
		sameWeights(t, "hf "+c.dtype, ck, back, quantTol)
		if c.dtype == "F32" {
			sameWeights(t, "hf F32", ck, back, exact)
		}
	}
}

// TestPermutation: ToHalfSplit moves interleaved rows [r0 r1 r2 r3] of a
// head of 4 to [r0 r2 r1 r3]; ToInterleaved undoes it.
func TestPermutation(t *testing.T) {
	x := []float32{0, 1, 2, 3, 10, 11, 12, 13} // 2 heads of 4 rows, 1 column
	w, _ := NewWeight(quant.F32, 8, 1, x)
	h := ToHalfSplit(w, 2, 4)
	got, _ := h.Floats()
	want := []float32{0, 2, 1, 3, 10, 12, 11, 13}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ToHalfSplit = %v, want %v", got, want)
		}
	}
	back, _ := ToInterleaved(h, 2, 4).Floats()
	for i := range x {
		if back[i] != x[i] {
			t.Fatalf("ToInterleaved(ToHalfSplit) = %v", back)
		}
	}
	// A bias row moves element by element.
	b, _ := NewWeight(quant.F32, 1, 8, x)
	bh, _ := ToHalfSplit(b, 2, 4).Floats()
	for i := range want {
		if bh[i] != want[i] {
			t.Fatalf("bias ToHalfSplit = %v", bh)
		}
	}
}

// TestRopeLayouts proves the convention: rotating pairs (2i, 2i+1) of a
// vector (interleaved RoPE, llama2.c and GGUF llama) then permuting it to
// the half-split order gives the same numbers as permuting first and then
// rotating pairs (i, i+d/2) (half-split RoPE, Hugging Face, qwen2), at
// every position, in float64.
func TestRopeLayouts(t *testing.T) {
	const d, theta = 16, 10000.0
	v := make([]float64, d)
	for i := range v {
		v[i] = math.Sin(float64(3*i + 1))
	}
	perm := func(u []float64) []float64 { // interleaved -> half-split
		out := make([]float64, d)
		for i := 0; i < d/2; i++ {
			out[i], out[i+d/2] = u[2*i], u[2*i+1]
		}
		return out
	}
	rot := func(u []float64, pos, i, a, b int) {
		ang := float64(pos) * math.Pow(theta, -float64(2*i)/d)
		s, c := math.Sincos(ang)
		u[a], u[b] = u[a]*c-u[b]*s, u[a]*s+u[b]*c
	}
	for pos := 0; pos < 50; pos += 7 {
		inter := append([]float64(nil), v...)
		for i := 0; i < d/2; i++ {
			rot(inter, pos, i, 2*i, 2*i+1)
		}
		split := perm(v)
		for i := 0; i < d/2; i++ {
			rot(split, pos, i, i, i+d/2)
		}
		for i, x := range perm(inter) {
			if math.Abs(x-split[i]) > 1e-12 {
				t.Fatalf("pos %d: element %d: %v vs %v", pos, i, x, split[i])
			}
		}
	}
	// And the weight permutation is that vector permutation on the rows.
	w, _ := NewWeight(quant.F32, d, 1, func() []float32 {
		x := make([]float32, d)
		for i := range x {
			x[i] = float32(v[i])
		}
		return x
	}())
	h, _ := ToHalfSplit(w, 1, d).Floats()
	for i, x := range perm(v) {
		if h[i] != float32(x) {
			t.Fatalf("ToHalfSplit row %d = %v, want %v", i, h[i], x)
		}
	}
}

// TestLlama3Factors against transformers' formulation: the new inverse
// frequency, whose ratio to the old one is the divisor.
func TestLlama3Factors(t *testing.T) {
	const hd, theta, factor, low, high, orig = 128, 500000.0, 8.0, 1.0, 4.0, 8192
	f := Llama3Factors(hd, theta, factor, low, high, orig)
	if f[0] != 1 || f[hd/2-1] != factor {
		t.Fatalf("factors run %v .. %v, want 1 .. %v", f[0], f[hd/2-1], factor)
	}
	mid := 0
	for i, x := range f {
		inv := 1 / math.Pow(theta, float64(2*i)/hd)
		wave := 2 * math.Pi / inv
		var scaled float64
		switch {
		case wave < orig/high:
			scaled = inv
		case wave > orig/low:
			scaled = inv / factor
		default:
			mid++
			s := (orig/wave - low) / (high - low)
			scaled = (1-s)*inv/factor + s*inv
		}
		if r := inv / scaled; math.Abs(r-float64(x)) > 1e-6*r {
			t.Errorf("pair %d: divisor %v, transformers %v", i, x, r)
		}
		if i > 0 && x < f[i-1] {
			t.Errorf("factors not monotonic at %d", i)
		}
	}
	if mid == 0 {
		t.Error("no pair in the smoothed band")
	}
}

func TestRefusals(t *testing.T) {
	ck := fromLlama2C(t, smallModel(t, true))
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, ck, GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	f, _ := gguf.Decode("g", good)
	edit := func(key string, v any) *gguf.File {
		kv := append([]gguf.KV(nil), f.KV...)
		found := false
		for i := range kv {
			if kv[i].Key == key {
				kv[i].Value, found = v, true
			}
		}
		if !found {
			kv = append(kv, gguf.KV{Key: key, Value: v})
		}
		var b bytes.Buffer
		if err := gguf.Write(&b, kv, f.Tensors); err != nil {
			t.Fatal(err)
		}
		g, err := gguf.Decode("edited", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, c := range []struct {
		f    *gguf.File
		want string
	}{
		{edit("general.architecture", "gemma"), `"gemma" is not supported`},
		{edit("llama.block_count", uint32(3)), "blk.2.attn_norm.weight is missing"},
		{edit("llama.block_count", uint32(1)), "blk.1.attn_k.weight is not part"},
		{edit("llama.embedding_length", uint32(128)), "the config implies"},
		{edit("llama.attention.head_count_kv", uint32(3)), "do not divide"},
		{edit("llama.rope.dimension_count", uint32(32)), "rope.dimension_count = 32"},
		{edit("llama.rope.scaling.type", "yarn"), `"yarn" is not supported`},
		{edit("llama.block_count", "two"), "is STRING"},
		{edit("llama.context_length", uint64(1<<40)), "more than"},
	} {
		if _, err := FromGGUF(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	// A NaN weight scale.
	bad := *ck
	bad.Weights = map[string]*Weight{}
	for k, v := range ck.Weights {
		bad.Weights[k] = v
	}
	w := *ck.Weights["blk.0.attn_v.weight"]
	w.Data = append([]byte(nil), w.Data...)
	binary.LittleEndian.PutUint32(w.Data[8:], math.Float32bits(float32(math.NaN())))
	bad.Weights["blk.0.attn_v.weight"] = &w
	if err := WriteGGUF(&bytes.Buffer{}, &bad, GGUFOptions{}); err == nil || !strings.Contains(err.Error(), "element 2 is NaN") {
		t.Errorf("NaN weight: %v", err)
	}
}

// realModel loads a model of ../shared/models or skips.
func realModel(t *testing.T, name string) *llama.Model {
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "models")
	}
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the real model %s is absent: %v", p, err)
	}
	m, err := llama.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRealModels: stories260K and the byte model round-trip through GGUF
// (F32 exact; Q8_0 and Q4_K where the widths allow, F32 otherwise) and
// Hugging Face folders (F32 exact, BF16 within rounding).
// Native only: the format code is the same under wasm (the other round
// trips run there), and the real models take long under Node.
func TestRealModels(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("native only (slow under Node); the synthetic round trips cover wasm")
	}
	for _, name := range []string{"stories260K.bin", "kjv3m.bin"} {
		t.Run(name, func(t *testing.T) {
			ck := fromLlama2C(t, realModel(t, name))
			back, err := FromGGUF(writeGGUF(t, ck, GGUFOptions{Name: name}))
			if err != nil {
				t.Fatal(err)
			}
			sameConfig(t, "gguf", ck.Config, back.Config)
			sameWeights(t, "gguf F32", ck, back, exact)
			for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_K} {
				pick := func(_ string, w *Weight) quant.Type {
					if w.Rows == 1 || w.Cols%typ.BlockSize() != 0 {
						return quant.F32
					}
					return typ
				}
				back, err := FromGGUF(writeGGUF(t, ck, GGUFOptions{Type: pick}))
				if err != nil {
					t.Fatal(err)
				}
				sameWeights(t, "gguf "+typ.String(), ck, back, quantTol)
			}
			for _, dtype := range []string{"F32", "BF16"} {
				dir := filepath.Join(t.TempDir(), "hf")
				if err := WriteHF(dir, ck, dtype, 0); err != nil {
					t.Fatal(err)
				}
				f, err := hf.Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				back, err := FromHF(f)
				if err != nil {
					t.Fatal(err)
				}
				sameWeights(t, "hf "+dtype, ck, back, quantTol)
			}
		})
	}
}

// BF16 weights read back as BF16 and decode to the rounded values.
func TestBF16Values(t *testing.T) {
	w, _ := NewWeight(quant.BF16, 1, 2, []float32{1.00390625, -3})
	x, _ := w.Floats()
	if x[0] != half.RoundBF16(1.00390625) || x[1] != -3 {
		t.Errorf("BF16 weight decodes to %v", x)
	}
}

func TestNoFusedMultiplyAdd(t *testing.T) { fmacheck.Check(t, ".") }

// TestOpenDecode: one entry point for a GGUF file, a folder, and the
// browser's files.
func TestOpenDecode(t *testing.T) {
	ck := fromLlama2C(t, smallModel(t, true))
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, ck, GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	gpath := filepath.Join(dir, "m.gguf")
	if err := os.WriteFile(gpath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hpath := filepath.Join(dir, "hf")
	if err := WriteHF(hpath, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, n := range []string{hf.ConfigFile, hf.WeightsFile} {
		b, err := os.ReadFile(filepath.Join(hpath, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	for what, open := range map[string]func() (*Checkpoint, error){
		"Open gguf":   func() (*Checkpoint, error) { return Open(gpath) },
		"Open hf":     func() (*Checkpoint, error) { return Open(hpath) },
		"Decode gguf": func() (*Checkpoint, error) { return Decode(map[string][]byte{"m.gguf": buf.Bytes()}) },
		"Decode hf":   func() (*Checkpoint, error) { return Decode(files) },
	} {
		back, err := open()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sameWeights(t, what, ck, back, exact)
	}
	other := filepath.Join(dir, "x.bin")
	os.WriteFile(other, []byte("not a model"), 0o644)
	if _, err := Open(other); err == nil || !strings.Contains(err.Error(), "neither a GGUF file") {
		t.Errorf("Open(other) = %v", err)
	}
	files["m.gguf"] = buf.Bytes()
	if _, err := Decode(files); err == nil || !strings.Contains(err.Error(), "one GGUF file alone") {
		t.Errorf("Decode(mixed) = %v", err)
	}
}

// FuzzFromGGUF: no GGUF file makes the checkpoint builder panic; what it
// accepts passes Check.
func FuzzFromGGUF(f *testing.F) {
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 8, SeqLen: 4, SharedClassifier: true}, 1)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, fromLlama2C(f, m), GGUFOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := gguf.Decode("fuzz", data)
		if err != nil {
			return
		}
		ck, err := FromGGUF(g)
		if err != nil {
			return
		}
		if err := ck.Check(); err != nil {
			t.Fatalf("accepted a checkpoint that fails Check: %v", err)
		}
	})
}

func TestSummary(t *testing.T) {
	ck := fromLlama2C(t, randomModel(t, true))
	f := writeGGUF(t, ck, GGUFOptions{Type: func(name string, w *Weight) quant.Type {
		if w.Rows == 1 {
			return quant.F32
		}
		if strings.Contains(name, "ffn_down") {
			return quant.Q6_K
		}
		return quant.Q4_K
	}})
	back, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	s := back.Summarize()
	if s.Params != ck.Config.Params() || s.Quantization() != "Q4_K+Q6_K+F32" || s.Tokenizer != "none" {
		t.Errorf("summary: %d params (want %d), %q, %q", s.Params, ck.Config.Params(), s.Quantization(), s.Tokenizer)
	}
	var bytes int64
	for _, w := range back.Weights {
		bytes += int64(len(w.Data))
	}
	text := s.String()
	for _, want := range []string{"architecture llama: 2 layers, width 256", "tied embeddings", "Q4_K 13 tensors", "RMSNorm eps 1e-05", "Q6_K 2 tensors", "tokenizer: none", strconv.FormatInt(bytes, 10) + " bytes"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary text lacks %q:\n%s", want, text)
		}
	}
}

// TestHFTokenizerModel: a folder with a SentencePiece tokenizer.model and
// no tokenizer.json reads its tokenizer from it; a tokenizer.model haeols
// cannot encode exactly is refused by name.
func TestHFTokenizerModel(t *testing.T) {
	spm, err := os.ReadFile(filepath.Join("tokenizer", "testdata", "llama-bpe.model"))
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Arch: Llama, Dim: 32, FFN: 32, Layers: 1, Heads: 1, KVHeads: 1, HeadDim: 32, Vocab: 420, Context: 64, RMSEps: 1e-5, RopeTheta: 10000, Tied: true}
	ck, err := Random(c, quant.F32, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	if err := WriteHF(dir, ck, "F32", 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, hf.TokenizerModelFile), spm, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromHF(f)
	if err != nil {
		t.Fatal(err)
	}
	tok := back.Tokenizer
	if tok == nil || tok.Kind() != tokenizer.SentencePiece || tok.Vocab() != 420 {
		t.Fatalf("tokenizer %v", tok)
	}
	if ids, err := tok.Encode("hello world"); err != nil || !reflect.DeepEqual(ids, []int{1, 286, 277}) {
		t.Errorf("hello world: %v %v", ids, err)
	}
	f.TokenizerModel = []byte{0x0a, 0x03, 0x0a, 0x01, 'x'} // one piece, no trainer spec: a Unigram model
	if _, err := FromHF(f); err == nil || !strings.Contains(err.Error(), "tokenizer.model is a Unigram model") {
		t.Errorf("a Unigram tokenizer.model: %v", err)
	}
}
