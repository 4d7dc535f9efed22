package eval

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/llama"
)

// TestSpec checks the sequences a Spec builds and that its refusals are
// FieldErrors naming the field.
func TestSpec(t *testing.T) {
	m, err := llama.Random(tinyCfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	lm := m.Decoder()
	b, err := Spec{IDs: []int{1, 5, 6}, Tokens: 40, Prefix: 30, Gen: 4}.Build(lm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tokens) != 40 || b.Prefix != 30 || b.Gen != 4 || b.Tokens[1] != 5 || !slices.Equal(b.Tokens, Continue(lm, []int{1, 5, 6}, 40)) {
		t.Errorf("prompt: %d tokens, prefix %d, gen %d", len(b.Tokens), b.Prefix, b.Gen)
	}
	long := make([]int, 50)
	if b, err := (Spec{IDs: long, Tokens: 40, Grow: true}).Build(lm, nil); err != nil || len(b.Tokens) != 50 {
		t.Errorf("Grow: %v", err)
	}
	for _, c := range []struct {
		s     Spec
		field string
		want  string
	}{
		{Spec{Tokens: 97}, "tokens", "tokens 97 outside [1, 96]"},
		{Spec{IDs: long, Tokens: 40}, "tokens", "tokens 40 is shorter than the prompt's 50 tokens"},
		{Spec{IDs: []int{1, 40}, Tokens: 10}, "prompt", "prompt: token 40 outside the vocabulary [0, 40)"},
		{Spec{Text: "hi", Tokens: 10}, "text", "text needs the model's tokenizer"},
		{Spec{Task: "copy", Text: "x", Tokens: 10}, "task", "task copy builds its own sequence"},
		{Spec{Task: "maze", Tokens: 10}, "task", `task "maze": want passkey, copy or none`},
		{Spec{Tokens: 20, Prefix: 20}, "prefix", "prefix 20: the sequence has 20 tokens"},
	} {
		_, err := c.s.Build(lm, nil)
		fe, ok := errors.AsType[*FieldError](err)
		if !ok || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a %s error %q", c.s, err, c.field, c.want)
		}
	}
}
