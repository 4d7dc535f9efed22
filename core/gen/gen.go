package gen

import (
	"fmt"
	"math"
	"strings"

	"github.com/haeols/haeols/core/sample"
)

// Model is the Meta.Model of every generated sample.
const Model = "haeols-synthetic"

// Version is the generator version, recorded in Meta.Source. It changes
// whenever the same Config would give different bits.
const Version = 1

// Config says what to generate. Start from DefaultConfig and change fields;
// Generate checks every field and names the one that is out of range.
type Config struct {
	// Preset is one of the names returned by Presets. It picks the text
	// (needles, repeated passages, question) and which head kinds appear in
	// which layer.
	Preset string
	// Seed makes the sample: the same Config gives the same bits on every
	// platform, a different Seed a different sample.
	Seed uint64
	// Layers, Heads (query heads) and KVHeads (key/value heads) are the
	// model shape. Heads must be a multiple of KVHeads; query head h uses
	// KV head h / (Heads/KVHeads) (grouped-query attention).
	Layers, Heads, KVHeads int
	// Tokens is N, the number of positions: the prefix (the cache to
	// compress) followed by Probes held-out probe queries.
	Tokens int
	// Probes is the number of probe queries at the end (the suffix).
	Probes int
	// Dim is the head dimension d. It must be even (RoPE rotates pairs).
	Dim int
	// Needles is the number of passkey sentences hidden in the prefix.
	// When it is positive the probes end with a question about the passkey.
	Needles int
	// RopeBase is the RoPE base (10000 in Llama 2).
	RopeBase float64
}

// Preset names a configuration and says what it models.
type Preset struct {
	// Name is the value of Config.Preset.
	Name string
	// Description is one paragraph on what the preset models and what a
	// compression method should find hard about it.
	Description string
}

// Limits on Config, checked by Validate and Generate.
const (
	// MaxLayers is the largest Layers.
	MaxLayers = 64
	// MaxHeads is the largest Heads.
	MaxHeads = 128
	// MinTokens is the smallest Tokens.
	MinTokens = 16
	// MaxTokens is the largest Tokens.
	MaxTokens = 1 << 16
	// MinDim is the smallest Dim.
	MinDim = 8
	// MaxDim is the largest Dim.
	MaxDim = 256
	// MaxNeedles is the largest Needles.
	MaxNeedles = 16
	// MaxElements bounds Layers*Heads*Tokens*Dim, the number of query
	// numbers, so that a sample stays under 256 MiB of float32 queries.
	MaxElements = 1 << 26
)

type presetDef struct {
	Preset
	cfg     Config
	layout  [][8]kind // head kinds per layer row (see kindOf)
	hint    float64   // ask strength of the passkey reminder in the calibration window
	depths  []float64 // needle depths, fractions of the prefix
	repeats []repeat
}

// Sizes: a sample is stored as q [L,H,N,d] plus k and v [L,Hkv,N,d]; in F16
// that is 2*(L*H*N*d + 2*L*Hkv*N*d) bytes (plus a few KiB of metadata).
//
// Layout rows have 8 entries: with 4 heads a layer takes entries 0, 2, 4, 6,
// with 8 heads all of them (see kindOf).
var presetDefs = []presetDef{
	{
		Preset: Preset{Name: "default", Description: "A small teaching model: 4 layers of 4 query heads sharing one KV head " +
			"(grouped-query attention, 4 query heads per KV head), 960 cached tokens of topical text plus 64 probe queries, " +
			"head dim 64, RoPE base 10000. Early layers are mostly local (recent-token) and sink heads, middle layers hold " +
			"retrieval and induction heads, late layers are mostly diffuse. One passkey (five digit tokens) sits near the " +
			"middle of the prefix; a passage is repeated later in the text; one reminder (\"keep the passkey in mind\") in " +
			"the calibration window looks weakly at the passkey, and the last probes ask for it. Hard part: the passkey " +
			"carries little attention mass from the calibration queries, so mass-based Top-K may evict it, while the few " +
			"queries that do look at it give its key a lower entropy; and each KV head must serve four query heads " +
			"with different patterns at once."},
		// 2*(4*4*1024*64 + 2*4*1*1024*64) = 3,145,728 bytes (3.0 MiB) in F16.
		cfg: Config{Layers: 4, Heads: 4, KVHeads: 1, Tokens: 1024, Probes: 64, Dim: 64, Needles: 1, RopeBase: 10000},
		layout: [][8]kind{
			{kLocal, kLocal, kSink, kLocal, kLocal, kSink, kDiffuse, kDiffuse},
			{kInduction, kSink, kRetrieval, kInduction, kSink, kDiffuse, kLocal, kLocal},
			{kRetrieval, kInduction, kInduction, kSink, kDiffuse, kRetrieval, kSink, kDiffuse},
			{kDiffuse, kDiffuse, kSink, kSink, kDiffuse, kRetrieval, kRetrieval, kLocal},
		},
		hint:    0.45,
		depths:  []float64{0.45},
		repeats: []repeat{{from: 0.15, length: 0.06, to: 0.62}},
	},
	{
		Preset: Preset{Name: "needle", Description: "Long-context retrieval: 2 layers of 4 query heads on one KV head, 1984 " +
			"cached tokens plus 64 probes, head dim 64. Three passkeys are hidden deep in the prefix (at 20%, 50% and 75% " +
			"of it); the probes end with \"what is the passkey ? the passkey is\", and those question tokens attend sharply " +
			"to every passkey digit through the retrieval heads (three of the eight heads). Nothing in the calibration " +
			"window mentions the passkey. Hard part: no calibration query looks at the needles, so every selection rule " +
			"that reads calibration attention (mass or entropy) is blind to them; only methods that keep every token " +
			"approximately (quantization, low rank), or summaries that happen to keep the needle's key direction, can " +
			"answer."},
		// 2*(2*4*2048*64 + 2*2*1*2048*64) = 3,145,728 bytes (3.0 MiB) in F16.
		cfg: Config{Layers: 2, Heads: 4, KVHeads: 1, Tokens: 2048, Probes: 64, Dim: 64, Needles: 3, RopeBase: 10000},
		layout: [][8]kind{
			{kLocal, kLocal, kSink, kSink, kRetrieval, kRetrieval, kDiffuse, kDiffuse},
			{kRetrieval, kRetrieval, kSink, kRetrieval, kRetrieval, kDiffuse, kDiffuse, kRetrieval},
		},
		depths: []float64{0.2, 0.5, 0.75},
	},
	{
		Preset: Preset{Name: "induction", Description: "Repeated text and copy heads: 2 layers of 4 query heads on one KV head, " +
			"960 cached tokens plus 64 probes, head dim 64. A passage is repeated verbatim, the copy starting 403 tokens " +
			"after the original and running on through all the probes, so the induction heads of layer 1 (a query at token x attends to " +
			"the token after earlier occurrences of x, preferring the one whose previous token also matches) read the " +
			"first copy. Hard part: the probes need a block of the prefix far from the recent window, and which tokens " +
			"of it matter moves with every probe."},
		// 2*(2*4*1024*64 + 2*2*1*1024*64) = 1,572,864 bytes (1.5 MiB) in F16.
		cfg: Config{Layers: 2, Heads: 4, KVHeads: 1, Tokens: 1024, Probes: 64, Dim: 64, RopeBase: 10000},
		layout: [][8]kind{
			{kLocal, kLocal, kSink, kLocal, kLocal, kSink, kDiffuse, kLocal},
			{kInduction, kInduction, kInduction, kInduction, kSink, kDiffuse, kInduction, kLocal},
		},
		repeats: []repeat{{from: 0.2, length: 0.45, to: 0.62, tail: true}},
	},
	{
		Preset: Preset{Name: "diffuse", Description: "Background heads: 2 layers of 4 query heads on one KV head, 960 cached " +
			"tokens plus 64 probes, head dim 64, mostly diffuse heads whose small queries spread attention over hundreds of " +
			"tokens, leaning towards the current topic. No token matters much on its own, so eviction loses a little " +
			"everywhere, while a few summary tokens (or a low-rank cache) can stand in for the crowd: the case where " +
			"summarization should shine."},
		// 2*(2*4*1024*64 + 2*2*1*1024*64) = 1,572,864 bytes (1.5 MiB) in F16.
		cfg: Config{Layers: 2, Heads: 4, KVHeads: 1, Tokens: 1024, Probes: 64, Dim: 64, RopeBase: 10000},
		layout: [][8]kind{
			{kDiffuse, kDiffuse, kSink, kDiffuse, kDiffuse, kDiffuse, kLocal, kDiffuse},
			{kDiffuse, kDiffuse, kDiffuse, kSink, kDiffuse, kDiffuse, kSink, kDiffuse},
		},
	},
	{
		Preset: Preset{Name: "local", Description: "Strongly local attention: 2 layers of 4 query heads on one KV head, 960 " +
			"cached tokens plus 64 probes, head dim 64, mostly local heads (attention on the last few dozen tokens) plus " +
			"sink heads (on the first token). StreamingLLM (sinks plus a recent window) should suffice here; a method that " +
			"spends budget on the middle of the prefix wastes it."},
		// 2*(2*4*1024*64 + 2*2*1*1024*64) = 1,572,864 bytes (1.5 MiB) in F16.
		cfg: Config{Layers: 2, Heads: 4, KVHeads: 1, Tokens: 1024, Probes: 64, Dim: 64, RopeBase: 10000},
		layout: [][8]kind{
			{kLocal, kLocal, kLocal, kSink, kSink, kLocal, kLocal, kLocal},
			{kLocal, kLocal, kSink, kLocal, kLocal, kLocal, kLocal, kSink},
		},
	},
	{
		Preset: Preset{Name: "tiny", Description: "For unit tests and quick demos: 1 layer, 2 query heads on one KV head (one " +
			"local, one retrieval), 56 cached tokens plus 8 probes, head dim 16, one two-digit passkey that the probes ask for."},
		// 2*(1*2*64*16 + 2*1*1*64*16) = 8,192 bytes in F16.
		cfg: Config{Layers: 1, Heads: 2, KVHeads: 1, Tokens: 64, Probes: 8, Dim: 16, Needles: 1, RopeBase: 10000},
		layout: [][8]kind{
			{kLocal, kSink, kLocal, kSink, kRetrieval, kDiffuse, kRetrieval, kDiffuse},
		},
		depths: []float64{0.3},
	},
}

// Presets returns the presets, "default" first.
func Presets() []Preset {
	out := make([]Preset, len(presetDefs))
	for i, p := range presetDefs {
		out[i] = p.Preset
	}
	return out
}

func findPreset(name string) (*presetDef, error) {
	for i := range presetDefs {
		if presetDefs[i].Name == name {
			return &presetDefs[i], nil
		}
	}
	names := make([]string, len(presetDefs))
	for i, p := range presetDefs {
		names[i] = p.Name
	}
	return nil, fmt.Errorf("gen: unknown preset %q (have %s)", name, strings.Join(names, ", "))
}

// DefaultConfig returns the configuration of a preset, with Seed 1.
func DefaultConfig(preset string) (Config, error) {
	p, err := findPreset(preset)
	if err != nil {
		return Config{}, err
	}
	c := p.cfg
	c.Preset = p.Name
	c.Seed = 1
	return c, nil
}

// Validate checks every field of c and returns an error naming the first
// field that is out of range.
func (c Config) Validate() error {
	if _, err := findPreset(c.Preset); err != nil {
		return err
	}
	switch {
	case c.Layers < 1 || c.Layers > MaxLayers:
		return fmt.Errorf("gen: Layers = %d, want 1..%d", c.Layers, MaxLayers)
	case c.Heads < 1 || c.Heads > MaxHeads:
		return fmt.Errorf("gen: Heads = %d, want 1..%d", c.Heads, MaxHeads)
	case c.KVHeads < 1 || c.KVHeads > c.Heads:
		return fmt.Errorf("gen: KVHeads = %d, want 1..Heads (%d)", c.KVHeads, c.Heads)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("gen: Heads = %d is not a multiple of KVHeads = %d", c.Heads, c.KVHeads)
	case c.Dim < MinDim || c.Dim > MaxDim:
		return fmt.Errorf("gen: Dim = %d, want %d..%d", c.Dim, MinDim, MaxDim)
	case c.Dim%2 != 0:
		return fmt.Errorf("gen: Dim = %d is odd; RoPE rotates pairs of channels, so it must be even", c.Dim)
	case c.Tokens < MinTokens || c.Tokens > MaxTokens:
		return fmt.Errorf("gen: Tokens = %d, want %d..%d", c.Tokens, MinTokens, MaxTokens)
	case c.Probes < 1 || c.Probes > c.Tokens/2:
		return fmt.Errorf("gen: Probes = %d, want 1..Tokens/2 (%d)", c.Probes, c.Tokens/2)
	case c.Needles < 0 || c.Needles > MaxNeedles:
		return fmt.Errorf("gen: Needles = %d, want 0..%d", c.Needles, MaxNeedles)
	case math.IsNaN(c.RopeBase) || c.RopeBase < 2 || c.RopeBase > 1e9:
		return fmt.Errorf("gen: RopeBase = %v, want 2..1e9", c.RopeBase)
	}
	if e := int64(c.Layers) * int64(c.Heads) * int64(c.Tokens) * int64(c.Dim); e > MaxElements {
		return fmt.Errorf("gen: Layers*Heads*Tokens*Dim = %d elements, more than %d", e, MaxElements)
	}
	n := c.Tokens - c.Probes
	if c.Needles > 0 {
		if c.Probes < questionLen {
			return fmt.Errorf("gen: Probes = %d is too few to hold the %d-token passkey question (Needles = %d)", c.Probes, questionLen, c.Needles)
		}
		if need := 4 * c.Needles * needleLen(n); need > n {
			return fmt.Errorf("gen: Needles = %d needs a prefix of at least %d tokens (Tokens - Probes = %d)", c.Needles, need, n)
		}
	}
	return nil
}

// Generate makes the sample described by c. It returns an error naming the
// offending field when c is out of range.
func Generate(c Config) (*sample.Sample, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p, _ := findPreset(c.Preset)
	s := generate(c, p)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("gen: internal error: generated sample is invalid: %v", err)
	}
	return s, nil
}

// source is the Meta.Source string: exactly how the sample was made.
func (c Config) source() string {
	return fmt.Sprintf("generator %s seed=%d L=%d H=%d Hkv=%d N=%d n=%d d=%d needles=%d rope_base=%g gen=v%d",
		c.Preset, c.Seed, c.Layers, c.Heads, c.KVHeads, c.Tokens, c.Tokens-c.Probes, c.Dim, c.Needles, c.RopeBase, Version)
}
