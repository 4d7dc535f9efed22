package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The Split patterns of Llama 3 and Qwen2 tokenizer.json files.
const (
	PatternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	PatternQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// component is a normalizer, pre-tokenizer, post-processor or decoder of
// tokenizer.json: its type and the fields this package reads.
type component struct {
	Type string `json:"type"`
	// Sequence
	Normalizers   []component `json:"normalizers"`
	Pretokenizers []component `json:"pretokenizers"`
	Processors    []component `json:"processors"`
	// Prepend, Replace
	Prepend string          `json:"prepend"`
	Pattern json.RawMessage `json:"pattern"`
	Content string          `json:"content"`
	// ByteLevel, Metaspace
	AddPrefixSpace *bool   `json:"add_prefix_space"`
	UseRegex       *bool   `json:"use_regex"`
	Replacement    string  `json:"replacement"`
	PrependScheme  string  `json:"prepend_scheme"`
	Split          *bool   `json:"split"`
	Behavior       string  `json:"behavior"`
	Invert         bool    `json:"invert"`
	Individual     *bool   `json:"individual_digits"`
	Single         []tmpl  `json:"single"`
	Special        special `json:"special_tokens"`
}

type tmpl struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
}

type special map[string]struct {
	IDs []int `json:"ids"`
}

type hfJSON struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    *component `json:"normalizer"`
	PreTokenizer  *component `json:"pre_tokenizer"`
	PostProcessor *component `json:"post_processor"`
	Model         struct {
		Type          string            `json:"type"`
		Vocab         map[string]int    `json:"vocab"`
		Merges        []json.RawMessage `json:"merges"`
		UnkToken      *string           `json:"unk_token"`
		ByteFallback  bool              `json:"byte_fallback"`
		FuseUnk       bool              `json:"fuse_unk"`
		IgnoreMerges  bool              `json:"ignore_merges"`
		ContinuingSub *string           `json:"continuing_subword_prefix"`
		EndOfWord     *string           `json:"end_of_word_suffix"`
	} `json:"model"`
}

// tokenName is a token in tokenizer_config.json: a string or an object
// with "content".
type tokenName string

func (n *tokenName) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = tokenName(s)
		return nil
	}
	var o struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*n = tokenName(o.Content)
	return nil
}

// FromHF builds the tokenizer of a Hugging Face folder from tokenizer.json
// and, when not nil, tokenizer_config.json (for the EOS token, and BOS
// when tokenizer.json's post-processor does not add one). The model must
// be BPE: byte-level (a ByteLevel pre-tokenizer, alone or after the Split
// pattern of Llama 3 or Qwen2, or after Digits as SmolLM) or
// SentencePiece-style (Prepend/Replace "▁" normalizers or a Metaspace
// pre-tokenizer, byte fallback). Anything else is refused by name.
func FromHF(tokenizerJSON, tokenizerConfig []byte) (*Tokenizer, error) {
	var h hfJSON
	if err := json.Unmarshal(tokenizerJSON, &h); err != nil {
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.json: %v", ErrTokenizer, err)
	}
	m := &h.Model
	if m.Type != "BPE" {
		return nil, fmt.Errorf("tokenizer: %w: tokenizer.json model type %q is not supported (supported: BPE)", ErrTokenizer, m.Type)
	}
	if m.ContinuingSub != nil && *m.ContinuingSub != "" || m.EndOfWord != nil && *m.EndOfWord != "" {
		return nil, fmt.Errorf("tokenizer: %w: BPE with continuing_subword_prefix or end_of_word_suffix is not supported", ErrTokenizer)
	}
	t := &Tokenizer{bos: -1, eos: -1, unk: -1, ignoreMerges: m.IgnoreMerges, fuseUnk: m.FuseUnk}
	if err := t.hfPipeline(&h); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	// The vocabulary: model.vocab and added_tokens, ids without holes.
	n := 0
	for _, id := range m.Vocab {
		n = max(n, id+1)
	}
	for _, a := range h.AddedTokens {
		n = max(n, a.ID+1)
	}
	if n > MaxVocab {
		return nil, fmt.Errorf("tokenizer: %w: token ids up to %d, more than %d", ErrTokenizer, n-1, MaxVocab)
	}
	t.tokens, t.types = make([]string, n), make([]TokenType, n)
	set := make([]bool, n)
	put := func(s string, id int, tt TokenType) error {
		if id < 0 {
			return fmt.Errorf("%w: token %q has id %d", ErrTokenizer, s, id)
		}
		if set[id] && t.tokens[id] != s {
			return fmt.Errorf("%w: id %d is both %q and %q", ErrTokenizer, id, t.tokens[id], s)
		}
		t.tokens[id], t.types[id], set[id] = s, tt, true
		return nil
	}
	for s, id := range m.Vocab {
		tt := Normal
		if _, ok := parseByteToken(s); ok && m.ByteFallback {
			tt = Byte
		}
		if err := put(s, id, tt); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	for _, a := range h.AddedTokens {
		tt := UserDefined
		if a.Special {
			tt = Control
		}
		if err := put(a.Content, a.ID, tt); err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
	}
	for id, ok := range set {
		if !ok {
			return nil, fmt.Errorf("tokenizer: %w: no token has id %d (of %d)", ErrTokenizer, id, n)
		}
	}
	if m.UnkToken != nil {
		if t.unk = t.lookup(*m.UnkToken); t.unk < 0 {
			return nil, fmt.Errorf("tokenizer: %w: unk_token %q is not in the vocabulary", ErrTokenizer, *m.UnkToken)
		}
		t.types[t.unk] = Unknown
	}
	if err := t.setMerges(len(m.Merges), func(i int) (string, string, error) {
		raw := m.Merges[i]
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if a, b, ok := splitMerge(s); ok {
				return a, b, nil
			}
		}
		var p []string
		if json.Unmarshal(raw, &p) == nil && len(p) == 2 {
			return p[0], p[1], nil
		}
		return "", "", fmt.Errorf("%w: merge %d %.40s is neither \"a b\" nor [a, b]", ErrTokenizer, i, raw)
	}); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	// BOS from the post-processor's template.
	bosName := ""
	var find func(c *component)
	find = func(c *component) {
		if c == nil {
			return
		}
		if c.Type == "TemplateProcessing" && len(c.Single) > 0 && c.Single[0].SpecialToken != nil {
			bosName = c.Single[0].SpecialToken.ID
			if sp, ok := c.Special[bosName]; ok && len(sp.IDs) == 1 && sp.IDs[0] >= 0 && sp.IDs[0] < n {
				t.bos, t.addBOS = sp.IDs[0], true
			}
		}
		for i := range c.Processors {
			find(&c.Processors[i])
		}
	}
	find(h.PostProcessor)
	if bosName != "" && t.bos < 0 {
		if t.bos = t.lookup(bosName); t.bos < 0 {
			return nil, fmt.Errorf("tokenizer: %w: the post-processor adds %q, which is not in the vocabulary", ErrTokenizer, bosName)
		}
		t.addBOS = true
	}
	if tokenizerConfig != nil {
		tc, err := parseTokenizerConfig(tokenizerConfig)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		if tc.EOS != nil {
			if t.eos = t.lookup(string(*tc.EOS)); t.eos < 0 {
				return nil, fmt.Errorf("tokenizer: %w: tokenizer_config.json eos_token %q is not in the vocabulary", ErrTokenizer, *tc.EOS)
			}
		}
		if tc.BOS != nil && t.bos < 0 {
			if t.bos = t.lookup(string(*tc.BOS)); t.bos < 0 {
				return nil, fmt.Errorf("tokenizer: %w: tokenizer_config.json bos_token %q is not in the vocabulary", ErrTokenizer, *tc.BOS)
			}
			t.addBOS = tc.AddBOS != nil && *tc.AddBOS
		}
	}
	return t, t.finish()
}

// hfPipeline reads the normalizer and pre-tokenizer into the kind and its
// settings.
func (t *Tokenizer) hfPipeline(h *hfJSON) error {
	var pres []component
	if p := h.PreTokenizer; p != nil {
		if p.Type == "Sequence" {
			pres = p.Pretokenizers
		} else {
			pres = []component{*p}
		}
	}
	var norms []component
	if n := h.Normalizer; n != nil {
		if n.Type == "Sequence" {
			norms = n.Normalizers
		} else {
			norms = []component{*n}
		}
	}
	byteLevel := false
	for _, p := range pres {
		byteLevel = byteLevel || p.Type == "ByteLevel"
	}
	if byteLevel {
		t.kind = ByteLevel
		if len(norms) == 1 && norms[0].Type == "NFC" {
			t.nfc, norms = true, nil
		}
		if len(norms) > 0 {
			return fmt.Errorf("%w: a byte-level tokenizer with a %s normalizer is not supported (supported: NFC)", ErrTokenizer, norms[0].Type)
		}
		last := pres[len(pres)-1]
		if last.Type != "ByteLevel" {
			return fmt.Errorf("%w: pre-tokenizer %s after ByteLevel is not supported", ErrTokenizer, last.Type)
		}
		t.prefixSpace = last.AddPrefixSpace != nil && *last.AddPrefixSpace
		regex := last.UseRegex == nil || *last.UseRegex
		switch before := pres[:len(pres)-1]; {
		case len(before) == 0 && regex:
			t.pre = PreGPT2
		case len(before) == 1 && before[0].Type == "Split" && !regex:
			var pat struct {
				Regex string `json:"Regex"`
			}
			if err := json.Unmarshal(before[0].Pattern, &pat); err != nil {
				return fmt.Errorf("%w: Split pattern %.60s: %v", ErrTokenizer, before[0].Pattern, err)
			}
			switch {
			case before[0].Invert || before[0].Behavior != "Isolated":
				return fmt.Errorf("%w: Split with behavior %q (invert %v) is not supported", ErrTokenizer, before[0].Behavior, before[0].Invert)
			case pat.Regex == PatternLlama3:
				t.pre = PreLlama3
			case pat.Regex == PatternQwen2:
				t.pre = PreQwen2
			default:
				return fmt.Errorf("%w: Split pattern %.100q is not one this package implements (Llama 3's, Qwen2's)", ErrTokenizer, pat.Regex)
			}
		case len(before) == 1 && before[0].Type == "Digits" && before[0].Individual != nil && *before[0].Individual && regex:
			t.pre = PreSmolLM
		default:
			names := make([]string, len(pres))
			for i, p := range pres {
				names[i] = p.Type
			}
			return fmt.Errorf("%w: pre-tokenizer sequence %s (use_regex %v) is not supported", ErrTokenizer, strings.Join(names, ", "), regex)
		}
		return nil
	}
	t.kind = SentencePiece
	for _, n := range norms {
		switch {
		case n.Type == "Prepend" && n.Prepend == "▁":
			t.spacePrefix = true
		case n.Type == "Replace" && patternString(n.Pattern) == " " && n.Content == "▁":
		default:
			return fmt.Errorf("%w: normalizer %s is not supported", ErrTokenizer, n.Type)
		}
	}
	for _, p := range pres {
		switch {
		case p.Type == "Metaspace" && (p.Replacement == "▁" || p.Replacement == ""):
			switch p.PrependScheme {
			case "", "always", "first":
				t.spacePrefix = p.AddPrefixSpace == nil || *p.AddPrefixSpace
			case "never":
			default:
				return fmt.Errorf("%w: Metaspace prepend_scheme %q", ErrTokenizer, p.PrependScheme)
			}
			t.splitWords = p.Split == nil || *p.Split
		default:
			return fmt.Errorf("%w: pre-tokenizer %s is not supported", ErrTokenizer, p.Type)
		}
	}
	if len(norms) == 0 && len(pres) == 0 {
		return fmt.Errorf("%w: a BPE tokenizer.json with neither ByteLevel nor \"▁\" handling is not supported", ErrTokenizer)
	}
	return nil
}

// patternString is the String of a Replace or Split pattern, "" for a
// Regex or anything else.
func patternString(raw json.RawMessage) string {
	var p struct {
		String string `json:"String"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	return p.String
}
