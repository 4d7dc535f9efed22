package core

import (
	"fmt"
	"math"
)

// BitsPerNumber is the width at which the full cache, exact tokens, summary
// factors, biases and quantization scales are counted (HAE-OLS.md §2).
const BitsPerNumber = 16

// Budget is the memory budget of HAE-OLS.md §2 for one KV head: T slots of
// one exact token (2d numbers at 16 bits) each, out of the n of the full
// prefix cache, with the always-kept sinks and recent window shrunk (recent
// first) to fit. An attention-only sample has no head dim and counts in
// slots: its budgets use D = 1.
type Budget struct {
	N, D     int     // prefix length and head dim
	Ratio    float64 // asked ratio rho
	Slots    int     // T = floor(rho * n)
	SlotBits int64   // bits of one exact token: 2d * 16
	FullBits int64   // bits of the full prefix cache: n * 2d * 16
	Sinks    int     // always-kept first tokens, after shrinking
	Recent   int     // always-kept last tokens, after shrinking
}

// NewBudget returns the budget for a prefix of n tokens of head dim d at
// ratio rho with the asked sinks and recent window.
func NewBudget(n, d int, rho float64, sinks, recent int) (Budget, error) {
	if n <= 0 || d <= 0 {
		return Budget{}, fmt.Errorf("budget: bad shape n=%d d=%d", n, d)
	}
	if !(rho > 0 && rho <= 1) {
		return Budget{}, fmt.Errorf("budget: ratio %v outside (0, 1]", rho)
	}
	if sinks < 0 || recent < 0 {
		return Budget{}, fmt.Errorf("budget: negative sinks %d or recent %d", sinks, recent)
	}
	// The small epsilon keeps floor(0.7*1000) at 700 despite rounding.
	t := int(math.Floor(float64(rho*float64(n)) + 1e-9))
	t = min(t, n)
	s := min(sinks, t, n)
	r := min(recent, t-s, n-s)
	slot := int64(2*d) * BitsPerNumber
	return Budget{N: n, D: d, Ratio: rho, Slots: t, SlotBits: slot, FullBits: int64(n) * slot, Sinks: s, Recent: r}, nil
}

// Bits is the memory the budget allows, in bits.
func (b Budget) Bits() int64 { return int64(b.Slots) * b.SlotBits }

// Free is the number of slots left after the sinks and the recent window.
func (b Budget) Free() int { return b.Slots - b.Sinks - b.Recent }

// Candidates returns the positions that are neither sinks nor recent:
// [Sinks, N-Recent).
func (b Budget) Candidates() (lo, hi int) { return b.Sinks, b.N - b.Recent }

// SlotsFor returns how many slots hold the given number of 16-bit numbers,
// rounded up.
func (b Budget) SlotsFor(numbers int64) int {
	per := int64(2 * b.D)
	return int((numbers + per - 1) / per)
}
