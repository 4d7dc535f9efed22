package llama_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/haeols/haeols/core/llama"
)

// A capture of a (here random) model becomes a haeols sample: q, k, v of
// every layer and head, the first 12 positions the cache and the last 4 the
// probe queries.
func ExampleModel_Capture() {
	m, err := llama.Random(llama.Config{Dim: 16, HiddenDim: 32, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 32, SeqLen: 64, SharedClassifier: true}, 1)
	if err != nil {
		panic(err)
	}
	cp, err := m.Capture([]int{llama.BOS}, 15, llama.Greedy)
	if err != nil {
		panic(err)
	}
	s, err := cp.Sample(12, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("L H HKV N D:", s.L, s.H, s.HKV, s.N, s.D)
	fmt.Println("q, k elements:", len(s.Q), len(s.K))
	fmt.Printf("scale %.4f\n", s.Meta.Scale)
	fmt.Println(s.Meta.Source)
	// Output:
	// L H HKV N D: 2 4 2 16 4
	// q, k elements: 512 256
	// scale 0.5000
	// llama2.c capture random-1 prompt=BOS generate=15 greedy prefix=12
}

// Decode checks the header before it allocates anything.
func ExampleDecode() {
	_, err := llama.Decode("notes.txt", []byte("just some text"))
	fmt.Println(err)

	var hdr []byte // a LLaMA-7B header: dim 4096, hidden 11008, 32 layers ...
	for _, v := range []int32{4096, 11008, 32, 32, 32, -32000, 2048} {
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(v))
	}
	_, err = llama.Decode("llama2_7b.bin", hdr)
	fmt.Println(err)
	// Output:
	// llama: notes.txt: not a llama2.c checkpoint: 14 bytes, shorter than the 28-byte header
	// llama: llama2_7b.bin: model too large: 6738415616 parameters, more than MaxParams = 100000000 that this reader accepts (a browser cannot hold it)
}

func ExampleConfig_Params() {
	c := llama.Config{Dim: 64, HiddenDim: 172, Layers: 5, Heads: 8, KVHeads: 4, Vocab: 512, SeqLen: 512, SharedClassifier: true}
	fmt.Println(c.Params(), "parameters, head size", c.HeadSize(), "kv_dim", c.KVDim())
	// Output: 260032 parameters, head size 8 kv_dim 32
}

// Encode merges characters into the highest-scoring pieces, as llama2.c does.
func ExampleTokenizer_Encode() {
	var data []byte
	data = binary.LittleEndian.AppendUint32(data, 5) // max_token_length
	for _, e := range []struct {
		score float32
		piece string
	}{{0, "<unk>"}, {0, "<s>"}, {0, "</s>"}, {-1, " "}, {-2, "h"}, {-3, "i"}, {-4, "hi"}, {-5, " hi"}} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(e.score))
		data = binary.LittleEndian.AppendUint32(data, uint32(len(e.piece)))
		data = append(data, e.piece...)
	}
	tok, err := llama.DecodeTokenizer("tok.bin", data, 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := tok.Encode("hi", true, false)
	fmt.Println(ids, err, tok.DecodeToken(ids[0], ids[1]))
	// Output: [1 7] <nil> hi
}
