package llama

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the fuzz seed corpora under testdata/fuzz")

// micro is the configuration of the synthetic seed checkpoints (a few
// hundred bytes; the real model never goes into testdata).
var micro = Config{Dim: 4, HiddenDim: 4, Layers: 1, Heads: 2, KVHeads: 1, Vocab: 3, SeqLen: 4, SharedClassifier: true}

// checkpointSeeds returns the named seed inputs of FuzzDecode.
func checkpointSeeds() (map[string][]byte, error) {
	seeds := map[string][]byte{}
	for _, v := range []struct {
		name   string
		shared bool
		tables bool
	}{{"shared-tables", true, true}, {"shared-notables", true, false}, {"unshared-tables", false, true}, {"unshared-notables", false, false}} {
		c := micro
		c.SharedClassifier = v.shared
		m, err := Random(c, 1)
		if err != nil {
			return nil, err
		}
		b, err := m.MarshalBinary()
		if err != nil {
			return nil, err
		}
		if !v.tables {
			at := HeaderSize + 4*(c.Params()-int64(c.Vocab*c.Dim))
			if v.shared {
				at = HeaderSize + 4*c.Params()
			}
			b = append(b[:at:at], b[at+4*c.ropeTables():]...)
		}
		seeds[v.name] = b
	}
	seeds["truncated"] = seeds["shared-tables"][:len(seeds["shared-tables"])-6]
	seeds["header-only"] = seeds["shared-tables"][:HeaderSize]
	seeds["odd-heads"] = header(6, 4, 1, 3, 1, 3, 4)
	seeds["ak42"] = header(0x616b3432, 1, 4, 4, 1, 2, 1, 3, 4)
	return seeds, nil
}

// tokenizerSeed is one seed input of FuzzDecodeTokenizer.
type tokenizerSeed struct {
	data  []byte
	vocab uint16
}

func tokenizerSeeds() map[string]tokenizerSeed {
	good := tokenizerBytes(8, []entry{{0, "<unk>"}, {0, "<s>"}, {0, "</s>"}, {-1, " "}, {-2, "a"}, {-3, " a"}, {-4, "\xc3\xa9"}})
	return map[string]tokenizerSeed{
		"good-inferred": {good, 0},
		"good-given":    {good, 7},
		"wrong-vocab":   {good, 5},
		"truncated":     {good[:len(good)-1], 0},
		"bad-maxlen":    {tokenizerBytes(-1, []entry{{0, "a"}}), 0},
	}
}

// TestFuzzCorpus checks that the seed corpora under testdata/fuzz are the
// ones the generators above produce; run with -update-corpus to rewrite them.
func TestFuzzCorpus(t *testing.T) {
	cps, err := checkpointSeeds()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, b := range cps {
		files[filepath.Join("testdata", "fuzz", "FuzzDecode", name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
	}
	for name, s := range tokenizerSeeds() {
		files[filepath.Join("testdata", "fuzz", "FuzzDecodeTokenizer", name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint16(%d)\n", s.data, s.vocab)
	}
	for path, want := range files {
		if *updateCorpus {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("seed corpus file missing (go test -run TestFuzzCorpus -update-corpus writes it): %v", err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s is stale (go test -run TestFuzzCorpus -update-corpus rewrites it)", path)
		}
	}
	// The valid seeds must decode, so the fuzzer starts from real models.
	for _, name := range []string{"shared-tables", "shared-notables", "unshared-tables", "unshared-notables"} {
		if _, err := Decode(name, cps[name]); err != nil {
			t.Errorf("seed %s does not decode: %v", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode("fuzz.bin", data)
		if err != nil {
			if !errors.Is(err, ErrNotCheckpoint) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v wraps neither ErrNotCheckpoint nor ErrTooLarge", err)
			}
			if !strings.Contains(err.Error(), "fuzz.bin") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		c := m.Config()
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded an invalid config: %v", err)
		}
		out, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode("again.bin", out)
		if err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		for i, tn := range m.tensors() {
			if !sameBits(*tn.p, *back.tensors()[i].p) {
				t.Fatalf("tensor %s changed in the round trip", tn.name)
			}
		}
		if c.Params()+2*int64(c.Layers*c.SeqLen*c.KVDim()) <= 1<<20 {
			st := m.NewState()
			for pos := 0; pos < min(c.SeqLen, 3); pos++ {
				m.Forward(pos%c.Vocab, pos, st)
			}
		}
	})
}

func FuzzDecodeTokenizer(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, vocab uint16) {
		tok, err := DecodeTokenizer("fuzz-tok.bin", data, int(vocab))
		if err != nil {
			if !errors.Is(err, ErrNotTokenizer) || !strings.Contains(err.Error(), "fuzz-tok.bin") {
				t.Fatalf("error %v does not wrap ErrNotTokenizer or name the file", err)
			}
			return
		}
		if tok.Vocab() == 0 || (vocab > 0 && tok.Vocab() != int(vocab)) {
			t.Fatalf("%d tokens decoded, asked for %d", tok.Vocab(), vocab)
		}
		for id := -1; id <= tok.Vocab(); id++ {
			if p := tok.Piece(id); len(p) > 3*tok.MaxTokenLength {
				t.Fatalf("piece %d of %d bytes, max_token_length %d", id, len(p), tok.MaxTokenLength)
			}
			tok.DecodeToken(BOS, id)
		}
		ids, err := tok.Encode("a é\n", true, true)
		if err == nil {
			for _, id := range ids {
				if id < 0 || id >= tok.Vocab() && id != 2 {
					t.Fatalf("Encode gave id %d outside the vocabulary of %d", id, tok.Vocab())
				}
			}
		}
	})
}
