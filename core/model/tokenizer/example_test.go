package tokenizer_test

import (
	"fmt"

	"github.com/haeols/haeols/core/model/tokenizer"
)

// A byte-level BPE tokenizer.json (Llama 3 style: the byte alphabet, two
// merges, ByteLevel pre-tokenization) encodes and decodes text exactly.
func ExampleFromHF() {
	vocab := `"Ġ": 0, "h": 1, "i": 2, "!": 3, "hi": 4, "Ġhi": 5`
	doc := `{"model": {"type": "BPE", "vocab": {` + vocab + `}, "merges": ["h i", "Ġ hi"]},
		"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}}`
	tk, err := tokenizer.FromHF([]byte(doc), nil)
	if err != nil {
		panic(err)
	}
	ids, err := tk.Encode("hi hi!")
	if err != nil {
		panic(err)
	}
	text, _ := tk.Decode(ids)
	fmt.Println(ids, tk.Pre(), fmt.Sprintf("%q", text))
	// Output: [4 5 3] gpt2 "hi hi!"
}
