package gen

import (
	"encoding/json"
	"math"

	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/core/solve"
	"github.com/haeols/haeols/core/xmath"
)

// kind is the behaviour of one query head.
type kind int

const (
	kSink      kind = iota // massive attention to the first token
	kLocal                 // attention on the last few dozen tokens
	kDiffuse               // small queries, attention spread widely
	kRetrieval             // diffuse, except questions attend sharply to the needle
	kInduction             // attends to the token after the previous occurrence
)

var kindNames = [...]string{"sink", "local", "diffuse", "retrieval", "induction"}

func (k kind) String() string { return kindNames[k] }

// kindOf returns the kind of query head h in layer l: layer l uses layout row
// l*rows/L and head h uses entry h*8/H of it (so fewer heads take every
// other entry). Induction heads need a previous-token head below them, so in
// layer 0 of a multi-layer model they become local heads.
func kindOf(layout [][8]kind, l, h, layers, heads int) kind {
	row := layout[l*len(layout)/layers]
	k := row[(h*8/heads)%8]
	if heads > 8 {
		k = row[h%8]
	}
	if k == kInduction && l == 0 && layers > 1 {
		k = kLocal
	}
	return k
}

// Model constants. Query and key vectors are built before RoPE from named
// features of a latent residual stream; see doc.go for the story.
const (
	latentDim  = 24   // E, the width of token, topic and context embeddings
	ctxDecay   = 0.85 // exponential moving average of past embeddings
	indGamma   = 0.8  // weight of the token two back in induction codes
	sinkKey    = 4.0  // size of the BOS key along the sink channel
	numKey     = 4.0  // size of a needle digit key along the number channel
	posKey     = 3.0  // size of the shared positional key component
	indKeyDim  = 1.2  // size of the induction codes in keys, per code channel
	keyNoise   = 0.3
	queryNoise = 0.25
	valueNoise = 0.35
	bosValue   = 0.1  // BOS values are small (sinks are no-ops)
	indLogit   = 20   // logit of an induction head at a full (two-token) match
	fastTheta  = 0.01 // RoPE pairs turning at least this much per token carry position
)

// headParams are the gains of one query head, in logit units: roughly the
// logit (scale * q.k) each feature contributes at a perfect match.
type headParams struct {
	content float64 // topical content matching
	ind     float64 // induction: the token after the previous occurrence
	pos     float64 // positional (recency) kernel at its peak
	width   float64 // recency width in tokens
	shift   float64 // positional kernel centre (0: the query itself, 1: previous token)
	sink    float64 // the first token
	num     float64 // needle digits, for queries that ask for them
}

// paramsFor draws the gains of a head of kind k. The sink and recency gains
// grow with ln(n), the log of the number of cached keys, so that one sink
// (or a few recent tokens) keeps the same share of attention against a
// longer crowd.
func paramsFor(k kind, n int, r *rng) headParams {
	j := func(x float64) float64 { return float64(x * r.uniform(0.85, 1.2)) }
	ln := xmath.Log(float64(n))
	switch k {
	case kSink:
		return headParams{content: j(1.2), pos: j(2), width: j(20), sink: j(5.5) + ln}
	case kLocal:
		hp := headParams{content: j(1.5), pos: j(2.5) + ln, width: j(12), sink: j(2)}
		if r.float() < 0.3 {
			hp.shift = 1 // a previous-token head
		}
		return hp
	case kDiffuse:
		return headParams{content: j(2.5), pos: j(0.5), width: j(60), sink: j(1)}
	case kRetrieval:
		return headParams{content: j(2), pos: j(1), width: j(40), sink: j(2), num: j(11)}
	default: // kInduction
		return headParams{content: j(0.6), ind: j(indLogit), pos: j(0.5), width: j(30), sink: j(4.5)}
	}
}

// generate builds the sample; c has been validated.
func generate(c Config, p *presetDef) *sample.Sample {
	L, H, G, N, D := c.Layers, c.Heads, c.KVHeads, c.Tokens, c.Dim
	n := N - c.Probes
	F := D / 2

	// The text.
	depths := p.depths
	if len(depths) < c.Needles {
		depths = make([]float64, c.Needles)
		for i := range depths {
			depths[i] = 0.1 + float64(0.75*float64(i+1))/float64(c.Needles+1)
		}
	}
	hint := p.hint
	if c.Needles == 0 || n < 256 {
		hint = 0 // no needle, or no room for a reminder in the calibration window
	}
	tx := buildText(textPlan{n: n, total: N, needles: c.Needles, depths: depths, hint: hint,
		repeats: p.repeats, question: c.Needles > 0}, newRNG(c.Seed, 1))

	// Latent residual stream: token, topic and context embeddings.
	voc := newVocab()
	er := newRNG(c.Seed, 2)
	emb := make([][]float64, len(voc.words))
	for i := range emb {
		emb[i] = unitGauss(er, latentDim)
	}
	top := make([][]float64, len(topicWords))
	for i := range top {
		top[i] = unitGauss(er, latentDim)
	}
	E := latentDim
	cKey := make([]float64, N*E) // content seen by keys
	cQry := make([]float64, N*E) // content seen by queries
	vLat := make([]float64, N*E) // value latent
	ctx := make([]float64, E)    // running context
	for i := 0; i < N; i++ {
		e := emb[tx.tok[i]]
		var tp []float64
		if tx.seg[i] >= 0 {
			tp = top[tx.seg[i]]
		}
		for d := 0; d < E; d++ {
			ctx[d] = float64(ctxDecay*ctx[d]) + float64((1-ctxDecay)*e[d])
		}
		ck, cq, vl := cKey[i*E:i*E+E], cQry[i*E:i*E+E], vLat[i*E:i*E+E]
		for d := 0; d < E; d++ {
			t := 0.0
			if tp != nil {
				t = tp[d]
			}
			ck[d] = float64(0.6*e[d]) + float64(0.8*t)
			cq[d] = float64(0.35*e[d]) + float64(0.7*t) + float64(1.5*ctx[d])
			vl[d] = float64(0.7*e[d]) + float64(0.5*t) + float64(1.2*ctx[d])
		}
		normalize(ck)
		normalize(cq)
	}

	// RoPE tables: angle pos*theta_p, theta_p = base^(-2p/D).
	theta := make([]float64, F)
	lb := xmath.Log(c.RopeBase)
	for q := 0; q < F; q++ {
		theta[q] = xmath.Exp(-float64(float64(2*q)/float64(D)) * lb)
	}
	cosT := make([]float64, N*F)
	sinT := make([]float64, N*F)
	for i := 0; i < N; i++ {
		for q := 0; q < F; q++ {
			sinT[i*F+q], cosT[i*F+q] = xmath.Sincos(float64(float64(i) * theta[q]))
		}
	}

	// Channel roles (see doc.go). Pair p = channels (2p, 2p+1) turns at
	// frequency theta_p. The pairs that RoPE barely turns over half the
	// prefix (the "slow band") carry what must match at long range: the
	// sink and number channels, the outliers and the induction codes. The
	// faster pairs carry the positional (recency) feature and most of the
	// topical content.
	slow := F - 3
	for slow > F/2 && float64(theta[slow-1]*float64(n/2)) <= 1 {
		slow--
	}
	// The fast band: pairs turning at least fastTheta per token. They carry
	// the positional feature; content stays small there, because a key
	// component that is common to many tokens (a topic) would, through
	// RoPE, add a spurious positional pattern to every positional query.
	fast := 0
	for fast < slow && theta[fast] >= fastTheta {
		fast++
	}
	fast = max(fast, min(2, slow))
	sinkDim, numDim := 2*(F-1), 2*(F-2)
	// Two outlier channels, the halves of one slow pair, where every key
	// carries a large, nearly constant value (as real keys do; see KIVI,
	// Liu et al. 2024). A constant shifts all logits of a query alike, so
	// attention hardly sees it; per-token quantization does.
	outDims := [2]int{2*(F-3) + 1, 2 * (F - 3)}
	var codeDims []int
	for q := slow; q < F-3; q++ {
		codeDims = append(codeDims, 2*q, 2*q+1)
	}
	if len(codeDims) < 4 {
		// Short of slow pairs (small Dim or long prefix): borrow the
		// partners of the number and sink channels.
		codeDims = append(codeDims, numDim+1, sinkDim+1)
	}
	m := len(codeDims)
	indKey := indKeyDim * math.Sqrt(float64(m)) // code norm in keys
	// Two code books in the same channels: one for the token itself, one for
	// the token before it (as written by a previous-token head). Distinct
	// books keep "the previous token matches" from passing for a match.
	nv := len(voc.words)
	codes := codebook(newRNG(c.Seed, 5), 2*nv, m)

	s := &sample.Sample{L: L, H: H, HKV: G, N: N, D: D,
		Q: make([]float32, L*H*N*D), K: make([]float32, L*G*N*D), V: make([]float32, L*G*N*D)}
	kinds := make([][]string, L)

	pre := make([]float64, N*D) // pre-RoPE keys, then queries
	wc := make([]float64, D*E)
	wv := make([]float64, D*E)
	upos := make([]float64, D)
	qc := make([]float64, N*D) // content part of queries, shared by a group
	perm := make([]int, m)
	sign := make([]float64, m)
	for l := 0; l < L; l++ {
		kinds[l] = make([]string, H)
		for g := 0; g < G; g++ {
			r := newRNG(c.Seed, 3, uint64(l), uint64(g))
			// Content and value projections, content scaled per band.
			var sumRc2 float64
			for d := 0; d < D; d++ {
				pr := d / 2
				rc := 0.8
				switch {
				case pr >= slow:
					rc = 0.3
				case pr < fast:
					rc = 0.15
				}
				if d == sinkDim || d == numDim || d == outDims[0] || d == outDims[1] {
					rc = 0
				}
				sumRc2 += float64(rc * rc)
				for e := 0; e < E; e++ {
					wc[d*E+e] = float64(rc * r.norm())
					wv[d*E+e] = r.norm()
				}
			}
			// Induction codes: this head's placement of the code space.
			for i := range perm {
				perm[i] = codeDims[i]
			}
			r.r.Shuffle(m, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
			for i := range sign {
				sign[i] = 1
				if r.float() < 0.5 {
					sign[i] = -1
				}
			}
			// Positional vector: equal amplitude on every fast pair,
			// random phase.
			for d := range upos {
				upos[d] = 0
			}
			for q := 0; q < fast; q++ {
				sn, cs := xmath.Sincos(r.uniform(0, 2*math.Pi))
				a := 1 / math.Sqrt(float64(fast))
				upos[2*q], upos[2*q+1] = float64(a*cs), float64(a*sn)
			}
			outl := [2]float64{r.uniform(5, 8), r.uniform(2.5, 4)}
			for o := range outl {
				if r.float() < 0.5 {
					outl[o] = -outl[o]
				}
			}

			// Keys and values, a row per call (see keyRow).
			ind := induction{perm: perm, sign: sign, codes: codes, nv: nv, m: m}
			kr := keyRows{wc: wc, wv: wv, upos: upos, kc: make([]float64, D), vc: make([]float64, D), ind: ind, indKey: indKey, outl: outl, sinkDim: sinkDim, numDim: numDim, outDims: outDims, r: r}
			kh, vh := s.KHead(l, g), s.VHead(l, g)
			for j := 0; j < N; j++ {
				kr.row(j, &tx, cKey[j*E:j*E+E], vLat[j*E:j*E+E], pre[j*D:j*D+D], vh[j*D:j*D+D])
			}
			rope(kh, pre, cosT, sinT, N, D)

			// The content part of the queries, shared by the group.
			for i := 0; i < N; i++ {
				project(qc[i*D:i*D+D], wc, cQry[i*E:i*E+E])
			}

			per := H / G
			for h := g * per; h < (g+1)*per; h++ {
				k := kindOf(p.layout, l, h, L, H)
				kinds[l][h] = k.String()
				hr := newRNG(c.Seed, 4, uint64(l), uint64(h))
				hp := paramsFor(k, n, hr)
				// Logit units to query multipliers.
				sq := math.Sqrt(float64(D))
				sinkQ := float64(hp.sink * sq / sinkKey)
				numQ := float64(hp.num * sq / numKey)
				indQ := float64(hp.ind * sq / (indKey * (1 + indGamma*indGamma)))
				// (The floor keeps small heads, whose content channels
				// are few, from blowing up their content queries.)
				contQ := float64(hp.content * sq / max(sumRc2, float64(D)/8))
				// Positional query: per fast pair, weight theta*f(theta)
				// with f a Lorentzian cut at 1/width, so the logit decays
				// about as exp(-|i-j|/width) (the Fourier transform of a
				// Lorentzian), with the phase turned back by hp.shift
				// tokens so the kernel peaks at i-j = shift.
				var qpos [MaxDim]float64
				var wmax, wsum float64
				for q := 0; q < fast; q++ {
					x := float64(theta[q] * hp.width)
					wmax = max(wmax, theta[q]/(1+float64(x*x)))
				}
				for q := 0; q < fast; q++ {
					x := float64(theta[q] * hp.width)
					wsum += theta[q] / (1 + float64(x*x)) / wmax
				}
				// Pair amplitudes: key posKey/sqrt(fast), query
				// posQ*f*sqrt(fast), so the peak logit is hp.pos.
				posQ := float64(hp.pos * sq / (posKey * wsum) * float64(fast))
				for q := 0; q < fast; q++ {
					x := float64(theta[q] * hp.width)
					f := theta[q] / (1 + float64(x*x)) / wmax
					sn, cs := xmath.Sincos(float64(theta[q] * hp.shift))
					a, b := upos[2*q], upos[2*q+1]
					qpos[2*q] = float64(posQ * f * float64(float64(a*cs)+float64(b*sn)))
					qpos[2*q+1] = float64(posQ * f * float64(float64(b*cs)-float64(a*sn)))
				}
				qr := queryRows{contQ: contQ, qpos: &qpos, indQ: indQ, sinkQ: sinkQ, numQ: numQ, ind: ind,
					sinkDim: sinkDim, numDim: numDim, r: hr}
				for i := 0; i < N; i++ {
					qr.row(i, &tx, qc[i*D:i*D+D], pre[i*D:i*D+D])
				}
				rope(s.QHead(l, h), pre, cosT, sinT, N, D)
			}
		}
	}

	kj, _ := json.Marshal(kinds)
	s.Meta = sample.Meta{
		Model:        Model,
		Source:       c.source(),
		Description:  p.Description,
		Prefix:       n,
		Tokens:       tx.tokens(),
		Needles:      tx.needles,
		NeedleProbes: tx.probes,
		Extra:        map[string]string{"head_kinds": string(kj)},
	}
	return s
}

// The rows of keys, values and queries are made one per call of a small
// function, not in generate's own loops: a WebAssembly engine runs a
// function's first call in its baseline compiler and cannot move a running
// loop to the optimised code, so loops that run once in one long call
// stay in baseline code, while a function called a thousand times is
// optimised after its first few calls. The arithmetic is the same either
// way.

// keyRows makes the pre-RoPE keys and the values of one KV head, a
// position at a time (row).
type keyRows struct {
	wc, wv, upos []float64 // content and value projections (D x E), positional key
	kc, vc       []float64 // a row's projections wc ck and wv vl (D each, scratch)
	ind          induction
	indKey       float64
	outl         [2]float64 // the outlier channels' values
	sinkDim      int
	numDim       int
	outDims      [2]int
	r            *rng
}

// row writes the pre-RoPE key of position j into kp and its value into vrow,
// from the position's key content ck and value latent vl.
func (k *keyRows) row(j int, tx *text, ck, vl, kp []float64, vrow []float32) {
	project(k.kc, k.wc, ck)
	project(k.vc, k.wv, vl)
	for d := range kp {
		x := float64(posKey*k.upos[d]) + k.kc[d]
		kp[d] = x + float64(keyNoise*k.r.norm())
		vx := k.vc[d] + float64(valueNoise*k.r.norm())
		if j == 0 {
			vx = float64(bosValue * vx)
		}
		vrow[d] = float32(vx)
	}
	// Induction code of the key: tokens j-1 and j-2.
	if j >= 1 {
		k.ind.add(kp, 0, tx.tok[j-1], k.indKey)
	}
	if j >= 2 {
		k.ind.add(kp, 1, tx.tok[j-2], float64(k.indKey*indGamma))
	}
	if j == 0 {
		kp[k.sinkDim] += sinkKey
	}
	if tx.digit[j] {
		kp[k.numDim] += numKey
	}
	kp[k.outDims[0]] += k.outl[0]
	kp[k.outDims[1]] += k.outl[1]
}

// induction is one head's placement of the induction code books: code
// channel i of a token's code goes to channel perm[i] with sign sign[i].
type induction struct {
	perm  []int
	sign  []float64
	codes []float64 // the two code books (2 nv x m): the token's own, then the one before
	nv, m int
}

// add adds to x gain times the code of token tok in code book book (0 or
// 1), placed by the head.
func (c *induction) add(x []float64, book, tok int, gain float64) {
	o := (book*c.nv + tok) * c.m
	code := c.codes[o : o+c.m]
	for i, d := range c.perm {
		x[d] += float64(float64(gain*c.sign[i]) * code[i])
	}
}

// project writes w x into dst: w is len(dst) x len(x), row-major.
func project(dst, w, x []float64) { solve.Dots(dst, w, x) }

// queryRows makes the pre-RoPE queries of one query head, a position at a
// time (row).
type queryRows struct {
	contQ, indQ, sinkQ, numQ float64
	qpos                     *[MaxDim]float64
	ind                      induction
	sinkDim, numDim          int
	r                        *rng
}

// row writes the pre-RoPE query of position i into qp from its content part
// qc.
func (q *queryRows) row(i int, tx *text, qc, qp []float64) {
	for d := range qp {
		x := float64(q.contQ*qc[d]) + q.qpos[d]
		qp[d] = x + float64(queryNoise*q.r.norm())
	}
	if q.indQ != 0 {
		q.ind.add(qp, 0, tx.tok[i], q.indQ)
		if i >= 1 {
			q.ind.add(qp, 1, tx.tok[i-1], float64(q.indQ*indGamma))
		}
	}
	qp[q.sinkDim] += q.sinkQ
	if a := tx.ask[i]; a > 0 {
		qp[q.numDim] += float64(q.numQ * a)
	}
}

// rope writes the RoPE rotation of the N x D pre-rotation rows src into dst
// (float32): pair (2p, 2p+1) of row i turns by angle i*theta_p.
func rope(dst []float32, src, cosT, sinT []float64, N, D int) {
	F := D / 2
	for i := 0; i < N; i++ {
		for q := 0; q < F; q++ {
			c, s := cosT[i*F+q], sinT[i*F+q]
			x, y := src[i*D+2*q], src[i*D+2*q+1]
			dst[i*D+2*q] = float32(float64(x*c) - float64(y*s))
			dst[i*D+2*q+1] = float32(float64(x*s) + float64(y*c))
		}
	}
}

func normalize(x []float64) {
	n := math.Sqrt(solve.Dot(x, x))
	if n > 0 {
		for i := range x {
			x[i] /= n
		}
	}
}

func unitGauss(r *rng, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.norm()
	}
	normalize(x)
	return x
}

// codebook returns words unit code vectors of length m (row-major), chosen
// greedily to keep their largest pairwise cosine small: each word takes the
// best of a few random candidates. Low mutual coherence is what lets an
// induction head pick one previous occurrence out of a thousand tokens with
// only a few slow RoPE pairs to spare (random codes would collide).
func codebook(r *rng, words, m int) []float64 {
	const tries = 16
	out := make([]float64, words*m)
	cand := make([]float64, m)
	for w := 0; w < words; w++ {
		best := math.Inf(1)
		for t := 0; t < tries; t++ {
			for i := range cand {
				cand[i] = r.norm()
			}
			normalize(cand)
			worst := worstCos(cand, out, w, best)
			if worst < best {
				best = worst
				copy(out[w*m:w*m+m], cand)
			}
		}
	}
	return out
}

// worstCos returns the largest dot product of cand with the first w codes
// of out (rows of len(cand)), or a value at least best as soon as one
// reaches it (-Inf for w = 0). One call per candidate (see keyRows).
func worstCos(cand, out []float64, w int, best float64) float64 {
	m := len(cand)
	worst := math.Inf(-1)
	for v := 0; v < w && worst < best; v++ {
		worst = max(worst, solve.Dot(cand, out[v*m:v*m+m]))
	}
	return worst
}
