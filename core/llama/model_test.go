package llama

import (
	"encoding/binary"
	"errors"
	"github.com/haeols/haeols/core/xmath"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDecodeHeader(t *testing.T) {
	shared := stories260K
	unshared := tiny
	body := func(c Config) int64 { return c.Params() }
	tables := func(c Config) int64 { return c.ropeTables() }
	nan := checkpoint(tiny, body(tiny), 0)
	// First element of wq: after the embedding and rms_att.
	binary.LittleEndian.PutUint32(nan[HeaderSize+4*(tiny.Vocab*tiny.Dim+tiny.Layers*tiny.Dim):], math.Float32bits(float32(math.NaN())))
	inf := checkpoint(tiny, body(tiny), 0)
	binary.LittleEndian.PutUint32(inf[len(inf)-4:], math.Float32bits(float32(math.Inf(-1))))
	const ak42 = 0x616b3432
	for _, tc := range []struct {
		name string
		data []byte
		is   error  // nil: success
		want string // in the error
	}{
		{"stories260K shape with tables", checkpoint(shared, body(shared)+tables(shared), 0), nil, ""},
		{"stories260K shape without tables", checkpoint(shared, body(shared), 0), nil, ""},
		{"unshared with tables", checkpoint(unshared, body(unshared)+tables(unshared), 0), nil, ""},
		{"unshared without tables", checkpoint(unshared, body(unshared), 0), nil, ""},
		{"empty", nil, ErrNotCheckpoint, "0 bytes, shorter than the 28-byte header"},
		{"truncated header", header(64, 172, 5)[:10], ErrNotCheckpoint, "10 bytes, shorter"},
		{"truncated weights", checkpoint(shared, body(shared), 0)[:1000], ErrNotCheckpoint, "file is 1000 bytes but the header"},
		{"one float short", checkpoint(shared, body(shared)-1, 0), ErrNotCheckpoint, "implies 1040156 bytes, or 1056540 with the RoPE tables"},
		{"one byte extra", checkpoint(shared, body(shared)+tables(shared), 1), ErrNotCheckpoint, "file is 1056541 bytes"},
		{"shared sized as unshared", checkpoint(shared, body(shared)+int64(shared.Vocab*shared.Dim), 0), ErrNotCheckpoint, "classifier=shared"},
		{"negative dim", header(-64, 172, 5, 8, 4, 512, 512), ErrNotCheckpoint, "dim = -64, want > 0"},
		{"zero layers", header(64, 172, 0, 8, 4, 512, 512), ErrNotCheckpoint, "n_layers = 0"},
		{"zero kv heads", header(64, 172, 5, 8, 0, 512, 512), ErrNotCheckpoint, "n_kv_heads = 0"},
		{"zero vocab", header(64, 172, 5, 8, 4, 0, 512), ErrNotCheckpoint, "vocab_size = 0"},
		{"most negative vocab", header(64, 172, 5, 8, 4, math.MinInt32, 512), ErrNotCheckpoint, "vocab_size = 2147483648, more than"},
		{"negative seq_len", header(64, 172, 5, 8, 4, 512, -1), ErrNotCheckpoint, "seq_len = -1"},
		{"heads not dividing dim", header(64, 172, 5, 6, 3, 512, 512), ErrNotCheckpoint, "n_heads 6 does not divide dim 64"},
		{"kv heads not dividing heads", header(64, 172, 5, 8, 3, 512, 512), ErrNotCheckpoint, "n_kv_heads 3 does not divide n_heads 8"},
		{"more kv heads than heads", header(64, 172, 5, 8, 16, 512, 512), ErrNotCheckpoint, "n_kv_heads 16 does not divide n_heads 8"},
		{"odd head size", header(6, 8, 1, 2, 1, 10, 8), ErrNotCheckpoint, "head size 3"},
		{"no BOS", header(8, 8, 1, 2, 1, 1, 8), ErrNotCheckpoint, "vocab_size 1 has no BOS"},
		{"absurd dim", header(1<<20, 8, 1, 2, 1, 10, 8), ErrNotCheckpoint, "dim = 1048576, more than the 65536"},
		{"7B model", header(4096, 11008, 32, 32, 32, -32000, 2048), ErrTooLarge, "6738415616 parameters, more than MaxParams = 100000000"},
		{"huge context", header(64, 172, 5, 8, 8, 512, 1<<20), ErrTooLarge, "KV cache"},
		{"llama2.c version 1 file", binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, ak42), 1), ErrNotCheckpoint, `magic "ak42" of llama2.c export version 1`},
		{"NaN weight", nan, ErrNotCheckpoint, "tensor wq: non-finite weight NaN at index 0"},
		{"Inf in classifier", inf, ErrNotCheckpoint, "tensor wcls: non-finite weight -Inf at index 511"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode("dir/bad.bin", tc.data)
			if tc.is == nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if m.Name != "bad.bin" {
					t.Errorf("name %q, want bad.bin", m.Name)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode succeeded, want an error saying %q", tc.want)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dir/bad.bin") {
				t.Errorf("error %q, want one wrapping %q that names dir/bad.bin and says %q", err, tc.is, tc.want)
			}
		})
	}
}

func TestConfigParams(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want int64
	}{
		// 1056540 bytes = 28 + 4*(260032 + 512*8) for stories260K.bin.
		{"stories260K", stories260K, 260032},
		{"stories15M", Config{Dim: 288, HiddenDim: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, SeqLen: 256, SharedClassifier: true}, 15191712},
		{"tiny unshared", tiny, 32*16 + 2*16 + 2*16*16 + 2*2*16*8 + 2*16*16 + 2*16 + 3*2*24*16 + 16 + 32*16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := tc.c.Params(); got != tc.want {
				t.Errorf("Params() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, c := range []Config{tiny, stories260K} {
		t.Run(c.String(), func(t *testing.T) {
			m, err := Random(c, 9)
			if err != nil {
				t.Fatal(err)
			}
			data, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if want := HeaderSize + 4*(c.Params()+c.ropeTables()); int64(len(data)) != want {
				t.Errorf("%d bytes, want %d", len(data), want)
			}
			back, err := Decode("x.bin", data)
			if err != nil {
				t.Fatal(err)
			}
			if back.Config() != c {
				t.Errorf("config %v, want %v", back.Config(), c)
			}
			for i, tn := range m.tensors() {
				if !sameBits(*tn.p, *back.tensors()[i].p) {
					t.Errorf("tensor %s differs after the round trip", tn.name)
				}
			}
			if !sameBits(m.wcls, back.wcls) {
				t.Errorf("classifier differs after the round trip")
			}
		})
	}
}

// TestRoPETables checks the RoPE tables of the real checkpoint against the
// frequencies and angles the forward pass computes.
func TestRoPETables(t *testing.T) {
	p := modelPath(t)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(p, data)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config()
	off := HeaderSize + 4*int(c.Params())
	half := c.HeadSize() / 2
	var worst float64
	for pos := 0; pos < c.SeqLen; pos++ {
		for j := 0; j < half; j++ {
			re := math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*(pos*half+j):]))
			im := math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*(c.SeqLen*half+pos*half+j):]))
			s, co := xmath.Sincos(float64(float32(pos) * m.freq[j]))
			worst = max(worst, math.Abs(co-float64(re)), math.Abs(s-float64(im)))
		}
	}
	// float32 angles pos*freq carry up to 512 * 2^-24 of rounding.
	if worst > 1e-4 {
		t.Errorf("RoPE tables differ from the forward pass's angles by %.3g", worst)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	m, err := Random(tiny, 4)
	if err != nil {
		t.Fatal(err)
	}
	good, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		path string
		want string // "" for success
	}{
		{"good", write("good.bin", good), ""},
		{"missing", filepath.Join(dir, "missing.bin"), "no such file"},
		{"truncated", write("trunc.bin", good[:len(good)-3]), "not a llama2.c checkpoint: file is"},
		{"short header", write("short.bin", good[:5]), "5 bytes, shorter than the 28-byte header"},
		{"text file", write("notes.txt", []byte("this is not a model, it is a text file.\n")), "not a llama2.c checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load(tc.path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.Name != filepath.Base(tc.path) || got.Config() != tiny {
					t.Errorf("loaded %s %v", got.Name, got.Config())
				}
				return
			}
			// Case-insensitive: the OS words "no such file" differently under wasm.
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tc.want)) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %v, want one naming %s and saying %q", err, tc.path, tc.want)
			}
		})
	}
}

func TestRandomRejectsBadConfig(t *testing.T) {
	if _, err := Random(Config{Dim: 64, HiddenDim: 8, Layers: 1, Heads: 6, KVHeads: 1, Vocab: 8, SeqLen: 8}, 1); !errors.Is(err, ErrNotCheckpoint) {
		t.Errorf("error %v, want ErrNotCheckpoint", err)
	}
}

// TestForwardBlock checks that ForwardBlock gives Forward's bits, logits
// and observed q/k/v/out, whatever the split into blocks.
func TestForwardBlock(t *testing.T) {
	m, err := Random(tiny, 9)
	if err != nil {
		t.Fatal(err)
	}
	toks := make([]int, tiny.SeqLen)
	for i := range toks {
		toks[i] = (i*7 + 3) % tiny.Vocab
	}
	type obs struct{ q, k, v, out []float32 }
	record := func(st *State, seen map[[2]int]obs) {
		st.Observe = func(l, pos int, q, k, v, out []float32) {
			seen[[2]int{l, pos}] = obs{slices.Clone(q), slices.Clone(k), slices.Clone(v), slices.Clone(out)}
		}
	}
	ref := m.NewState()
	refSeen := map[[2]int]obs{}
	record(ref, refSeen)
	var want [][]float32
	for pos, tok := range toks {
		want = append(want, slices.Clone(m.Forward(tok, pos, ref)))
	}
	for _, split := range [][]int{{tiny.SeqLen}, {1, 5, 7, 11}, {3, 3, 3, 3, 3, 3, 3, 3}} {
		st := m.NewState()
		seen := map[[2]int]obs{}
		record(st, seen)
		pos := 0
		for _, n := range split {
			for r, lg := range m.ForwardBlock(toks[pos:pos+n], pos, st) {
				if !bitsEqual(lg, want[pos+r]) {
					t.Fatalf("split %v: logits at position %d differ from Forward's", split, pos+r)
				}
			}
			pos += n
		}
		for key, o := range refSeen {
			g := seen[key]
			if !bitsEqual(g.q, o.q) || !bitsEqual(g.k, o.k) || !bitsEqual(g.v, o.v) || !bitsEqual(g.out, o.out) {
				t.Fatalf("split %v: observed layer %d position %d differ", split, key[0], key[1])
			}
		}
	}
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
