package eval

import (
	"errors"
	"fmt"
	"slices"
)

// Spec is how a person asks for one sequence: a prompt (token ids, then
// text through the model's tokenizer) continued greedily with the full
// cache, or a task. haeols eval and the browser build theirs with it, so the
// same request gives the same sequence in both.
type Spec struct {
	// Task is "" (the prompt), "passkey" or "copy".
	Task string
	// IDs are the prompt's first tokens (nil: Start(codec)); Text follows
	// them through the codec.
	IDs  []int
	Text string
	// Tokens is N, which must be in [1, the model's context]. For the
	// prompt, a prompt longer than N is an error unless Grow is set (N was
	// a default), when the prompt keeps its length.
	Tokens int
	Grow   bool
	// Prefix is n (0: the task's own split, or DefaultPrefix).
	Prefix int
	// Depth is where a pass key sits in the filler, Passage the length of a
	// copied passage (0: 48), Seed chooses keys and words.
	Depth   float64
	Passage int
	Seed    uint64
	// Gen is the length of the free run.
	Gen int
}

// FieldError is an error of a Spec's field, its message starting with the
// field's name ("tokens 400 outside ...", "prefix 100: ..."), so that a
// caller can name its own flag or field for it.
type FieldError struct {
	Field string // "tokens", "prefix", "gen", "prompt", "text" or "task"
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{field, fmt.Errorf(format, a...)}
}

// Build makes the sequence s asks of lm, with codec for text (nil: ids
// only). An error of a field is a *FieldError.
func (s Spec) Build(lm LM, codec Codec) (*Built, error) {
	ctx := lm.Context()
	n := s.Tokens
	switch {
	case n < 1 || n > ctx:
		return nil, fieldErr("tokens", "tokens %d outside [1, %d] (the model's context)", n, ctx)
	case s.Prefix < 0:
		return nil, fieldErr("prefix", "prefix %d: want >= 0", s.Prefix)
	case s.Gen < 0:
		return nil, fieldErr("gen", "gen %d: want >= 0", s.Gen)
	case (s.Task != "") && (s.Text != "" || s.IDs != nil):
		return nil, fieldErr("task", "task %s builds its own sequence: no prompt with it", s.Task)
	case s.Text != "" && codec == nil:
		return nil, &FieldError{"text", errors.New("text needs the model's tokenizer")}
	}
	var b *Built
	var err error
	switch s.Task {
	case "passkey":
		b, err = PassKey{Tokens: n, Depth: s.Depth, Seed: s.Seed}.Build(lm, codec)
	case "copy":
		b, err = Copy{Tokens: n, Passage: s.Passage, Seed: s.Seed}.Build(lm, codec)
	case "":
		ids := Start(codec)
		if s.IDs != nil {
			ids = slices.Clone(s.IDs)
		}
		for _, id := range ids {
			if id < 0 || id >= lm.Vocab() {
				return nil, fieldErr("prompt", "prompt: token %d outside the vocabulary [0, %d)", id, lm.Vocab())
			}
		}
		if s.Text != "" {
			t, err := codec.EncodeText(s.Text)
			if err != nil {
				return nil, &FieldError{"text", fmt.Errorf("text: %w", err)}
			}
			ids = append(ids, t...)
		}
		switch {
		case len(ids) > ctx:
			return nil, fieldErr("prompt", "prompt: its %d tokens exceed the model's context of %d", len(ids), ctx)
		case len(ids) > n && s.Grow:
			n = len(ids)
		case len(ids) > n:
			return nil, fieldErr("tokens", "tokens %d is shorter than the prompt's %d tokens", n, len(ids))
		}
		b = &Built{Sequence: Sequence{Tokens: Continue(lm, ids, n)}}
	default:
		return nil, fieldErr("task", "task %q: want passkey, copy or none", s.Task)
	}
	if err != nil {
		return nil, err
	}
	b.Gen = s.Gen
	if s.Prefix != 0 {
		if s.Prefix >= len(b.Tokens) {
			return nil, fieldErr("prefix", "prefix %d: the sequence has %d tokens", s.Prefix, len(b.Tokens))
		}
		if len(b.Answers) > 0 && s.Prefix > b.Answers[0].Start {
			return nil, fieldErr("prefix", "prefix %d would hide the answer at position %d in the cache", s.Prefix, b.Answers[0].Start)
		}
		b.Prefix = s.Prefix
	}
	return b, nil
}
