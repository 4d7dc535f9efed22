package sample_test

import (
	"bytes"
	"fmt"

	"github.com/haeols/haeols/core/sample"
)

// A sample with one layer, two query heads sharing one KV head, four
// positions and head dimension 2.
func tinySample() *sample.Sample {
	return &sample.Sample{
		L: 1, H: 2, HKV: 1, N: 4, D: 2,
		Q:    []float32{1, 0, 0, 1, 1, 1, 0.1, 0.2, -1, 0, 0, -1, 0.5, 0.5, 3, 4},
		K:    []float32{1, 0, 0, 1, 1, 1, 2, 2},
		V:    []float32{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4},
		Meta: sample.Meta{Model: "tiny", Prefix: 3, Tokens: []string{"a", "b", "c", "?"}},
	}
}

func ExampleWriteSafetensors() {
	var buf bytes.Buffer
	if err := sample.WriteSafetensors(&buf, tinySample(), sample.F16); err != nil {
		fmt.Println(err)
		return
	}
	s, err := sample.Decode("tiny.safetensors", buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.L, s.H, s.HKV, s.N, s.D, s.SourceDType, s.Meta.Model, s.Prefix())
	fmt.Println(s.Q[6:8]) // 0.1 and 0.2 rounded to float16
	// Output:
	// 1 2 1 4 2 F16 tiny 3
	// [0.099975586 0.19995117]
}

func ExampleDecode() {
	// A safetensors file whose k tensor is shorter than its shape says.
	header := `{"k":{"dtype":"F16","shape":[1,2,3,4],"data_offsets":[0,8]}}`
	data := append([]byte{byte(len(header)), 0, 0, 0, 0, 0, 0, 0}, header...)
	data = append(data, make([]byte, 8)...)
	_, err := sample.Decode("broken.safetensors", data)
	fmt.Println(err)
	// Output:
	// sample: broken.safetensors: tensor "k": data_offsets [0, 8] hold 8 bytes, shape [1 2 3 4] dtype F16 needs 48
}

func ExampleSummary() {
	fmt.Print(sample.Summary(tinySample()))
	// Output:
	// model        tiny
	// shape        L=1 layers, H=2 query heads, Hkv=1 KV heads (group 2), N=4 positions, d=2
	// tensors      q [1 2 4 2], k [1 1 4 2], v [1 1 4 2]
	// prefix       n=3 cached positions + 1 probe queries (from metadata)
	// scale        0.707107 (default 1/sqrt(d))
	// tokens       4: "a" "b" "c" "?"
}
