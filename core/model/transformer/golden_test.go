package transformer

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/model"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// TestGolden pins the bits of the logits of every variant (llama, qwen2,
// qwen3, biases with Llama 3.1 factors, Q8_0) over 8 positions: the same
// natively and under wasm.
func TestGolden(t *testing.T) {
	base, err := model.FromLlama2C(randomLlama(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	vs := variants(t, base)
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out strings.Builder
	for _, name := range names {
		m, err := New(vs[name])
		if err != nil {
			t.Fatal(err)
		}
		st := m.NewState(newDense(vs[name].Config))
		h := fnv.New64a()
		for pos, tok := range []int{1, 7, 3, 3, 39, 0, 12, 5} {
			for _, v := range m.Forward(tok, pos, st) {
				b := math.Float32bits(v)
				h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)})
			}
		}
		fmt.Fprintf(&out, "%s %016x\n", name, h.Sum64())
	}
	const path = "testdata/golden.txt"
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("golden logits changed (run with -update if intended):\ngot\n%swant\n%s", out.String(), want)
	}
}
