// Package bytemodel writes a llama2.c model of the byte vocabulary (259
// tokens: 0 <unk>, 1 BOS <s>, 2 EOS </s>, 3+b the byte b; the vocabulary of
// kjv3m.bin and of llama.ByteTokenizerFile) as the checkpoints core/model
// reads, a GGUF file and a Hugging Face folder, each carrying a tokenizer
// that encodes text as llama2.c's byte tokenizer does: the same token ids
// for the same text. Tests use it to run one model through both paths.
//
// The tokenizer is SentencePiece style: "▁" (the space, after the space
// prefix) is token 3+0x20, every other byte is a byte-fallback token
// "<0xHH>", and there are no merges, so a text becomes BOS, the dummy
// prefix space, then its bytes, as llama2.c encodes it, and decodes token
// by token as llama2.c does.
package bytemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/core/model/tokenizer"
)

// Vocab is the size of the byte vocabulary.
const Vocab = 259

// pieces are the vocabulary's tokens and their types.
func pieces() ([]string, []int32) {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{int32(tokenizer.Unknown), int32(tokenizer.Control), int32(tokenizer.Control)}
	for b := 0; b < 256; b++ {
		if b == ' ' {
			tokens, types = append(tokens, "▁"), append(types, int32(tokenizer.Normal))
			continue
		}
		tokens, types = append(tokens, fmt.Sprintf("<0x%02X>", b)), append(types, int32(tokenizer.Byte))
	}
	return tokens, types
}

// Tokenizer is the byte vocabulary's tokenizer, built from its GGUF
// metadata (tokenizer.ggml.*) as a GGUF file carries it.
func Tokenizer() (*tokenizer.Tokenizer, error) {
	tokens, types := pieces()
	kv := []gguf.KV{
		{Key: tokenizer.KeyModel, Value: "llama"}, {Key: tokenizer.KeyTokens, Value: tokens},
		{Key: tokenizer.KeyScores, Value: make([]float32, len(tokens))}, {Key: tokenizer.KeyTokenType, Value: types},
		{Key: tokenizer.KeyBOS, Value: uint32(llama.BOS)}, {Key: tokenizer.KeyEOS, Value: uint32(2)}, {Key: tokenizer.KeyUNK, Value: uint32(0)},
	}
	var b bytes.Buffer
	if err := gguf.Write(&b, kv, nil); err != nil {
		return nil, fmt.Errorf("bytemodel: %w", err)
	}
	f, err := gguf.Decode("bytes-tokenizer.gguf", b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("bytemodel: %w", err)
	}
	return tokenizer.FromGGUF(f)
}

// TokenizerJSON is the byte vocabulary as a Hugging Face tokenizer.json
// (a Llama 2 style BPE: Prepend and Replace normalizers, byte fallback, no
// merges, BOS added by the post-processor).
func TokenizerJSON() []byte {
	tokens, _ := pieces()
	vocab := map[string]int{}
	for i, s := range tokens {
		vocab[s] = i
	}
	doc := map[string]any{
		"added_tokens": []any{
			map[string]any{"id": 0, "content": "<unk>", "special": true},
			map[string]any{"id": 1, "content": "<s>", "special": true},
			map[string]any{"id": 2, "content": "</s>", "special": true},
		},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": nil,
		"post_processor": map[string]any{"type": "TemplateProcessing", "single": []any{
			map[string]any{"SpecialToken": map[string]any{"id": "<s>", "type_id": 0}},
			map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}},
			"special_tokens": map[string]any{"<s>": map[string]any{"id": "<s>", "ids": []int{1}, "tokens": []string{"<s>"}}}},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}, "byte_fallback": true, "unk_token": "<unk>", "fuse_unk": true},
	}
	b, _ := json.MarshalIndent(doc, "", "  ") // maps of strings and ints cannot fail
	return b
}

// TokenizerConfigJSON is the folder's tokenizer_config.json.
const TokenizerConfigJSON = `{"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true}`

// Checkpoint is the llama2.c model m with the byte tokenizer.
func Checkpoint(m *llama.Model) (*model.Checkpoint, error) {
	if v := m.Config().Vocab; v != Vocab {
		return nil, fmt.Errorf("bytemodel: %s has %d tokens, not the byte vocabulary's %d", m.Name, v, Vocab)
	}
	ck, err := model.FromLlama2C(m)
	if err != nil {
		return nil, err
	}
	if ck.Tokenizer, err = Tokenizer(); err != nil {
		return nil, err
	}
	return ck, nil
}

// GGUF is m with the byte tokenizer as a GGUF file (model.WriteGGUF).
func GGUF(m *llama.Model, opt model.GGUFOptions) ([]byte, error) {
	ck, err := Checkpoint(m)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := model.WriteGGUF(&b, ck, opt); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteHF writes m as the Hugging Face folder dir (model.WriteHF: weights
// in dtype, sharded at shardBytes when positive) with the byte
// tokenizer's tokenizer.json and tokenizer_config.json.
func WriteHF(dir string, m *llama.Model, dtype string, shardBytes int64) error {
	ck, err := Checkpoint(m)
	if err != nil {
		return err
	}
	if err := model.WriteHF(dir, ck, dtype, shardBytes); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, hf.TokenizerFile), TokenizerJSON(), 0o644); err != nil {
		return fmt.Errorf("bytemodel: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, hf.TokenizerConfigFile), []byte(TokenizerConfigJSON), 0o644); err != nil {
		return fmt.Errorf("bytemodel: %w", err)
	}
	return nil
}
