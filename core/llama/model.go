// Package llama reads llama2.c checkpoints, runs their float32 forward pass
// (a transcription of llama2.c's run.c) and captures the post-RoPE queries,
// keys and values of every layer and head as a haeols sample (HAE-OLS.md §6,
// §7): real attention data from a real model.
//
// Everything is pure Go and deterministic: the same checkpoint, prompt and
// sampler give the same bits natively and under GOOS=js GOARCH=wasm, so a
// capture made in the browser from a user's checkpoint matches one made on
// the command line. Only the legacy llama2.c format (export version 0: a
// 28-byte header of seven int32 then float32 weights) is read; it is the
// format of the stories15M/42M/110M/260K checkpoints.
package llama

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/haeols/haeols/core/xmath"
	"github.com/haeols/haeols/internal/inputs"
)

// Limits checked on the header before anything is allocated, so that a
// browser handed a large or hostile file fails fast with a clear message.
const (
	// MaxParams is the largest model, in parameters (float32 weights
	// excluding the RoPE tables), that Decode and Load accept: 100M
	// parameters is 400 MB of weights, about what a browser tab can hold.
	// stories15M and stories42M fit; stories110M (109.5M) and 7B models do
	// not. The KV cache of
	// the full context (2 * layers * context * kv_dim floats) is held to the
	// same limit.
	MaxParams = 100_000_000
	// MaxDim bounds dim and hidden_dim.
	MaxDim = 1 << 16
	// MaxLayers bounds n_layers.
	MaxLayers = 1 << 10
	// MaxVocab bounds the vocabulary size (model and tokenizer).
	MaxVocab = 1 << 20
	// MaxSeqLen bounds the context length seq_len.
	MaxSeqLen = 1 << 20
)

// HeaderSize is the size in bytes of a legacy llama2.c checkpoint header.
const HeaderSize = 28

// BOS is the beginning-of-sequence token id of llama2.c (sentencepiece).
const BOS = 1

// ErrNotCheckpoint is wrapped by every error about a file that is not a
// well-formed llama2.c checkpoint.
var ErrNotCheckpoint = errors.New("not a llama2.c checkpoint")

// ErrTooLarge is wrapped by the error for a well-formed checkpoint that
// exceeds MaxParams.
var ErrTooLarge = errors.New("model too large")

// Config is a llama2.c checkpoint header.
type Config struct {
	Dim       int // transformer width
	HiddenDim int // feed-forward width
	Layers    int
	Heads     int // query heads
	KVHeads   int // key/value heads; Heads is a multiple of it
	Vocab     int
	SeqLen    int // context length
	// SharedClassifier is true when the output classifier is the token
	// embedding (positive vocab_size in the header).
	SharedClassifier bool
}

// HeadSize is the dimension of one head, Dim / Heads.
func (c Config) HeadSize() int { return c.Dim / c.Heads }

// KVDim is the width of the keys and values of one layer, KVHeads*HeadSize.
func (c Config) KVDim() int { return c.KVHeads * c.HeadSize() }

// Params is the number of weights, RoPE tables excluded, classifier
// included when it is not shared. Call it on a validated Config.
func (c Config) Params() int64 {
	dim, hid, l := int64(c.Dim), int64(c.HiddenDim), int64(c.Layers)
	kv := int64(c.KVDim())
	n := int64(c.Vocab)*dim + // token embedding
		l*dim + // rms_att
		l*dim*dim + l*dim*kv + l*dim*kv + l*dim*dim + // wq wk wv wo
		l*dim + // rms_ffn
		3*l*hid*dim + // w1 w2 w3
		dim // rms_final
	if !c.SharedClassifier {
		n += int64(c.Vocab) * dim
	}
	return n
}

// ropeTables is the number of floats of the freq_cis_real and
// freq_cis_imag tables that legacy exports store after rms_final.
func (c Config) ropeTables() int64 { return int64(c.SeqLen) * int64(c.HeadSize()) }

// String gives the header as llama2.c prints it.
func (c Config) String() string {
	cls := "shared"
	if !c.SharedClassifier {
		cls = "unshared"
	}
	return fmt.Sprintf("dim=%d hidden_dim=%d n_layers=%d n_heads=%d n_kv_heads=%d vocab_size=%d seq_len=%d classifier=%s",
		c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen, cls)
}

// Validate checks that c describes a model this package can run and that
// is within MaxParams. Errors wrap ErrNotCheckpoint or ErrTooLarge.
func (c Config) Validate() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{
		{"dim", c.Dim, MaxDim},
		{"hidden_dim", c.HiddenDim, MaxDim},
		{"n_layers", c.Layers, MaxLayers},
		{"n_heads", c.Heads, MaxDim},
		{"n_kv_heads", c.KVHeads, MaxDim},
		{"vocab_size", c.Vocab, MaxVocab},
		{"seq_len", c.SeqLen, MaxSeqLen},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%w: %s = %d, want > 0", ErrNotCheckpoint, f.name, f.v)
		}
		if f.v > f.max {
			return fmt.Errorf("%w: %s = %d, more than the %d this reader accepts", ErrNotCheckpoint, f.name, f.v, f.max)
		}
	}
	switch {
	case c.Dim%c.Heads != 0:
		return fmt.Errorf("%w: n_heads %d does not divide dim %d", ErrNotCheckpoint, c.Heads, c.Dim)
	case c.HeadSize()%2 != 0:
		return fmt.Errorf("%w: head size %d (dim %d / n_heads %d) is odd; RoPE rotates pairs", ErrNotCheckpoint, c.HeadSize(), c.Dim, c.Heads)
	case c.KVHeads > c.Heads || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("%w: n_kv_heads %d does not divide n_heads %d", ErrNotCheckpoint, c.KVHeads, c.Heads)
	case c.Vocab <= BOS:
		return fmt.Errorf("%w: vocab_size %d has no BOS token (id %d)", ErrNotCheckpoint, c.Vocab, BOS)
	}
	if p := c.Params(); p > MaxParams {
		return fmt.Errorf("%w: %d parameters, more than MaxParams = %d that this reader accepts (a browser cannot hold it)", ErrTooLarge, p, MaxParams)
	}
	if kv := 2 * int64(c.Layers) * int64(c.SeqLen) * int64(c.KVDim()); kv > MaxParams {
		return fmt.Errorf("%w: the KV cache of the full context holds %d floats, more than MaxParams = %d", ErrTooLarge, kv, MaxParams)
	}
	return nil
}

// magicV1 is the first word of llama2.c's newer export formats ("ak42").
const magicV1 = 0x616b3432

// parseHeader reads and validates the header of a checkpoint of size bytes
// and says whether the file holds the RoPE tables. Nothing is allocated.
func parseHeader(hdr []byte, size int64) (Config, bool, error) {
	if len(hdr) >= 8 && binary.LittleEndian.Uint32(hdr) == magicV1 {
		return Config{}, false, fmt.Errorf("%w: starts with the magic \"ak42\" of llama2.c export version %d; only the legacy format (export.py --version 0) is read",
			ErrNotCheckpoint, int32(binary.LittleEndian.Uint32(hdr[4:])))
	}
	if len(hdr) < HeaderSize || size < HeaderSize {
		return Config{}, false, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrNotCheckpoint, size, HeaderSize)
	}
	var h [7]int
	for i := range h {
		h[i] = int(int32(binary.LittleEndian.Uint32(hdr[4*i:])))
	}
	c := Config{Dim: h[0], HiddenDim: h[1], Layers: h[2], Heads: h[3], KVHeads: h[4], Vocab: h[5], SeqLen: h[6], SharedClassifier: true}
	if c.Vocab < 0 {
		c.Vocab, c.SharedClassifier = -c.Vocab, false
	}
	if err := c.Validate(); err != nil {
		return c, false, err
	}
	body := 4 * c.Params()
	tables := 4 * c.ropeTables()
	switch size - HeaderSize {
	case body:
		return c, false, nil
	case body + tables:
		return c, true, nil
	}
	return c, false, fmt.Errorf("%w: file is %d bytes but the header (%v) implies %d bytes, or %d with the RoPE tables",
		ErrNotCheckpoint, size, c, HeaderSize+body, HeaderSize+body+tables)
}

// Model is a llama2.c transformer held in float32.
type Model struct {
	// Name is the checkpoint's file base name; it goes into captures.
	Name string
	cfg  Config

	emb      []float32 // [vocab, dim]
	rmsAtt   []float32 // [L, dim]
	wq       []float32 // [L, dim, dim]
	wk       []float32 // [L, kv_dim, dim]
	wv       []float32 // [L, kv_dim, dim]
	wo       []float32 // [L, dim, dim]
	rmsFFN   []float32 // [L, dim]
	w1       []float32 // [L, hidden, dim]
	w2       []float32 // [L, dim, hidden]
	w3       []float32 // [L, hidden, dim]
	rmsFinal []float32 // [dim]
	wcls     []float32 // [vocab, dim], emb when shared
	freq     []float32 // [head_size/2] RoPE frequencies
}

// Config returns the model's header.
func (m *Model) Config() Config { return m.cfg }

type tensor struct {
	name string
	p    *[]float32
	n    int64
}

// tensors lists the weights in file order (the RoPE tables and the
// unshared classifier excepted).
func (m *Model) tensors() []tensor {
	c := m.cfg
	dim, hid, l, kv := int64(c.Dim), int64(c.HiddenDim), int64(c.Layers), int64(c.KVDim())
	return []tensor{
		{"token_embedding_table", &m.emb, int64(c.Vocab) * dim},
		{"rms_att_weight", &m.rmsAtt, l * dim},
		{"wq", &m.wq, l * dim * dim},
		{"wk", &m.wk, l * kv * dim},
		{"wv", &m.wv, l * kv * dim},
		{"wo", &m.wo, l * dim * dim},
		{"rms_ffn_weight", &m.rmsFFN, l * dim},
		{"w1", &m.w1, l * hid * dim},
		{"w2", &m.w2, l * dim * hid},
		{"w3", &m.w3, l * hid * dim},
		{"rms_final_weight", &m.rmsFinal, dim},
	}
}

// newModel allocates the weights of a validated config in one block.
func newModel(name string, c Config) *Model {
	m := &Model{Name: baseName(name), cfg: c}
	all := make([]float32, c.Params())
	for _, t := range m.tensors() {
		*t.p, all = all[:t.n:t.n], all[t.n:]
	}
	if c.SharedClassifier {
		m.wcls = m.emb
	} else {
		m.wcls = all
	}
	m.initFreq()
	return m
}

// initFreq computes the RoPE frequencies 1/10000^(2j/head_size) in float32,
// as run.c does.
func (m *Model) initFreq() {
	hs := m.cfg.HeadSize()
	m.freq = make([]float32, hs/2)
	const ln10000 = 9.210340371976184 // math.Log(10000)
	for j := range m.freq {
		m.freq[j] = float32(1 / xmath.Exp(float64(ln10000*float64(2*j))/float64(hs)))
	}
}

// Decode parses a legacy llama2.c checkpoint held in data. name (a file name)
// labels errors and becomes Model.Name (its base name). The header is
// validated (sane dimensions, heads, MaxParams, exact file size with or
// without the RoPE tables) before the weights are allocated, and every
// weight must be finite.
func Decode(name string, data []byte) (*Model, error) {
	return decodeAt(name, bytes.NewReader(data), int64(len(data)))
}

// Load reads a legacy llama2.c checkpoint file. It refuses anything but a
// regular file (a named pipe, a device, a directory) before opening it,
// checks the header against the file's size and the limits before
// allocating, then reads the weights in chunks straight into the model, so
// that memory stays at the model's size; see Decode.
func Load(path string) (*Model, error) {
	f, size, err := inputs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("llama: %s: %w", path, err)
	}
	defer f.Close()
	return decodeAt(path, f, size)
}

// decodeAt is Decode and Load: the checkpoint is the size bytes of r.
func decodeAt(name string, r io.ReaderAt, size int64) (*Model, error) {
	hdr := make([]byte, HeaderSize)
	n, err := r.ReadAt(hdr, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("llama: %s: reading the header: %w", name, err)
	}
	c, tables, err := parseHeader(hdr[:n], size)
	if err != nil {
		return nil, fmt.Errorf("llama: %s: %w", name, err)
	}
	m := newModel(name, c)
	off := int64(HeaderSize)
	buf := make([]byte, 64<<10)
	read := func(t tensor) error {
		dst := *t.p
		for i0 := 0; i0 < len(dst); {
			k := min(len(dst)-i0, len(buf)/4)
			src := buf[:4*k]
			if _, err := r.ReadAt(src, off); err != nil && !(err == io.EOF && off+int64(len(src)) == size) {
				return fmt.Errorf("llama: %s: reading tensor %s at byte %d: %w", name, t.name, off, err)
			}
			for i := range k {
				v := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
				if v != v || math.IsInf(float64(v), 0) {
					return fmt.Errorf("llama: %s: %w: tensor %s: non-finite weight %v at index %d", name, ErrNotCheckpoint, t.name, v, i0+i)
				}
				dst[i0+i] = v
			}
			i0 += k
			off += int64(4 * k)
		}
		return nil
	}
	for _, t := range m.tensors() {
		if err := read(t); err != nil {
			return nil, err
		}
	}
	if tables {
		off += 4 * c.ropeTables()
	}
	if !c.SharedClassifier {
		if err := read(tensor{"wcls", &m.wcls, int64(c.Vocab) * int64(c.Dim)}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// MarshalBinary encodes m as a legacy llama2.c checkpoint (export version
// 0, RoPE tables included), the format Decode reads.
func (m *Model) MarshalBinary() ([]byte, error) {
	c := m.cfg
	size := HeaderSize + 4*(c.Params()+c.ropeTables())
	out := make([]byte, 0, size)
	vocab := c.Vocab
	if !c.SharedClassifier {
		vocab = -vocab
	}
	for _, v := range []int{c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, vocab, c.SeqLen} {
		out = binary.LittleEndian.AppendUint32(out, uint32(int32(v)))
	}
	put := func(x []float32) {
		for _, v := range x {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
	}
	for _, t := range m.tensors() {
		put(*t.p)
	}
	// freq_cis_real then freq_cis_imag, [seq_len, head_size/2] each.
	re := make([]float32, 0, c.ropeTables()/2)
	im := make([]float32, 0, c.ropeTables()/2)
	for pos := 0; pos < c.SeqLen; pos++ {
		for _, f := range m.freq {
			s, co := xmath.Sincos(float64(float32(pos) * f))
			re, im = append(re, float32(co)), append(im, float32(s))
		}
	}
	put(re)
	put(im)
	if !c.SharedClassifier {
		put(m.wcls)
	}
	return out, nil
}

// Random returns a model of configuration c with deterministic
// pseudo-random weights (uniform in ±1/sqrt(fan-in), norms 1), for tests,
// examples and benchmarks. It is named "random-<seed>".
func Random(c Config, seed uint64) (*Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("llama: random model: %w", err)
	}
	m := newModel(fmt.Sprintf("random-%d", seed), c)
	r := newRNG(seed)
	fill := func(x []float32, fanIn int) {
		a := 1 / float32(math.Sqrt(float64(fanIn)))
		for i := range x {
			// 2*u - 1 for u = k/2^24 in [0, 1), computed exactly in integers
			// so that no multiply-add is left for the compiler to fuse.
			k := int32(r.u32() >> 8)
			x[i] = a * (float32(2*k-1<<24) / (1 << 24))
		}
	}
	fill(m.emb, 1)
	for _, x := range [][]float32{m.rmsAtt, m.rmsFFN, m.rmsFinal} {
		for i := range x {
			x[i] = 1
		}
	}
	fill(m.wq, c.Dim)
	fill(m.wk, c.Dim)
	fill(m.wv, c.Dim)
	fill(m.wo, c.Dim)
	fill(m.w1, c.Dim)
	fill(m.w2, c.HiddenDim)
	fill(m.w3, c.Dim)
	if !c.SharedClassifier {
		fill(m.wcls, c.Dim)
	}
	return m, nil
}

// baseName is the last element of a slash- or backslash-separated name.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		return "model"
	}
	return name
}
