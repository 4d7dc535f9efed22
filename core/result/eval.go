package result

// Eval is one compression method's end-to-end numbers on one sequence
// (HAE-OLS.md §8) as plain data: a record of `haeols eval -json` and what
// the web app's worker sends for What the model says. A method that has no
// numbers at the ratio says why in NA, and its numbers are NaN (null in
// JSON).
type Eval struct {
	Method string `json:"method"`
	NA     string `json:"na,omitempty"`
	// Used is the compressed caches' memory over the full prefix cache's.
	Used Num `json:"used"`
	// Peak is the most memory the cache held while continuing (compressed
	// rows and the exact new positions) over the full prefix cache's;
	// Rounds the re-compressions on the way (Params.Recompress).
	Peak   Num `json:"peak"`
	Rounds int `json:"rounds"`
	// KL is the mean and KLMax the largest KL(p_full || p_method) in nats
	// over the continuation's predictions; KLs has one per position.
	KL    Num `json:"kl"`
	KLMax Num `json:"kl_max"`
	// Agree is the share of positions whose most likely token is the full
	// cache's.
	Agree    Num `json:"agree"`
	PPLRatio Num `json:"ppl_ratio"`
	// Diverge is the first index where the free run Free differs from the
	// full cache's (its length when it never does).
	Diverge Num `json:"diverge"`
	// NeedleAcc is the share of answer spans Found.
	NeedleAcc Num    `json:"needle_acc"`
	Found     []bool `json:"found,omitempty"`
	KLs       []Num  `json:"kl_profile,omitempty"`
	// Top is the most likely token after each continued position
	// (teacher-forced).
	Top  []int `json:"top,omitempty"`
	Free []int `json:"free,omitempty"`
}
