package eval

import (
	"errors"
	"fmt"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/kvcache"
	"github.com/haeols/haeols/core/sample"
)

// errNoRoom says that a re-compression found no memory left for a KV
// head's rows: the summaries carried over from earlier rounds fill its
// budget.
var errNoRoom = errors.New("no room left for new tokens")

// noRoomError is errNoRoom at a position.
type noRoomError struct{ pos, layer, kv int }

func (e *noRoomError) Error() string {
	return fmt.Sprintf("%v at position %d (layer %d KV head %d: the summaries carried over fill its budget)", errNoRoom, e.pos, e.layer, e.kv)
}

func (e *noRoomError) Unwrap() error { return errNoRoom }

// decoder runs positions after the prefix over a compressed cache. With
// Params.Recompress = K > 0 it re-compresses the cache every K positions,
// so that the cache never holds more than its first compression's memory
// plus K exact positions (docs/METHOD.md, "Re-compressing while decoding"):
//
//   - The rows a KV head's cache holds without a logit bias (exact tokens,
//     quantized or reconstructed copies) and the exact rows of the K new
//     positions become the tokens of a new group, in position order; the
//     rows with a bias (summary tokens) are carried over unchanged.
//   - The group's calibration queries are the last w queries the run
//     computed (w as the first compression's: Options.Calib, else
//     min(128, rows/2)), for every query head of the KV head, so the
//     questions asked while decoding enter the choice.
//   - The method compresses the group into what the head's first budget
//     (Budget.Bits) leaves after the carried summaries: the ratio is those
//     slots over the group's rows.
//
// An evicted token is gone for good, as in an inference engine: later
// rounds only choose among what the cache still holds.
type decoder struct {
	r      *Reference
	method string
	p      core.Params
	every  int

	first      []kvcache.Prefix // the first compression, kept for reset
	firstBits  []int64          // its bits per KV head
	budget     []int64          // per KV head: the first compression's budget in bits
	params     []core.Params    // per KV head: the first compression's parameters
	pre        []kvcache.Prefix // the compressed cache now
	carried    []int64          // per KV head: bits of its summary rows now
	start      int              // positions the compressed cache stands for
	kvc        *kvcache.Compressed
	run        kvcache.Runner
	q, k, v    [][]float32 // per layer: queries, keys and values of positions Prefix.. (every > 0)
	rounds     int         // re-compressions so far
	peak, held int64       // the most bits the cache held, and now
	fullBits   int64       // bits of the full prefix cache (every KV head)
	rowBits    int64       // bits of one position of every KV head
	slot       int64       // bits of one position of one KV head
}

// newDecoder compresses the prefix with the method at p and readies a run
// over it. Errors wrap core.ErrDoesNotFit when the method cannot fit.
func (r *Reference) newDecoder(method string, p core.Params) (*decoder, float64, error) {
	caches, groups, err := r.compress(method, p)
	if err != nil {
		return nil, 0, err
	}
	sh := r.shape
	d := &decoder{r: r, method: method, p: p, every: p.Recompress}
	if method == "full" {
		d.every = 0 // the reference keeps every token: nothing to re-compress
	}
	nh := len(caches)
	d.first = make([]kvcache.Prefix, nh)
	d.firstBits = make([]int64, nh)
	d.budget = make([]int64, nh)
	d.params = make([]core.Params, nh)
	var bits int64
	for i, c := range caches {
		d.first[i] = PrefixOf(groups[i], c)
		d.firstBits[i] = c.Bits
		d.budget[i] = c.Budget.Bits()
		d.params[i] = p
		d.params[i].Ratio = c.Budget.Ratio
		bits += c.Bits
		d.fullBits += c.Budget.FullBits
		d.rowBits += c.Budget.SlotBits
		d.slot = c.Budget.SlotBits
	}
	if d.every > 0 {
		cont := r.capacity() - r.Seq.Prefix
		d.q = make([][]float32, sh.Layers)
		d.k = make([][]float32, sh.Layers)
		d.v = make([][]float32, sh.Layers)
		for l := range d.q {
			d.q[l] = make([]float32, cont*sh.Dim())
			d.k[l] = make([]float32, cont*sh.KVDim())
			d.v[l] = make([]float32, cont*sh.KVDim())
		}
	}
	if err := d.reset(); err != nil {
		return nil, 0, err
	}
	return d, float64(bits) / float64(d.fullBits), nil
}

// reset returns to the first compression with nothing continued.
func (d *decoder) reset() error {
	r := d.r
	if d.kvc != nil && d.rounds == 0 {
		d.kvc.Reset()
	} else if err := d.attach(d.first, r.Seq.Prefix); err != nil {
		return err
	}
	d.pre, d.start, d.rounds = d.first, r.Seq.Prefix, 0
	d.carried = make([]int64, len(d.first))
	d.held = 0
	for i, p := range d.first {
		d.carried[i] = summaryBits(p, d.firstBits[i], d.slot)
		d.held += d.firstBits[i]
	}
	d.peak = d.held
	return nil
}

// attach makes a cache of pre standing for the first n positions and a run
// over it.
func (d *decoder) attach(pre []kvcache.Prefix, n int) error {
	r := d.r
	kvc, err := kvcache.NewCompressed(r.shape, n, r.capacity(), pre)
	if err != nil {
		return fmt.Errorf("eval: %s at ratio %g: %w", d.method, d.p.Ratio, err)
	}
	var observe kvcache.Observer
	if d.every > 0 {
		dim, kvDim, n0 := r.shape.Dim(), r.shape.KVDim(), r.Seq.Prefix
		observe = func(l, pos int, q, k, v, _ []float32) {
			i := pos - n0
			copy(d.q[l][i*dim:(i+1)*dim], q)
			copy(d.k[l][i*kvDim:(i+1)*kvDim], k)
			copy(d.v[l][i*kvDim:(i+1)*kvDim], v)
		}
	}
	d.kvc, d.run = kvc, r.LM.NewRun(kvc, observe)
	return nil
}

// feed runs tokens at positions pos, pos+1, ..., calling each with every
// position's logits, re-compressing the cache every K positions.
func (d *decoder) feed(tokens []int, pos int, each func(pos int, logits []float32) error) error {
	for i := 0; i < len(tokens); {
		if err := d.due(pos + i); err != nil {
			return err
		}
		n := len(tokens) - i
		if d.every > 0 {
			n = min(n, d.start+d.every-(pos+i))
		}
		if err := forwardAll(d.run, tokens[i:i+n], pos+i, each); err != nil {
			return err
		}
		d.grow(n)
		i += n
	}
	return nil
}

// step runs one token at pos and returns the next token's logits.
func (d *decoder) step(token, pos int) ([]float32, error) {
	if err := d.due(pos); err != nil {
		return nil, err
	}
	lg := d.run.Forward(token, pos)
	d.grow(1)
	return lg, nil
}

// grow counts n more exact positions in the cache.
func (d *decoder) grow(n int) {
	d.held += int64(n) * d.rowBits
	d.peak = max(d.peak, d.held)
}

// due re-compresses the cache when K positions have run since the last
// compression and position pos is about to run.
func (d *decoder) due(pos int) error {
	if d.every == 0 || pos < d.start+d.every {
		return nil
	}
	return d.recompress(pos)
}

// recompress compresses every KV head's cache of positions [0, pos) into
// its first budget (see decoder).
func (d *decoder) recompress(pos int) error {
	r, sh := d.r, d.r.shape
	hs, gs := sh.HeadSize, sh.Heads/sh.KVHeads
	n0 := r.Seq.Prefix
	next := make([]kvcache.Prefix, len(d.pre))
	carried := make([]int64, len(d.pre))
	var held int64
	slot := d.slot
	for l := 0; l < sh.Layers; l++ {
		for kv := 0; kv < sh.KVHeads; kv++ {
			i := l*sh.KVHeads + kv
			old := d.pre[i]
			free := old.Biased // rows without a bias
			rows := free + pos - d.start
			slots := (d.budget[i] - d.carried[i]) / slot
			if slots < 1 {
				return &noRoomError{pos: pos, layer: l, kv: kv}
			}
			s := &sample.Sample{L: 1, H: gs, HKV: 1, N: rows + 1, D: hs,
				Q: make([]float32, gs*(rows+1)*hs), K: make([]float32, (rows+1)*hs), V: make([]float32, (rows+1)*hs),
				Meta: sample.Meta{Prefix: rows, Scale: r.Sample.Scale()}}
			copy(s.K, old.Keys[:free*hs])
			copy(s.V, old.Values[:free*hs])
			kvDim := sh.KVDim()
			for t := d.start; t < pos; t++ {
				src := (t-n0)*kvDim + kv*hs
				dst := (free + t - d.start) * hs
				copy(s.K[dst:dst+hs], d.k[l][src:src+hs])
				copy(s.V[dst:dst+hs], d.v[l][src:src+hs])
			}
			// The probe position (unused by any method) repeats the last row.
			copy(s.K[rows*hs:], s.K[(rows-1)*hs:rows*hs])
			copy(s.V[rows*hs:], s.V[(rows-1)*hs:rows*hs])
			w := r.Model.Opt.Calib
			if w == 0 {
				w = min(128, rows/2)
			}
			w = max(1, min(w, rows, pos))
			for j := 0; j < gs; j++ {
				h := kv*gs + j
				dst := s.Q[j*(rows+1)*hs:]
				for c := 0; c <= w; c++ {
					t := pos - w + c // the query of position t; c = w repeats the last for the probe
					if c == w {
						t = pos - 1
					}
					var q []float32
					if t < n0 {
						q = r.Sample.QHead(l, h)[t*hs : (t+1)*hs]
					} else {
						o := (t-n0)*sh.Dim() + h*hs
						q = d.q[l][o : o+hs]
					}
					copy(dst[(rows-w+c)*hs:(rows-w+c+1)*hs], q)
				}
			}
			opt := r.Model.Opt
			opt.Accel, opt.Calib = nil, w
			g, err := core.Analyze(s, 0, 0, opt)
			if err != nil {
				return fmt.Errorf("eval: %s, re-compression at position %d, layer %d KV head %d: %w", d.method, pos, l, kv, err)
			}
			q := d.params[i]
			q.Ratio = min(1, float64(slots)/float64(rows))
			c, err := g.Compress(d.method, q)
			if err != nil {
				return fmt.Errorf("eval: %s, re-compression at position %d, layer %d KV head %d: %w", d.method, pos, l, kv, err)
			}
			p := PrefixOf(g, c)
			carried[i] = d.carried[i] + summaryBits(p, c.Bits, slot)
			if old.Bias != nil {
				// Carried summaries follow the new rows, keeping their biases.
				p.Keys = append(p.Keys, old.Keys[free*hs:]...)
				p.Values = append(p.Values, old.Values[free*hs:]...)
				if p.Bias == nil {
					p.Biased = len(p.Keys)/hs - len(old.Bias)
				}
				p.Bias = append(p.Bias, old.Bias...)
			}
			if b := c.Bits + d.carried[i]; b > d.budget[i] {
				return fmt.Errorf("eval: %s: internal error: re-compression at position %d, layer %d KV head %d holds %d bits over its budget of %d", d.method, pos, l, kv, b, d.budget[i])
			}
			held += c.Bits + d.carried[i]
			next[i] = p
		}
	}
	if err := d.attach(next, pos); err != nil {
		return err
	}
	d.pre, d.carried, d.start, d.held = next, carried, pos, held
	d.rounds++
	return nil
}

// summaryBits is the memory of the summary rows (those with a logit bias)
// of a KV head's prefix p whose rows take bits in all: what is not its
// exact rows, slot bits each. A prefix without a bias has none.
func summaryBits(p kvcache.Prefix, bits, slot int64) int64 {
	if p.Bias == nil {
		return 0
	}
	return bits - int64(p.Biased)*slot
}
