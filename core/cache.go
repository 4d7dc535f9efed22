package core

import "github.com/haeols/haeols/core/result"

// Class is what a compression method did with one prefix token
// (result.Class).
type Class = result.Class

// Token classes (HAE-OLS.md §5).
const (
	Evicted    = result.Evicted
	Sink       = result.Sink
	Recent     = result.Recent
	Anchor     = result.Anchor
	Summarized = result.Summarized
	Approx     = result.Approx
)

// Stages are the numbers behind a compressed cache (result.Stages).
type Stages = result.Stages

// Cache is a compressed prefix cache of one KV head: a subset of the exact
// tokens plus C synthetic tokens (summaries, or approximate copies of tokens)
// whose logits get a per-token bias. Every query sees
// [Exact tokens; synthetic tokens] (and, for probe queries, the exact suffix).
type Cache struct {
	Method string
	Budget Budget
	// Exact lists the prefix positions kept exactly, ascending. All means
	// every prefix token is kept exactly (Exact is then nil).
	Exact []int32
	All   bool
	// C synthetic tokens: Keys and Values are C x d, Bias is C (nil: zero).
	C            int
	Keys, Values []float32
	Bias         []float32
	// Bits is the memory used, counted as in HAE-OLS.md §2.
	Bits int64
	// Class says what happened to each prefix token; Segment is the summary
	// each Summarized token went into (-1 otherwise).
	Class   []Class
	Segment []int32
	// Stages describes what the method did, with this head's numbers.
	Stages Stages
	// exactShare, when set (by HAE-OLS), is the exact tokens' share of the
	// group's calibration attention, which Evaluate uses for err_cal.
	exactShare *exactShare
	// calLogits, when set (by HAE-OLS), are the logits of the group's
	// calibration rows (all query heads) and the C keys, as kernel.Logits
	// computes them: Evaluate's calibration rows need not compute them.
	calLogits []float32
}

// exactShare is the exact prefix tokens' share of a group's calibration
// attention (A) and of its probe rows' softmax on the prefix (all heads' T
// rows stacked; nil for attention-only groups).
type exactShare struct {
	cal, probe *exactRows
}

// exactRows is, per attention row i, the sum over the exact prefix tokens
// of P[i,j] (z(i)) and of P[i,j] V[j,:] (y(k), k = i*D+c: rows x D), in
// float64. It holds the terms of those sums rather than the sums, so
// that a plan does not build two rows x D arrays that Evaluate reads
// once: the non-candidates' share (nonZ, nonY) plus the order's prefix
// sums at a chunk boundary (bz, by; both shared with the order's
// rowSums, which never change them) plus sign times the float32 sums of
// the tokens between the boundary and the anchors' end (z32, y32, owned).
type exactRows struct {
	nonZ, nonY, bz, by []float64
	sign               float64
	z32, y32           []float32
}

// z returns row i's exact share of the attention mass.
func (e *exactRows) z(i int) float64 {
	return e.nonZ[i] + (e.bz[i] + float64(e.sign*float64(e.z32[i])))
}

// y returns element k (row k/D, column k%D) of the exact share of the
// weighted values.
func (e *exactRows) y(k int) float64 {
	return e.nonY[k] + (e.by[k] + float64(e.sign*float64(e.y32[k])))
}

// Ratio is the memory used over the memory of the full prefix cache.
func (c *Cache) Ratio() float64 { return float64(c.Bits) / float64(c.Budget.FullBits) }

// newCache returns a cache for the budget with every token evicted.
func newCache(method string, b Budget) *Cache {
	c := &Cache{Method: method, Budget: b, Class: make([]Class, b.N), Segment: make([]int32, b.N)}
	for i := range c.Segment {
		c.Segment[i] = -1
	}
	return c
}

// keepExact marks the positions as exact with the given class and appends
// them to Exact (call finishExact once after the last call).
func (c *Cache) keepExact(pos []int32, cl Class) {
	for _, p := range pos {
		c.Class[p] = cl
	}
	c.Exact = append(c.Exact, pos...)
}

// finishExact puts Exact in position order (the positions whose class is
// exact: a scan of Class, not a sort), sets All when every token is exact,
// and counts the exact tokens' bits.
func (c *Cache) finishExact() {
	ex := c.Exact[:0]
	n := 0
	for j, cl := range c.Class {
		switch cl {
		case Sink:
			c.Stages.Sinks++
		case Recent:
			c.Stages.Recent++
		case Anchor:
			c.Stages.Anchors++
		default:
			continue
		}
		ex = append(ex, int32(j))
		n++
	}
	c.Exact = ex
	if n == c.Budget.N {
		c.All, c.Exact = true, nil
	}
	c.Stages.ExactBits = int64(n) * c.Budget.SlotBits
	c.Bits = c.Stages.ExactBits + c.Stages.SummaryBits
}
