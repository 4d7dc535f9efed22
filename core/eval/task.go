package eval

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/haeols/haeols/core/kvcache"
)

// Codec turns text into token ids and back; a llama2.c tokenizer is one
// (llama.Tokenizer).
type Codec interface {
	// EncodeText returns the tokens of text (no BOS). A SentencePiece-style
	// tokenizer starts them with its dummy-prefix space, so that texts
	// encoded one after the other read as separated by spaces.
	EncodeText(text string) ([]int, error)
	// DecodeToken is the text of token id after token prev.
	DecodeToken(prev, id int) string
}

// Decode returns the text of the tokens, each decoded after the one before
// (the first after prev).
func Decode(c Codec, prev int, ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(c.DecodeToken(prev, id))
		prev = id
	}
	return b.String()
}

// BOS is the beginning-of-sequence token of llama2.c models, with which a
// task starts when its codec names none.
const BOS = 1

// Start is the sequence's first tokens: the codec's BOS when it says
// (BOS() int; none when negative), else BOS.
func Start(c Codec) []int {
	if b, ok := c.(interface{ BOS() int }); ok {
		if id := b.BOS(); id >= 0 {
			return []int{id}
		}
		return nil
	}
	return []int{BOS}
}

// Task texts. The filler is the haystack of the pass-key retrieval tests
// of long-context models: sentences that say nothing, repeated.
const (
	passIntro    = "There is an important piece of information hidden inside a lot of irrelevant text. Find it and remember it. I will ask you about it."
	passNeedle   = "The pass key is %s. Remember it. %s is the pass key."
	passQuestion = "What is the pass key? The pass key is"
	copyIntro    = "Here is a list of words. Read it, then write it again at the end."
	copyAgain    = "The list again:"
)

var fillerSentences = []string{
	"The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.", "There and back again.",
}

// copyWords are the words the copy task draws its passages from.
var copyWords = strings.Fields(`apple river stone window garden silver candle horse bread lantern
	marble forest copper needle bridge summer thunder pepper velvet anchor basket meadow
	feather harbor island ladder mirror orchard pillow rabbit saddle tunnel violet wagon
	yellow zebra castle dragon falcon hammer jacket kettle lemon magnet nickel olive parrot
	quilt ribbon spider tiger umbrella walnut barrel cactus dolphin engine fossil glacier`)

// PassKey is the pass-key retrieval task: filler text with a number planted
// at a depth, and at the end the question whose answer is the number. The
// prefix (the cache to compress) ends before the question; the answer's
// digits are the answer span.
type PassKey struct {
	Tokens int     // target length N; the filler is cut to whole sentences to fit
	Depth  float64 // where the key sits in the filler: 0 at its start, 1 at its end
	Digits int     // digits of the key (0: 5)
	Seed   uint64  // chooses the key
}

// Copy is the copy task: a list of random words, filler, then the list
// again. The prefix ends before the second copy; every word of it but the
// first is an answer span (an induction head finds it in the first copy).
type Copy struct {
	Tokens  int    // target length N; the filler is cut to whole sentences
	Passage int    // target length of one copy in tokens (0: 48)
	Seed    uint64 // chooses the words
}

// Built is a task's sequence with what it asks.
type Built struct {
	Sequence
	// Key is the planted pass key, or the copied passage.
	Key string
	// At is the position where the key (or the first copy) starts.
	At int
}

// Build makes the pass-key sequence with the codec's tokens. Without a
// codec (a model whose tokenizer is not available) the task is built from
// token ids: the model's own greedy text from BOS as the filler, a cue of
// three fixed tokens followed by Digits random tokens as the key, and the
// cue again at the end, whose answer is the key's tokens.
func (p PassKey) Build(lm LM, c Codec) (*Built, error) {
	digits := p.Digits
	if digits == 0 {
		digits = 5
	}
	if digits < 1 || digits > 16 {
		return nil, fmt.Errorf("eval: pass key of %d digits, want 1 to 16", digits)
	}
	if !(p.Depth >= 0 && p.Depth <= 1) {
		return nil, fmt.Errorf("eval: pass-key depth %v outside [0, 1]", p.Depth)
	}
	r := splitmix{p.Seed ^ 0x9e3779b97f4a7c15}
	if c == nil {
		return p.buildIDs(lm, digits, &r)
	}
	key := make([]byte, digits)
	for i := range key {
		key[i] = byte('0' + r.next()%10)
	}
	if key[0] == '0' {
		key[0] = '1' + byte(r.next()%9)
	}
	ks := string(key)
	head, err := encodeAll(c, passIntro)
	if err != nil {
		return nil, err
	}
	needle, err := c.EncodeText(fmt.Sprintf(passNeedle, ks, ks))
	if err != nil {
		return nil, fmt.Errorf("eval: pass-key needle: %w", err)
	}
	q, err := c.EncodeText(passQuestion)
	if err != nil {
		return nil, fmt.Errorf("eval: pass-key question: %w", err)
	}
	ans, err := c.EncodeText(ks)
	if err != nil {
		return nil, fmt.Errorf("eval: pass key: %w", err)
	}
	lead := leadingSpace(c, ans)
	bos := Start(c)
	fixed := len(bos) + len(head) + len(needle) + len(q) + len(ans)
	fill, err := filler(c, p.Tokens-fixed, lm.Context()-fixed)
	if err != nil {
		return nil, err
	}
	cut := int(math.Round(p.Depth * float64(len(fill))))
	toks := append(bos, head...)
	for _, s := range fill[:cut] {
		toks = append(toks, s...)
	}
	at := len(toks)
	toks = append(toks, needle...)
	for _, s := range fill[cut:] {
		toks = append(toks, s...)
	}
	prefix := len(toks)
	toks = append(toks, q...)
	start := len(toks) + lead
	toks = append(toks, ans...)
	return &Built{Sequence: Sequence{Tokens: toks, Prefix: prefix, Answers: []Span{{start, len(toks)}}}, Key: ks, At: at}, nil
}

// buildIDs is the pass-key task in token ids.
func (p PassKey) buildIDs(lm LM, digits int, r *splitmix) (*Built, error) {
	v := lm.Vocab()
	if v < 8 {
		return nil, fmt.Errorf("eval: pass key in token ids needs a vocabulary of at least 8, not %d", v)
	}
	cue := []int{3 + int(r.next()%uint64(v-3)), 3 + int(r.next()%uint64(v-3)), 3 + int(r.next()%uint64(v-3))}
	key := make([]int, digits)
	for i := range key {
		key[i] = 3 + int(r.next()%uint64(v-3))
	}
	n := p.Tokens
	if n <= 0 || n > lm.Context() {
		n = lm.Context()
	}
	fixed := 1 + 2*(len(cue)+len(key))
	if n-fixed < 1 {
		return nil, fmt.Errorf("eval: pass key in %d tokens: the cue and key alone take %d", n, fixed)
	}
	fill := greedyText(lm, n-fixed)
	cut := int(math.Round(p.Depth * float64(len(fill))))
	toks := append([]int{BOS}, fill[:cut]...)
	at := len(toks)
	toks = append(toks, cue...)
	toks = append(toks, key...)
	toks = append(toks, fill[cut:]...)
	prefix := len(toks)
	toks = append(toks, cue...)
	start := len(toks)
	toks = append(toks, key...)
	return &Built{Sequence: Sequence{Tokens: toks, Prefix: prefix, Answers: []Span{{start, len(toks)}}}, Key: fmt.Sprint(key), At: at}, nil
}

// Build makes the copy sequence with the codec's tokens, or, without a
// codec, from token ids (random tokens as the passage, the model's own
// greedy text as the filler, spans of four tokens).
func (p Copy) Build(lm LM, c Codec) (*Built, error) {
	plen := p.Passage
	if plen == 0 {
		plen = 48
	}
	if plen < 2 {
		return nil, fmt.Errorf("eval: copy passage of %d tokens, want at least 2", plen)
	}
	if ctx := lm.Context(); plen > (ctx-2)/2 {
		return nil, fmt.Errorf("eval: copy passage of %d tokens: twice that does not fit the model's context of %d tokens (at most %d)", plen, ctx, (ctx-2)/2)
	}
	r := splitmix{p.Seed ^ 0x2545f4914f6cdd1d}
	if c == nil {
		return p.buildIDs(lm, plen, &r)
	}
	// Words until the passage reaches its length; each word's tokens.
	var words [][]int
	var text []string
	total := 0
	for total < plen {
		w := copyWords[r.next()%uint64(len(copyWords))]
		t, err := c.EncodeText(w)
		if err != nil {
			return nil, fmt.Errorf("eval: copy word %q: %w", w, err)
		}
		words = append(words, t)
		text = append(text, w)
		total += len(t)
	}
	head, err := encodeAll(c, copyIntro)
	if err != nil {
		return nil, err
	}
	again, err := c.EncodeText(copyAgain)
	if err != nil {
		return nil, fmt.Errorf("eval: copy task: %w", err)
	}
	bos := Start(c)
	fixed := len(bos) + len(head) + 2*total + len(again)
	fill, err := filler(c, p.Tokens-fixed, lm.Context()-fixed)
	if err != nil {
		return nil, err
	}
	toks := append(bos, head...)
	at := len(toks)
	for _, w := range words {
		toks = append(toks, w...)
	}
	for _, s := range fill {
		toks = append(toks, s...)
	}
	toks = append(toks, again...)
	prefix := len(toks)
	var spans []Span
	for i, w := range words {
		s := len(toks)
		toks = append(toks, w...)
		if i > 0 {
			spans = append(spans, Span{s + leadingSpace(c, w), len(toks)})
		}
	}
	return &Built{Sequence: Sequence{Tokens: toks, Prefix: prefix, Answers: spans}, Key: strings.Join(text, " "), At: at}, nil
}

// buildIDs is the copy task in token ids.
func (p Copy) buildIDs(lm LM, plen int, r *splitmix) (*Built, error) {
	v := lm.Vocab()
	n := p.Tokens
	if n <= 0 || n > lm.Context() {
		n = lm.Context()
	}
	if n-1-2*plen < 1 {
		return nil, fmt.Errorf("eval: copy of %d tokens twice does not fit %d tokens", plen, n)
	}
	pass := make([]int, plen)
	for i := range pass {
		pass[i] = 3 + int(r.next()%uint64(v-3))
	}
	fill := greedyText(lm, n-1-2*plen)
	toks := append([]int{BOS}, pass...)
	toks = append(toks, fill...)
	prefix := len(toks)
	toks = append(toks, pass...)
	var spans []Span
	for s := prefix + 4; s < len(toks); s += 4 {
		spans = append(spans, Span{s, min(s+4, len(toks))})
	}
	return &Built{Sequence: Sequence{Tokens: toks, Prefix: prefix, Answers: spans}, Key: fmt.Sprint(pass), At: 1}, nil
}

// encodeAll encodes a task's text, naming it in errors.
func encodeAll(c Codec, text string) ([]int, error) {
	t, err := c.EncodeText(text)
	if err != nil {
		return nil, fmt.Errorf("eval: task text %q: %w", text, err)
	}
	return t, nil
}

// filler returns filler sentences (each encoded) of at most budget tokens
// in all, or an error when not even one fits; limit is what the context
// leaves (budget <= 0 means "as much as the context leaves").
func filler(c Codec, budget, limit int) ([][]int, error) {
	if budget <= 0 || budget > limit {
		budget = limit
	}
	enc := make([][]int, len(fillerSentences))
	for i, s := range fillerSentences {
		t, err := c.EncodeText(s)
		if err != nil {
			return nil, fmt.Errorf("eval: filler %q: %w", s, err)
		}
		enc[i] = t
	}
	var out [][]int
	used := 0
	for i := 0; used+len(enc[i%len(enc)]) <= budget; i++ {
		out = append(out, enc[i%len(enc)])
		used += len(enc[i%len(enc)])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: no room for filler: %d tokens left of the sequence", budget)
	}
	return out, nil
}

// leadingSpace is the number of leading tokens of ids that decode to white
// space only (a dummy-prefix space), which an answer span leaves out.
func leadingSpace(c Codec, ids []int) int {
	n := 0
	for n < len(ids)-1 && strings.TrimFunc(c.DecodeToken(0, ids[n]), unicode.IsSpace) == "" {
		n++
	}
	return n
}

// greedyText generates n tokens greedily from BOS with the full cache.
func greedyText(lm LM, n int) []int { return Continue(lm, []int{BOS}, n+1)[1:] }

// Continue returns prompt followed by tokens generated greedily with the
// full cache, n tokens in all (prompt alone when it has n or more).
func Continue(lm LM, prompt []int, n int) []int {
	toks := append([]int(nil), prompt...)
	if len(toks) >= n {
		return toks
	}
	run := lm.NewRun(kvcache.NewDense(lm.Shape(), n), nil)
	for pos := 0; len(toks) < n; pos++ {
		logits := run.Forward(toks[pos], pos)
		if pos == len(toks)-1 {
			toks = append(toks, argmax(logits))
		}
	}
	return toks
}

// splitmix is the SplitMix64 generator: the tasks' keys and words.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
