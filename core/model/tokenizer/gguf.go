package tokenizer

import (
	"fmt"
	"strings"

	"github.com/haeols/haeols/core/model/gguf"
)

// GGUF tokenizer keys.
const (
	KeyModel          = "tokenizer.ggml.model"
	KeyPre            = "tokenizer.ggml.pre"
	KeyTokens         = "tokenizer.ggml.tokens"
	KeyScores         = "tokenizer.ggml.scores"
	KeyTokenType      = "tokenizer.ggml.token_type"
	KeyMerges         = "tokenizer.ggml.merges"
	KeyBOS            = "tokenizer.ggml.bos_token_id"
	KeyEOS            = "tokenizer.ggml.eos_token_id"
	KeyUNK            = "tokenizer.ggml.unknown_token_id"
	KeyAddBOS         = "tokenizer.ggml.add_bos_token"
	KeyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
)

// GGUFPres maps tokenizer.ggml.pre values to pre-tokenizers; others are
// refused by name. "default" and an absent key mean GPT-2's.
var GGUFPres = map[string]Pre{
	"default": PreGPT2, "gpt2": PreGPT2, "llama-bpe": PreLlama3, "llama3": PreLlama3, "llama-v3": PreLlama3,
	"qwen2": PreQwen2, "smollm": PreSmolLM,
}

// FromGGUF builds the tokenizer of a GGUF file from its tokenizer.ggml.*
// metadata: model "llama" (SentencePiece, with scores) or "gpt2"
// (byte-level BPE, with merges and the pre-tokenizer tokenizer.ggml.pre
// names). add_bos_token defaults to true for "llama" and for the Llama 3
// pre-tokenizer, false for other "gpt2" files (llama.cpp's defaults);
// add_space_prefix to true. For Llama 3 a whole word in the vocabulary
// is one token (ignore_merges).
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.String(KeyModel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t := &Tokenizer{bos: -1, eos: -1, unk: -1}
	switch model {
	case "llama":
		t.kind, t.addBOS, t.spacePrefix = SentencePiece, true, true
	case "gpt2":
		t.kind = ByteLevel
	default:
		return nil, fmt.Errorf("tokenizer: %w: %s %q is not supported (supported: llama, gpt2)", ErrTokenizer, KeyModel, model)
	}
	v, _ := f.Get(KeyTokens)
	tokens, ok := v.([]string)
	if !ok {
		return nil, fmt.Errorf("tokenizer: %w: %s is missing or not an array of strings", ErrTokenizer, KeyTokens)
	}
	t.tokens = tokens
	t.types = make([]TokenType, len(tokens))
	if v, ok := f.Get(KeyTokenType); ok {
		tt, isI32 := v.([]int32)
		if !isI32 || len(tt) != len(tokens) {
			return nil, fmt.Errorf("tokenizer: %w: %s must be an INT32 array of %d", ErrTokenizer, KeyTokenType, len(tokens))
		}
		for i, x := range tt {
			t.types[i] = TokenType(x)
		}
	} else {
		for i := range t.types {
			t.types[i] = Normal
		}
	}
	for _, k := range []struct {
		key string
		dst *int
	}{{KeyBOS, &t.bos}, {KeyEOS, &t.eos}, {KeyUNK, &t.unk}} {
		if _, ok := f.Get(k.key); !ok {
			continue
		}
		id, err := f.Uint(k.key)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if id >= uint64(len(tokens)) {
			return nil, fmt.Errorf("tokenizer: %w: %s = %d outside the vocabulary of %d", ErrTokenizer, k.key, id, len(tokens))
		}
		*k.dst = int(id)
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{KeyAddBOS, &t.addBOS}, {KeyAddSpacePrefix, &t.spacePrefix}} {
		if _, ok := f.Get(k.key); ok && (k.key == KeyAddBOS || t.kind == SentencePiece) {
			if *k.dst, err = f.Bool(k.key); err != nil {
				return nil, fmt.Errorf("tokenizer: %w", err)
			}
		}
	}
	if t.kind == SentencePiece {
		v, _ := f.Get(KeyScores)
		scores, ok := v.([]float32)
		if !ok || len(scores) != len(tokens) {
			return nil, fmt.Errorf("tokenizer: %w: %s must be a FLOAT32 array of %d", ErrTokenizer, KeyScores, len(tokens))
		}
		t.scores = scores
		return t, t.finish()
	}
	t.pre = PreGPT2
	if _, ok := f.Get(KeyPre); ok {
		name, err := f.String(KeyPre)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if t.pre, ok = GGUFPres[name]; !ok {
			return nil, fmt.Errorf("tokenizer: %w: %s %q is not supported (supported: default, gpt2, llama-bpe, qwen2, smollm)", ErrTokenizer, KeyPre, name)
		}
	}
	// llama.cpp takes a whole word in the vocabulary as one token for
	// Llama 3, as its tokenizer.json's ignore_merges says.
	t.ignoreMerges = t.pre == PreLlama3
	if _, set := f.Get(KeyAddBOS); !set && t.pre == PreLlama3 {
		t.addBOS = true // llama.cpp's default for these
	}
	v, _ = f.Get(KeyMerges)
	merges, ok := v.([]string)
	if !ok {
		return nil, fmt.Errorf("tokenizer: %w: %s is missing or not an array of strings", ErrTokenizer, KeyMerges)
	}
	if err := t.setMerges(len(merges), func(i int) (string, string, error) {
		a, b, ok := splitMerge(merges[i])
		if !ok {
			return "", "", fmt.Errorf("%w: merge %d %q is not two tokens separated by a space", ErrTokenizer, i, merges[i])
		}
		return a, b, nil
	}); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, t.finish()
}

// splitMerge splits "a b" at the first space after the first byte.
func splitMerge(m string) (string, string, bool) {
	if len(m) < 3 {
		return "", "", false
	}
	i := strings.IndexByte(m[1:], ' ')
	if i < 0 || i+2 >= len(m) {
		return "", "", false
	}
	return m[:i+1], m[i+2:], true
}

// setMerges ranks n merges given by pair; the first of duplicates keeps
// its rank.
func (t *Tokenizer) setMerges(n int, pair func(int) (string, string, error)) error {
	if n > MaxMerges {
		return fmt.Errorf("%w: %d merges, more than %d", ErrTokenizer, n, MaxMerges)
	}
	// Every merge joins two tokens into a third: the tokenizers library
	// refuses a tokenizer.json whose merges name others, and converters
	// copy only such merges into GGUF.
	have := make(map[string]struct{}, len(t.tokens))
	for _, s := range t.tokens {
		have[s] = struct{}{}
	}
	t.merges = make(map[string]int, n)
	t.mergeList = make([]string, 0, n)
	for i := 0; i < n; i++ {
		a, b, err := pair(i)
		if err != nil {
			return err
		}
		for _, s := range []string{a, b, a + b} {
			if _, ok := have[s]; !ok {
				return fmt.Errorf("%w: merge %d (%q, %q): %q is not in the vocabulary", ErrTokenizer, i, a, b, s)
			}
		}
		k := a + "\x00" + b
		if _, dup := t.merges[k]; !dup {
			t.merges[k] = i
		}
		t.mergeList = append(t.mergeList, a+" "+b)
	}
	return nil
}

// GGUF returns the tokenizer as GGUF tokenizer.ggml.* metadata, which
// FromGGUF reads back to the same tokenizer: model "llama" with scores for
// a SentencePiece tokenizer from GGUF, "gpt2" with merges and the
// pre-tokenizer's name for byte-level BPE. Settings GGUF cannot express
// (tokenizer.json merge ranks for SentencePiece, Metaspace word splits,
// add_prefix_space, ignore_merges other than llama-bpe's) are an error.
func (t *Tokenizer) GGUF() ([]gguf.KV, error) {
	types := make([]int32, len(t.types))
	for i, tt := range t.types {
		types[i] = int32(tt)
	}
	kv := []gguf.KV{{Key: KeyTokens, Value: t.tokens}, {Key: KeyTokenType, Value: types}}
	if t.kind == SentencePiece {
		if t.merges != nil {
			return nil, fmt.Errorf("tokenizer: a SentencePiece tokenizer merged by tokenizer.json ranks has no GGUF scores")
		}
		kv = append([]gguf.KV{{Key: KeyModel, Value: "llama"}}, kv...)
		kv = append(kv, gguf.KV{Key: KeyScores, Value: t.scores}, gguf.KV{Key: KeyAddSpacePrefix, Value: t.spacePrefix})
		if t.splitWords {
			return nil, fmt.Errorf("tokenizer: GGUF has no key for a Metaspace word split")
		}
	} else {
		if t.prefixSpace || t.ignoreMerges != (t.pre == PreLlama3) {
			return nil, fmt.Errorf("tokenizer: GGUF has no key for add_prefix_space or ignore_merges with %v", t.pre)
		}
		kv = append([]gguf.KV{{Key: KeyModel, Value: "gpt2"}, {Key: KeyPre, Value: t.pre.String()}}, kv...)
		kv = append(kv, gguf.KV{Key: KeyMerges, Value: t.mergeList})
	}
	for _, p := range []struct {
		key string
		id  int
	}{{KeyBOS, t.bos}, {KeyEOS, t.eos}, {KeyUNK, t.unk}} {
		if p.id >= 0 {
			kv = append(kv, gguf.KV{Key: p.key, Value: uint32(p.id)})
		}
	}
	return append(kv, gguf.KV{Key: KeyAddBOS, Value: t.addBOS}), nil
}
