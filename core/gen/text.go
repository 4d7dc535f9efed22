package gen

import "strconv"

// The synthetic text: a small word vocabulary organised in topics, paragraphs
// that stay on one topic (so nearby tokens are correlated), a passkey needle
// ("the passkey is 7 3 9 1 4 ."), passages that are repeated verbatim (food
// for induction heads) and a question at the end of the probes ("what is the
// passkey ? the passkey is").

// Fixed words. Their ids are their index in the vocabulary built by
// newVocab, so they are stable across seeds.
const (
	wBOS      = "<s>"
	wPasskey  = "passkey"
	wPeriod   = "."
	wComma    = ","
	wQuestion = "?"
)

var functionWords = []string{
	"the", "of", "and", "a", "to", "in", "is", "was", "it", "that",
	"with", "on", "for", "as", "at", "by", "from", "but", "they", "all",
}

// functionWeights is a Zipf-like preference over functionWords.
var functionWeights = []float64{
	10, 6, 6, 5, 5, 4, 4, 3, 3, 3, 2, 2, 2, 2, 1.5, 1.5, 1.5, 1, 1, 1,
}

var topicWords = [][]string{
	{"harbor", "ship", "sail", "wave", "tide", "anchor", "captain", "crew", "island", "deck", "rope", "gull", "compass", "lighthouse", "current", "reef"},
	{"bread", "oven", "flour", "butter", "dough", "kitchen", "recipe", "honey", "pepper", "soup", "knife", "garlic", "onion", "baker", "crust", "spoon"},
	{"violin", "melody", "chord", "drum", "song", "choir", "rhythm", "piano", "concert", "tune", "singer", "note", "harmony", "flute", "band", "tempo"},
	{"summit", "glacier", "ridge", "valley", "climber", "snow", "cliff", "trail", "boulder", "pass", "peak", "slope", "cave", "pine", "altitude", "stream"},
	{"market", "coin", "trader", "price", "silk", "spice", "merchant", "stall", "bargain", "ledger", "cart", "wool", "barter", "debt", "profit", "guild"},
	{"garden", "rose", "seed", "soil", "bloom", "ivy", "tulip", "hedge", "orchard", "root", "petal", "fern", "moss", "blossom", "vine", "meadow"},
	{"comet", "planet", "orbit", "telescope", "nebula", "galaxy", "moon", "star", "eclipse", "meteor", "crater", "sky", "lens", "astronomer", "dust", "quasar"},
	{"tower", "street", "bridge", "tram", "square", "clock", "lantern", "alley", "gate", "fountain", "roof", "window", "avenue", "station", "mayor", "crowd"},
}

var extraWords = []string{
	wBOS, wPasskey, wPeriod, wComma, wQuestion,
	"what", "remember", "keep", "mind", "secret", "number", "hidden", "later",
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "9",
}

// vocab maps word ids to strings and back.
type vocab struct {
	words []string
	id    map[string]int // lookups only; never iterated
	topic []int          // topic of each word id, -1 for non-topic words
}

func newVocab() *vocab {
	v := &vocab{id: map[string]int{}}
	add := func(w string, topic int) {
		v.id[w] = len(v.words)
		v.words = append(v.words, w)
		v.topic = append(v.topic, topic)
	}
	for _, w := range extraWords {
		add(w, -1)
	}
	for _, w := range functionWords {
		add(w, -1)
	}
	for t, ws := range topicWords {
		for _, w := range ws {
			add(w, t)
		}
	}
	return v
}

func (v *vocab) mustID(w string) int {
	id, ok := v.id[w]
	if !ok {
		panic("gen: word not in vocabulary: " + w)
	}
	return id
}

// text is the token stream of one sample and its annotations.
type text struct {
	tok     []int     // word id per position
	seg     []int     // paragraph topic per position (-1: none)
	digit   []bool    // true for needle digits (they carry the "number" key feature)
	ask     []float64 // how strongly the query at this position asks for the needle
	needles []int     // positions of the needle digits
	probes  []int     // needle probe indices (position - n)
}

// textPlan says what goes into the text.
type textPlan struct {
	n, total int
	needles  int       // needle sentences (passkeys) in the prefix
	depths   []float64 // where the needles go, fractions of n (len >= needles)
	hint     float64   // ask strength of a passkey reminder in the calibration window (0: none)
	repeats  []repeat  // passages repeated verbatim
	question bool      // end the probes with a question about the passkey
}

// repeat copies the tokens [from, from+length) to position to (all three
// fractions of n). A plain copy is written at once and cut at the end of the
// prefix; a tail copy is made token by token as the text grows, so it runs
// on into the probes.
type repeat struct {
	from, length, to float64
	tail             bool
}

// textBuilder appends sentences to a token stream.
type textBuilder struct {
	v     *vocab
	r     *rng
	t     text
	topic int
}

func (b *textBuilder) push(w string, seg int) {
	b.t.tok = append(b.t.tok, b.v.mustID(w))
	b.t.seg = append(b.t.seg, seg)
	b.t.digit = append(b.t.digit, false)
	b.t.ask = append(b.t.ask, 0)
}

func (b *textBuilder) pushID(id, seg int) {
	b.t.tok = append(b.t.tok, id)
	b.t.seg = append(b.t.seg, seg)
	b.t.digit = append(b.t.digit, false)
	b.t.ask = append(b.t.ask, 0)
}

// maxSentence is the longest sentence, in tokens (words and the period).
const maxSentence = 14

// sentence appends one sentence of 5-13 words on the current topic.
func (b *textBuilder) sentence() {
	words := topicWords[b.topic]
	n := 5 + b.r.intn(maxSentence-5)
	for i := 0; i < n; i++ {
		switch u := b.r.float(); {
		case u < 0.48:
			// Topic words: a Zipf-like preference for the first few.
			k := b.r.intn(len(words))
			if b.r.float() < 0.5 {
				k = b.r.intn(4)
			}
			b.push(words[k], b.topic)
		case u < 0.95 || i == 0 || i == n-1:
			b.push(functionWords[pickWeighted(b.r, functionWeights)], b.topic)
		default:
			b.push(wComma, b.topic)
		}
	}
	b.push(wPeriod, b.topic)
}

// maybeNewParagraph switches to a different topic, now and then.
func (b *textBuilder) maybeNewParagraph() {
	if b.r.float() < 0.3 {
		t := b.r.intn(len(topicWords) - 1)
		if t >= b.topic {
			t++
		}
		b.topic = t
	}
}

// digitsFor returns how many digits a passkey has for a prefix of n tokens.
func digitsFor(n int) int {
	switch {
	case n >= 256:
		return 5
	case n >= 64:
		return 3
	default:
		return 2
	}
}

// needleLen is the token length of a needle sentence: "the passkey is" +
// digits + ".".
func needleLen(n int) int { return 3 + digitsFor(n) + 1 }

// questionLen is the token length of the question that ends the probes.
const questionLen = 8 // what is the passkey ? the passkey is

// hintLen is the token length of the reminder sentence.
const hintLen = 6 // keep the passkey in mind .

func pickWeighted(r *rng, w []float64) int {
	var s float64
	for _, x := range w {
		s += x
	}
	u := float64(r.float() * s)
	for i, x := range w {
		if u < x {
			return i
		}
		u -= x
	}
	return len(w) - 1
}

// buildText makes the token stream of a sample.
func buildText(p textPlan, r *rng) text {
	v := newVocab()
	b := &textBuilder{v: v, r: r, topic: r.intn(len(topicWords))}
	b.push(wBOS, -1)

	// Events in the prefix, by target position.
	type event struct {
		at   int
		kind int // 0 needle, 1 repeat, 2 hint
		idx  int
		size int // tokens it writes (0: a copy that runs to the end)
	}
	nd := digitsFor(p.n)
	var ev []event
	for i := 0; i < p.needles; i++ {
		ev = append(ev, event{at: int(p.depths[i] * float64(p.n)), kind: 0, idx: i, size: needleLen(p.n)})
	}
	for i, rp := range p.repeats {
		if at := int(rp.to * float64(p.n)); at < p.n {
			size := int(rp.length * float64(p.n))
			if rp.tail {
				size = 0
			}
			ev = append(ev, event{at: at, kind: 1, idx: i, size: size})
		}
	}
	if p.hint > 0 {
		ev = append(ev, event{at: p.n - 48, kind: 2, size: hintLen})
	}
	// Insertion sort by position (stable; few events).
	for i := 1; i < len(ev); i++ {
		for j := i; j > 0 && ev[j].at < ev[j-1].at; j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
	// Leave room so every needle and reminder ends inside the prefix: an
	// event fires at the first sentence end at or after its position, and
	// a sentence has at most maxSentence tokens.
	limit := p.n
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].kind == 1 {
			continue // a copy may be cut short
		}
		limit -= ev[i].size + maxSentence
		ev[i].at = max(1, min(ev[i].at, limit))
	}

	copySrc, copyEnd := -1, -1 // an active tail copy
	for len(b.t.tok) < p.n {
		if len(ev) > 0 && len(b.t.tok) >= ev[0].at {
			e := ev[0]
			ev = ev[1:]
			switch e.kind {
			case 0:
				b.push("the", b.topic)
				b.push(wPasskey, b.topic)
				b.push("is", b.topic)
				for d := 0; d < nd; d++ {
					b.t.needles = append(b.t.needles, len(b.t.tok))
					b.push(strconv.Itoa(r.intn(10)), b.topic)
					b.t.digit[len(b.t.tok)-1] = true
				}
				b.push(wPeriod, b.topic)
			case 1:
				rp := p.repeats[e.idx]
				from := int(rp.from * float64(p.n))
				to := from + int(rp.length*float64(p.n))
				if rp.tail {
					copySrc, copyEnd = from, to
				} else {
					for j := from; j < to && j < len(b.t.tok); j++ {
						b.pushID(b.t.tok[j], b.t.seg[j])
					}
				}
			case 2:
				b.push("keep", b.topic)
				b.push("the", b.topic)
				b.push(wPasskey, b.topic)
				b.t.ask[len(b.t.tok)-1] = p.hint
				b.push("in", b.topic)
				b.push("mind", b.topic)
				b.push(wPeriod, b.topic)
			}
			continue
		}
		if copySrc >= 0 {
			b.pushID(b.t.tok[copySrc], b.t.seg[copySrc])
			copySrc++
			if copySrc >= copyEnd {
				copySrc = -1
			}
			continue
		}
		b.maybeNewParagraph()
		b.sentence()
	}
	// Cut to exactly n (the last sentence may run over).
	b.t.tok, b.t.seg, b.t.digit, b.t.ask = b.t.tok[:p.n], b.t.seg[:p.n], b.t.digit[:p.n], b.t.ask[:p.n]

	// The probes: a continuation (or the continuing copy), then the question.
	end := p.total
	if p.question {
		end -= questionLen
	}
	for len(b.t.tok) < end {
		if copySrc >= 0 {
			b.pushID(b.t.tok[copySrc], b.t.seg[copySrc])
			copySrc++
			if copySrc >= copyEnd {
				copySrc = -1
			}
			continue
		}
		b.maybeNewParagraph()
		b.sentence()
	}
	b.t.tok, b.t.seg, b.t.digit, b.t.ask = b.t.tok[:end], b.t.seg[:end], b.t.digit[:end], b.t.ask[:end]
	if p.question {
		for _, w := range []string{"what", "is", "the", wPasskey, wQuestion, "the", wPasskey, "is"} {
			b.push(w, b.topic)
		}
		// The tokens whose queries ask for the passkey: the two mentions
		// of "passkey" and the final "is" that must produce the first digit.
		for _, k := range []int{end + 3, end + 6, end + 7} {
			b.t.ask[k] = 1
			b.t.probes = append(b.t.probes, k-p.n)
		}
	}
	return b.t
}

// tokens returns the display strings of the stream.
func (t *text) tokens() []string {
	v := newVocab()
	out := make([]string, len(t.tok))
	for i, id := range t.tok {
		out[i] = v.words[id]
	}
	return out
}
