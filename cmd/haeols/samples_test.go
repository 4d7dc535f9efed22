package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/sample"
)

// TestShippedSamplesReproduce regenerates every shipped sample in memory and
// compares it byte for byte with samples/ (what `make samples` writes).
func TestShippedSamplesReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	check := func(t *testing.T, name string, s *sample.Sample) {
		t.Helper()
		var buf bytes.Buffer
		if err := sample.WriteSafetensors(&buf, s, sample.F16); err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "samples", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("samples/%s differs from what make samples generates (%d vs %d bytes): run make samples and explain the change", name, buf.Len(), len(want))
		}
	}
	for _, preset := range []string{"default", "needle"} {
		t.Run(preset, func(t *testing.T) {
			cfg, err := gen.DefaultConfig(preset)
			if err != nil {
				t.Fatal(err)
			}
			s, err := gen.Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			check(t, preset+".safetensors", s)
		})
	}
	t.Run("stories260K", func(t *testing.T) {
		dir := os.Getenv("HAEOLS_MODELS")
		if dir == "" {
			dir = filepath.Join("..", "..", "..", "shared", "models")
		}
		path := filepath.Join(dir, "stories260K.bin")
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s not found (set HAEOLS_MODELS): the real-model sample is not checked", path)
		}
		m, err := llama.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.Capture([]int{llama.BOS}, 511, llama.Greedy)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Sample(0, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "stories260K.safetensors", s)
	})
}
