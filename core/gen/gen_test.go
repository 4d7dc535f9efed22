package gen

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/sample"
)

// f16Bytes is the size of the sample's q, k and v stored in F16.
func f16Bytes(c Config) int {
	return 2 * (c.Layers*c.Heads*c.Tokens*c.Dim + 2*c.Layers*c.KVHeads*c.Tokens*c.Dim)
}

// qkvHash is the SHA-256 of the little-endian float32 bits of q, k and v.
func qkvHash(s *sample.Sample) string {
	h := sha256.New()
	var b [4]byte
	for _, t := range [][]float32{s.Q, s.K, s.V} {
		for _, x := range t {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func mustGenerate(t testing.TB, c Config) *sample.Sample {
	t.Helper()
	s, err := Generate(c)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", c, err)
	}
	return s
}

func mustDefault(t testing.TB, preset string) Config {
	t.Helper()
	c, err := DefaultConfig(preset)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPresets(t *testing.T) {
	ps := Presets()
	if len(ps) == 0 || ps[0].Name != "default" {
		t.Fatalf("Presets()[0] = %+v, want the default preset first", ps)
	}
	want := []string{"default", "needle", "induction", "diffuse", "local", "tiny"}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
		if len(p.Description) < 100 {
			t.Errorf("preset %q: description too short: %q", p.Name, p.Description)
		}
		c, err := DefaultConfig(p.Name)
		if err != nil {
			t.Errorf("DefaultConfig(%q): %v", p.Name, err)
			continue
		}
		if c.Preset != p.Name || c.Seed != 1 {
			t.Errorf("DefaultConfig(%q) = %+v, want Preset %q and Seed 1", p.Name, c, p.Name)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("DefaultConfig(%q).Validate(): %v", p.Name, err)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("preset names %v, want %v", names, want)
	}
	if _, err := DefaultConfig("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("DefaultConfig(nope) error = %v, want one naming the preset", err)
	}
}

// TestSizes pins the F16 sizes the docs quote: the default sample ships in
// the repository and must stay at 3 MiB or less.
func TestSizes(t *testing.T) {
	want := map[string]int{
		"default":   3 << 20,
		"needle":    3 << 20,
		"induction": 3 << 19,
		"diffuse":   3 << 19,
		"local":     3 << 19,
		"tiny":      8 << 10,
	}
	for _, p := range Presets() {
		c := mustDefault(t, p.Name)
		if got := f16Bytes(c); got != want[p.Name] {
			t.Errorf("preset %q: %d bytes in F16, want %d", p.Name, got, want[p.Name])
		}
	}
}

func TestGenerateShapesAndMeta(t *testing.T) {
	for _, p := range Presets() {
		t.Run(p.Name, func(t *testing.T) {
			c := mustDefault(t, p.Name)
			s := mustGenerate(t, c)
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.L != c.Layers || s.H != c.Heads || s.HKV != c.KVHeads || s.N != c.Tokens || s.D != c.Dim {
				t.Errorf("shape L=%d H=%d HKV=%d N=%d D=%d, want %+v", s.L, s.H, s.HKV, s.N, s.D, c)
			}
			m := s.Meta
			if m.Model != Model {
				t.Errorf("Model = %q, want %q", m.Model, Model)
			}
			if !strings.HasPrefix(m.Source, "generator "+p.Name+" seed=1 ") {
				t.Errorf("Source = %q", m.Source)
			}
			if m.Description != p.Description {
				t.Errorf("Description differs from the preset's")
			}
			if m.Prefix != c.Tokens-c.Probes {
				t.Errorf("Prefix = %d, want %d", m.Prefix, c.Tokens-c.Probes)
			}
			if len(m.Tokens) != s.N || m.Tokens[0] != wBOS {
				t.Errorf("%d tokens starting %q, want %d starting %q", len(m.Tokens), m.Tokens[0], s.N, wBOS)
			}
			if c.Needles > 0 {
				if got, want := len(m.Needles), c.Needles*digitsFor(m.Prefix); got != want {
					t.Errorf("%d needle positions, want %d", got, want)
				}
				for _, j := range m.Needles {
					if tok := m.Tokens[j]; len(tok) != 1 || tok[0] < '0' || tok[0] > '9' {
						t.Errorf("needle position %d holds %q, want a digit", j, tok)
					}
				}
				if len(m.NeedleProbes) == 0 {
					t.Errorf("no needle probes")
				}
				for _, i := range m.NeedleProbes {
					if tok := m.Tokens[m.Prefix+i]; tok != wPasskey && tok != "is" {
						t.Errorf("needle probe %d is %q", i, tok)
					}
				}
				if q := strings.Join(m.Tokens[s.N-questionLen:], " "); q != "what is the passkey ? the passkey is" {
					t.Errorf("the probes end %q", q)
				}
			} else if len(m.Needles) != 0 || len(m.NeedleProbes) != 0 {
				t.Errorf("needles %v, probes %v without Needles", m.Needles, m.NeedleProbes)
			}
			var kinds [][]string
			if err := json.Unmarshal([]byte(m.Extra["head_kinds"]), &kinds); err != nil {
				t.Fatalf("head_kinds: %v", err)
			}
			if len(kinds) != s.L {
				t.Fatalf("head_kinds has %d layers, want %d", len(kinds), s.L)
			}
			for l, row := range kinds {
				if len(row) != s.H {
					t.Errorf("head_kinds layer %d has %d heads, want %d", l, len(row), s.H)
				}
				for _, k := range row {
					if !slices.Contains(kindNames[:], k) {
						t.Errorf("unknown head kind %q", k)
					}
				}
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	for _, name := range []string{"default", "tiny"} {
		c := mustDefault(t, name)
		a, b := mustGenerate(t, c), mustGenerate(t, c)
		if qkvHash(a) != qkvHash(b) || !slices.Equal(a.Meta.Tokens, b.Meta.Tokens) || a.Meta.Source != b.Meta.Source {
			t.Errorf("%s: two runs of the same config differ", name)
		}
		c.Seed = 2
		d := mustGenerate(t, c)
		if qkvHash(a) == qkvHash(d) {
			t.Errorf("%s: seeds 1 and 2 give the same q/k/v", name)
		}
		if slices.Equal(a.Meta.Tokens, d.Meta.Tokens) {
			t.Errorf("%s: seeds 1 and 2 give the same text", name)
		}
		if !strings.Contains(d.Meta.Source, "seed=2") {
			t.Errorf("Source %q does not name seed 2", d.Meta.Source)
		}
	}
}

// TestTextIndependentOfShape: the token text depends on the seed, the
// preset and the sequence lengths only, so changing the model shape keeps
// it (useful when comparing shapes).
func TestTextIndependentOfShape(t *testing.T) {
	c := mustDefault(t, "default")
	a := mustGenerate(t, c)
	c.Layers, c.Heads, c.KVHeads, c.Dim = 1, 2, 2, 16
	b := mustGenerate(t, c)
	if !slices.Equal(a.Meta.Tokens, b.Meta.Tokens) {
		t.Error("changing the shape changed the text")
	}
}

// defaultHash is the SHA-256 of the default preset's q, k and v (float32,
// little-endian). The same test runs natively and under GOOS=js
// GOARCH=wasm: passing both proves the browser makes the same bits.
const defaultHash = "a1b5dece1830c71cfc35ea47312e7180d74259bf1743e5c06e5376cd06d5f290"

func TestDefaultHash(t *testing.T) {
	s := mustGenerate(t, mustDefault(t, "default"))
	if got := qkvHash(s); got != defaultHash {
		t.Errorf("default preset q/k/v hash = %s, want %s (the generator changed, or this platform computes different bits)", got, defaultHash)
	}
}

func TestValidate(t *testing.T) {
	base := mustDefault(t, "default")
	tests := []struct {
		name  string
		edit  func(c *Config)
		field string // the error must contain this
	}{
		{"unknown preset", func(c *Config) { c.Preset = "llama" }, `"llama"`},
		{"empty preset", func(c *Config) { c.Preset = "" }, "unknown preset"},
		{"no layers", func(c *Config) { c.Layers = 0 }, "Layers"},
		{"too many layers", func(c *Config) { c.Layers = MaxLayers + 1 }, "Layers"},
		{"no heads", func(c *Config) { c.Heads = 0 }, "Heads"},
		{"no KV heads", func(c *Config) { c.KVHeads = 0 }, "KVHeads"},
		{"more KV heads than heads", func(c *Config) { c.KVHeads = c.Heads + 1 }, "KVHeads"},
		{"heads not a multiple", func(c *Config) { c.Heads, c.KVHeads = 6, 4 }, "not a multiple of KVHeads"},
		{"odd dim", func(c *Config) { c.Dim = 33 }, "odd"},
		{"dim too small", func(c *Config) { c.Dim = 6 }, "Dim"},
		{"dim too large", func(c *Config) { c.Dim = MaxDim + 2 }, "Dim"},
		{"too few tokens", func(c *Config) { c.Tokens = MinTokens - 1 }, "Tokens"},
		{"too many tokens", func(c *Config) { c.Tokens = MaxTokens + 1 }, "Tokens"},
		{"no probes", func(c *Config) { c.Probes = 0 }, "Probes"},
		{"probes over half", func(c *Config) { c.Probes = c.Tokens/2 + 1 }, "Probes"},
		{"negative needles", func(c *Config) { c.Needles = -1 }, "Needles"},
		{"too many needles", func(c *Config) { c.Needles = MaxNeedles + 1 }, "Needles"},
		{"NaN base", func(c *Config) { c.RopeBase = math.NaN() }, "RopeBase"},
		{"base 1", func(c *Config) { c.RopeBase = 1 }, "RopeBase"},
		{"too large", func(c *Config) { c.Heads, c.Tokens, c.Dim = 128, 1<<16, 256 }, "elements"},
		{"question does not fit", func(c *Config) { c.Probes = questionLen - 1 }, "question"},
		{"needles do not fit", func(c *Config) { c.Tokens, c.Probes, c.Needles = 128, 16, 5 }, "Needles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.edit(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error about %s", c, tt.field)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not mention %q", err, tt.field)
			}
			if s, gerr := Generate(c); gerr == nil || s != nil {
				t.Errorf("Generate accepted an invalid config")
			}
		})
	}
}

// TestOtherShapes: configurations away from the presets still generate
// valid samples (odd head counts, tiny and large head dims, many needles).
func TestOtherShapes(t *testing.T) {
	tests := []struct {
		preset string
		edit   func(c *Config)
	}{
		{"default", func(c *Config) { c.Layers, c.Heads, c.KVHeads, c.Dim, c.Tokens = 2, 6, 3, 8, 200 }},
		{"default", func(c *Config) { c.Heads, c.KVHeads, c.Dim, c.Tokens, c.Probes = 12, 4, 128, 300, 40 }},
		{"needle", func(c *Config) { c.Tokens, c.Needles, c.Layers = 1200, 16, 1 }},
		{"needle", func(c *Config) { c.Tokens, c.Probes, c.Needles = 64, 8, 2 }},
		{"induction", func(c *Config) { c.Tokens, c.Probes, c.Layers = 100, 10, 3 }},
		{"tiny", func(c *Config) { c.Needles, c.RopeBase = 0, 500000 }},
		{"local", func(c *Config) { c.Tokens, c.Probes = MinTokens, 1 }},
	}
	for i, tt := range tests {
		c := mustDefault(t, tt.preset)
		tt.edit(&c)
		s, err := Generate(c)
		if err != nil {
			t.Errorf("case %d (%s): %v", i, c.source(), err)
			continue
		}
		if len(s.Meta.Needles) != c.Needles*digitsFor(c.Tokens-c.Probes) {
			t.Errorf("case %d: %d needle positions for %d needles", i, len(s.Meta.Needles), c.Needles)
		}
	}
}
