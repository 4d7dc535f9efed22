package gguf

import (
	"bytes"
	"testing"
)

// FuzzDecode: no input panics or allocates beyond its size; whatever
// decodes writes back to a file that decodes to the same pairs and
// tensors.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, everyValue(), nil); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(tensorFile(0, []uint64{4}, 0, 16))
	f.Add(tensorFile(8, []uint64{32, 2}, 0, 68))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode("fuzz", data)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, g.KV, g.Tensors); err != nil {
			t.Fatalf("decoded file does not write back: %v", err)
		}
		h, err := Decode("again", out.Bytes())
		if err != nil {
			t.Fatalf("rewritten file does not decode: %v", err)
		}
		if len(h.KV) != len(g.KV) || len(h.Tensors) != len(g.Tensors) {
			t.Fatalf("rewrite changed the counts")
		}
		for i := range g.Tensors {
			if !bytes.Equal(g.Tensors[i].Data, h.Tensors[i].Data) {
				t.Fatalf("tensor %s changed", g.Tensors[i].Name)
			}
		}
	})
}
