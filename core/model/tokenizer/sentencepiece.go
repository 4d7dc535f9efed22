package tokenizer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// The SentencePiece model types (TrainerSpec.model_type).
const (
	spmUnigram = 1
	spmBPE     = 2
)

// FromSentencePiece builds the tokenizer of a SentencePiece model file
// (tokenizer.model, a serialized sentencepiece.ModelProto, as Llama 2 and
// Mistral folders ship it) and, when not nil, tokenizer_config.json (for
// add_bos_token and eos_token). The pieces, their scores and types are the
// vocabulary (characters outside it, without byte pieces, become one
// unknown token per run, as sentencepiece fuses them); the trainer's unk_id, bos_id and eos_id name the special
// tokens; the normalizer's add_dummy_prefix is the space prefix. BOS is
// added unless tokenizer_config.json says otherwise, as llama.cpp and
// Hugging Face's LlamaTokenizer do.
//
// Only what haeols encodes exactly as SentencePiece does is accepted: a
// BPE model (merged by score, as llama.cpp merges it) with the identity
// normalizer, spaces escaped as "▁" and extra whitespace kept. A Unigram
// model, another normalization rule, removed extra whitespace or
// whitespace as a suffix is refused by name.
//
// Encode takes control, user-defined and unknown pieces written in the
// text whole and gives the text after a control token its space prefix,
// as llama.cpp does; sentencepiece itself reads control pieces as text.
func FromSentencePiece(modelProto, tokenizerConfig []byte) (*Tokenizer, error) {
	t := &Tokenizer{kind: SentencePiece, addBOS: true, spacePrefix: true, fuseUnk: true}
	modelType, unk, bos, eos := int64(spmUnigram), int64(0), int64(1), int64(2)
	normalizer, escape, extra, suffix := "", true, true, false
	err := protoFields(modelProto, func(field, wire int, v uint64, data []byte) error {
		switch field {
		case 1: // repeated SentencePiece pieces
			if wire != protoBytes {
				return fmt.Errorf("pieces: wire type %d", wire)
			}
			if len(t.tokens) >= MaxVocab {
				return fmt.Errorf("more than %d pieces", MaxVocab)
			}
			piece, score, typ := "", float32(0), Normal
			if err := protoFields(data, func(field, wire int, v uint64, data []byte) error {
				switch {
				case field == 1 && wire == protoBytes:
					piece = string(data)
				case field == 2 && wire == protoFixed32:
					score = math.Float32frombits(uint32(v))
				case field == 3 && wire == protoVarint:
					if v < uint64(Normal) || v > uint64(Byte) {
						return fmt.Errorf("type %d (want 1 to 6)", v)
					}
					typ = TokenType(v)
				case field <= 3:
					return fmt.Errorf("field %d: wire type %d", field, wire)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("piece %d: %w", len(t.tokens), err)
			}
			t.tokens = append(t.tokens, piece)
			t.scores = append(t.scores, score)
			t.types = append(t.types, typ)
		case 2: // TrainerSpec
			if wire != protoBytes {
				return fmt.Errorf("trainer_spec: wire type %d", wire)
			}
			return protoFields(data, func(field, wire int, v uint64, _ []byte) error {
				dst := map[int]*int64{3: &modelType, 40: &unk, 41: &bos, 42: &eos}[field]
				switch {
				case dst != nil && wire == protoVarint:
					*dst = int64(int32(v)) // int32 fields: -1 arrives as 2^64-1
				case field == 24 && wire == protoVarint:
					suffix = v != 0
				case dst != nil || field == 24:
					return fmt.Errorf("trainer_spec field %d: wire type %d", field, wire)
				}
				return nil
			})
		case 3: // NormalizerSpec
			if wire != protoBytes {
				return fmt.Errorf("normalizer_spec: wire type %d", wire)
			}
			return protoFields(data, func(field, wire int, v uint64, data []byte) error {
				switch {
				case field == 1 && wire == protoBytes:
					normalizer = string(data)
				case field == 3 && wire == protoVarint:
					t.spacePrefix = v != 0
				case field == 4 && wire == protoVarint:
					extra = v != 0
				case field == 5 && wire == protoVarint:
					escape = v != 0
				case field >= 1 && field <= 5 && field != 2:
					return fmt.Errorf("normalizer_spec field %d: wire type %d", field, wire)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model: %v", ErrTokenizer, err)
	}
	switch {
	case len(t.tokens) == 0:
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model has no pieces", ErrTokenizer)
	case modelType != spmBPE:
		name := map[int64]string{spmUnigram: "Unigram", 3: "Word", 4: "Char"}[modelType]
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model is a %s model (type %d); supported: BPE, as Llama 2 and Mistral", ErrTokenizer, name, modelType)
	case normalizer != "identity":
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model normalizes by %q; supported: identity", ErrTokenizer, normalizer)
	case extra:
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model removes extra whitespace, which haeols does not", ErrTokenizer)
	case !escape || suffix:
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.model keeps spaces unescaped or marks words by a suffix, which haeols does not", ErrTokenizer)
	}
	n := int64(len(t.tokens))
	for _, p := range []struct {
		name string
		id   int64
		dst  *int
		want TokenType
	}{{"unk_id", unk, &t.unk, Unknown}, {"bos_id", bos, &t.bos, Control}, {"eos_id", eos, &t.eos, Control}} {
		if p.id < -1 || p.id >= n {
			return nil, fmt.Errorf("tokenizer: %w: tokenizer.model %s %d outside its %d pieces", ErrTokenizer, p.name, p.id, n)
		}
		if p.id >= 0 && t.types[p.id] != p.want {
			return nil, fmt.Errorf("tokenizer: %w: tokenizer.model %s %d is piece %q of type %d, want %d", ErrTokenizer, p.name, p.id, t.tokens[p.id], t.types[p.id], p.want)
		}
		*p.dst = int(p.id)
	}
	if tokenizerConfig != nil {
		tc, err := parseTokenizerConfig(tokenizerConfig)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if tc.AddBOS != nil {
			t.addBOS = *tc.AddBOS
		}
		if tc.EOS != nil {
			if t.eos = t.lookup(string(*tc.EOS)); t.eos < 0 {
				return nil, fmt.Errorf("tokenizer: %w: tokenizer_config.json eos_token %q is not in the vocabulary", ErrTokenizer, *tc.EOS)
			}
		}
	}
	if t.bos < 0 {
		t.addBOS = false
	}
	return t, t.finish()
}

// Protocol buffer wire types.
const (
	protoVarint  = 0
	protoFixed64 = 1
	protoBytes   = 2
	protoFixed32 = 5
)

// protoFields calls fn for each field of the serialized protocol buffer
// message b in order: its number, wire type and value (a varint or a
// fixed-size value in v, length-delimited bytes in data, aliasing b).
// Groups, field number 0 and values that run past b are errors.
func protoFields(b []byte, fn func(field, wire int, v uint64, data []byte) error) error {
	for off := 0; off < len(b); {
		at := off
		key, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return fmt.Errorf("byte %d: bad field key", at)
		}
		off += n
		field, wire := key>>3, int(key&7)
		if field == 0 || field > math.MaxInt32 {
			return fmt.Errorf("byte %d: field number %d", at, field)
		}
		var v uint64
		var data []byte
		switch wire {
		case protoVarint:
			if v, n = binary.Uvarint(b[off:]); n <= 0 {
				return fmt.Errorf("byte %d: field %d: bad varint", at, field)
			}
			off += n
		case protoFixed64, protoFixed32:
			size := 8
			if wire == protoFixed32 {
				size = 4
			}
			if len(b)-off < size {
				return fmt.Errorf("byte %d: field %d runs past the end", at, field)
			}
			if size == 4 {
				v = uint64(binary.LittleEndian.Uint32(b[off:]))
			} else {
				v = binary.LittleEndian.Uint64(b[off:])
			}
			off += size
		case protoBytes:
			l, n := binary.Uvarint(b[off:])
			if n <= 0 {
				return fmt.Errorf("byte %d: field %d: bad length", at, field)
			}
			off += n
			if l > uint64(len(b)-off) {
				return fmt.Errorf("byte %d: field %d of %d bytes runs past the end (%d left)", at, field, l, len(b)-off)
			}
			data = b[off : off+int(l)]
			off += int(l)
		default:
			return fmt.Errorf("byte %d: field %d has wire type %d", at, field, wire)
		}
		if err := fn(int(field), wire, v, data); err != nil {
			return err
		}
	}
	return nil
}

// tokenizerConfig is what haeols reads of tokenizer_config.json.
type tokenizerConfig struct {
	BOS    *tokenName `json:"bos_token"`
	EOS    *tokenName `json:"eos_token"`
	AddBOS *bool      `json:"add_bos_token"`
}

func parseTokenizerConfig(b []byte) (*tokenizerConfig, error) {
	var tc tokenizerConfig
	if err := json.Unmarshal(b, &tc); err != nil {
		return nil, fmt.Errorf("%w: tokenizer_config.json: %v", ErrTokenizer, err)
	}
	return &tc, nil
}

// lookup returns the id of token s, the first of duplicates, or -1.
func (t *Tokenizer) lookup(s string) int {
	for id, tok := range t.tokens {
		if tok == s {
			return id
		}
	}
	return -1
}
