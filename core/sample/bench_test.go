package sample_test

import (
	"bytes"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/sample"
)

var big4kFile = flag.String("big4k", "", "`file` holding the big4k sample for BenchmarkLoadBig4K (haeols gen -preset default -layers 4 -heads 8 -kv-heads 2 -tokens 4096 -dim 128), instead of making it")

// big4k is the 4,096-token sample of docs/PERFORMANCE.md ("Opening a
// sample"): the default preset with 4 layers of 8 query heads on 2 KV
// heads, d = 128, written as F16 safetensors (50 MB); made once, or read
// from the -big4k file.
var big4k = sync.OnceValues(func() ([]byte, error) {
	if *big4kFile != "" {
		return os.ReadFile(*big4kFile)
	}
	c, err := gen.DefaultConfig("default")
	if err != nil {
		return nil, err
	}
	c.Layers, c.Heads, c.KVHeads, c.Tokens, c.Dim = 4, 8, 2, 4096, 128
	s, err := gen.Generate(c)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := sample.WriteSafetensors(&buf, s, sample.F16); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// load decodes a fetched sample file whole and makes its model:
// sample.Decode, then core.NewModel (the worker decodes lazily instead:
// LazyNewModel below).
func load(data []byte) error {
	s, err := sample.Decode("big4k.safetensors", data)
	if err != nil {
		return err
	}
	_, err = core.NewModel(s, core.Options{})
	return err
}

// loadLazy is the worker's load of a fetched sample file: DecodeLazy,
// NewModel, then the widening of the first KV head, all that its first
// head waits for.
func loadLazy(data []byte) error {
	s, err := sample.DecodeLazy("big4k.safetensors", data)
	if err != nil {
		return err
	}
	if _, err := core.NewModel(s, core.Options{}); err != nil {
		return err
	}
	s.KHead(0, 0)
	return nil
}

// BenchmarkLoadBig4K times the load of the 50 MB F16 big4k sample:
// Decode then NewModel, and each alone; LazyNewModel is the worker's
// (DecodeLazy, NewModel and the first KV head widened). They run warm: ten untimed
// loads first (the heap grown, and the code optimised: V8 takes several
// loads to optimise all of it). First is the load before those, the
// process's first: the browser's one load of a sample, with the code not
// yet optimised (WebAssembly) and the heap's memory new from the system,
// when run alone and once on the -big4k file (-test.bench
// 'LoadBig4K/First$' -test.benchtime 1x -big4k FILE; making the sample
// would warm both). NewMemory, run the same way, is what First cannot go
// below: clearing a new []float32 as large as the sample's, the first
// writes to memory new from the system.
func BenchmarkLoadBig4K(b *testing.B) {
	data, err := big4k()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("First", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LazyFirst", func(b *testing.B) {
		// The worker's load (LazyNewModel below) as a process's first.
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := loadLazy(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NewMemory", func(b *testing.B) {
		for b.Loop() {
			clear(make([]float32, len(data)/2))
		}
	})
	warm := sync.OnceValue(func() error {
		for range 10 {
			if err := load(data); err != nil {
				return err
			}
		}
		return nil
	})
	b.Run("DecodeNewModel", func(b *testing.B) {
		if err := warm(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LazyNewModel", func(b *testing.B) {
		// What the worker does since it widens lazily: DecodeLazy,
		// NewModel, then the widening of the first KV head, all that
		// its first head waits for.
		if err := warm(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := loadLazy(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		if err := warm(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := sample.Decode("big4k.safetensors", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NewModel", func(b *testing.B) {
		if err := warm(); err != nil {
			b.Fatal(err)
		}
		s, err := sample.Decode("big4k.safetensors", data)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := core.NewModel(s, core.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
