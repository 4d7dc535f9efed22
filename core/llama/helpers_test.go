package llama

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// stories260K is the configuration of the llama2.c model stories260K.bin.
var stories260K = Config{Dim: 64, HiddenDim: 172, Layers: 5, Heads: 8, KVHeads: 4, Vocab: 512, SeqLen: 512, SharedClassifier: true}

// tiny is a small configuration with grouped KV heads and an unshared
// classifier, for tests that need no real model.
var tiny = Config{Dim: 16, HiddenDim: 24, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 32, SeqLen: 24, SharedClassifier: false}

// modelPath returns the path of stories260K.bin ($HAEOLS_MODELS, else
// ../../../shared/models relative to this package) or skips the test.
func modelPath(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "models")
	}
	p := filepath.Join(dir, "stories260K.bin")
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("skipped: the real model %s is absent (set HAEOLS_MODELS to the folder holding stories260K.bin): %v", p, err)
	}
	return p
}

var (
	realOnce  sync.Once
	realModel *Model
	realErr   error
)

// loadReal loads stories260K.bin once per test binary, or skips.
func loadReal(tb testing.TB) *Model {
	tb.Helper()
	p := modelPath(tb)
	realOnce.Do(func() { realModel, realErr = Load(p) })
	if realErr != nil {
		tb.Fatalf("Load(%s): %v", p, realErr)
	}
	return realModel
}

// header returns the 28-byte legacy header of the seven values.
func header(v ...int) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
	}
	return b
}

// checkpoint returns a header for c followed by nFloats float32 values
// (all 0.01) and extra raw bytes.
func checkpoint(c Config, nFloats int64, extra int) []byte {
	vocab := c.Vocab
	if !c.SharedClassifier {
		vocab = -vocab
	}
	b := header(c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, vocab, c.SeqLen)
	for i := int64(0); i < nFloats; i++ {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(0.01))
	}
	return append(b, make([]byte, extra)...)
}

// hashFloats is an FNV-1a hash of the bits of the given tensors.
func hashFloats(ts ...[]float32) uint64 {
	h := fnv.New64a()
	var buf [4]byte
	for _, t := range ts {
		for _, v := range t {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			h.Write(buf[:])
		}
	}
	return h.Sum64()
}

// sameBits reports whether a and b hold the same float32 bits.
func sameBits(a, b []float32) bool {
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
