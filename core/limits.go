package core

import (
	"errors"
	"fmt"
	"github.com/haeols/haeols/core/result"
	"math"

	"github.com/haeols/haeols/core/sample"
)

// ErrTooLarge is wrapped by the error of NewModel for a sample whose
// analysis would take absurd memory or work (see Options.MaxAnalysisBytes
// and MaxHeads).
var ErrTooLarge = errors.New("sample too large to analyse")

// ErrNonFinite is wrapped by the errors of an analysis or a metric that
// overflowed float32 (result.ErrNonFinite).
var ErrNonFinite = result.ErrNonFinite

// The default limit on the memory of a model's analyses
// (Options.MaxAnalysisBytes) is the larger of MinAnalysisBytes and
// AnalysisRatio times the sample's own size in float32: real samples (head
// dimension 64 or more) need 4 to 8 times their size, small heads (d = 8)
// about 20; a sample with a long context and a tiny head, whose analysis
// would dwarf it (N = 2^20, d = 1: 1.5 GiB for 12 MiB), is refused.
const (
	MinAnalysisBytes = 256 << 20
	AnalysisRatio    = 32
)

// MaxHeads is the most query heads (layers x heads) a model holds; a real
// model has a few thousand.
const MaxHeads = 1 << 16

// GroupBytes estimates the memory in bytes that the analysis of one KV head
// of s takes with opt: the calibration logits, attention and outputs, the
// probe logits, softmax and outputs.
func GroupBytes(s *sample.Sample, opt Options) int64 {
	n := float64(s.Prefix())
	t := float64(s.N) - n
	w := float64(opt.Calib)
	if w == 0 {
		w = min(128, math.Floor(n/2))
	}
	d := float64(s.D)
	// Every product is rounded on its own (float64(...)): no fused
	// multiply-add, as everywhere in core.
	var floats float64
	if !s.HasQKV() {
		floats = float64(w*n) + float64(2*float64(t*n)) + float64(3*n) + w
	} else {
		gs := float64(s.Group())
		rows := float64(gs * w)
		probes := float64(2*float64(t*n)) + float64(3*float64(t*d)) + float64(4*t)
		floats = float64(2*float64(rows*n)) + float64(2*float64(rows*d)) + float64(3*rows) + float64(3*n) + // calibration
			float64(gs*probes) + max(t, n) // probes of each query head
	}
	return clampBytes(4 * floats)
}

// WorkBytes estimates the most memory one job of a sweep takes while it
// runs, beyond the analyses: compressing one KV head of s with any method
// and evaluating it on one query head. The largest is lowrank's, whose
// float64 factorisations of K and V (copies, QR work, U factors,
// reconstructions) take about 14 float32s per element of one n x d matrix
// (measured: 55 bytes per element at n = 2^16, d = 128 and at n = 2^20,
// d = 8); a cache holds up to 2 n x d more, and an evaluation the probe
// logits and weights over the cache, 2 t x n.
func WorkBytes(s *sample.Sample) int64 {
	n, d := float64(s.Prefix()), float64(s.D)
	t := float64(s.N) - n
	if !s.HasQKV() {
		return clampBytes(4 * float64(2*float64(t*n)))
	}
	return clampBytes(4 * (float64(16*float64(n*d)) + float64(2*float64(t*n))))
}

// Limit is the memory limit NewModel applies to s with opt: the
// analyses of every KV head and the running jobs of a sweep must fit in
// it (0 or less: none).
func Limit(s *sample.Sample, opt Options) int64 {
	if opt.MaxAnalysisBytes == 0 {
		return DefaultMaxAnalysisBytes(s)
	}
	return opt.MaxAnalysisBytes
}

// MemoryBound is the most memory analysing s with opt should take in all
// (0: no bound): the sample in float32 and the limit (Limit) that its
// analyses and running jobs stay within. The command line gives it to the
// garbage collector as its soft limit.
func MemoryBound(s *sample.Sample, opt Options) int64 {
	limit := Limit(s, opt)
	if limit <= 0 {
		return 0
	}
	return limit + sampleBytes(s)
}

// jobs is how many of the workers a sweep asks for fit in the memory
// limit beside the analyses: at least 1 (NewModel refused the sample
// where one does not fit), at most workers.
func (m *Model) jobs(workers int) int {
	limit := Limit(m.Sample, m.Opt)
	if limit <= 0 {
		return workers
	}
	free := limit - AnalysisBytes(m.Sample, m.Opt)
	w := max(1, free/max(1, WorkBytes(m.Sample)))
	return int(min(int64(workers), w))
}

// AnalysisBytes estimates the memory the analyses of every KV head of s
// take together: a Model keeps each analysis it makes, and the command
// line's run, sweep and curve make them all.
func AnalysisBytes(s *sample.Sample, opt Options) int64 {
	return clampBytes(float64(GroupBytes(s, opt)) * float64(s.L) * float64(s.KVHeads()))
}

// DefaultMaxAnalysisBytes is the limit NewModel applies to s when
// Options.MaxAnalysisBytes is 0: the larger of MinAnalysisBytes and
// AnalysisRatio times the sample's size in float32.
func DefaultMaxAnalysisBytes(s *sample.Sample) int64 {
	return max(MinAnalysisBytes, AnalysisRatio*sampleBytes(s))
}

// sampleBytes is the size of the sample's tensors in float32.
func sampleBytes(s *sample.Sample) int64 {
	return 4 * int64(len(s.Q)+len(s.K)+len(s.V)+len(s.Attn))
}

func clampBytes(x float64) int64 {
	if x >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(x)
}

// checkLimits refuses a sample whose analysis is absurd: no probe queries,
// more than MaxHeads query heads, values that must overflow float32
// (CheckMagnitudes), or analyses over the memory limit.
func checkLimits(s *sample.Sample, mx *sample.Maxima, opt Options) error {
	if t := s.N - s.Prefix(); t < 1 {
		return fmt.Errorf("no probe queries: the prefix (metadata %q) is %d = N %d; the positions after it are the held-out probes", sample.KeyPrefix, s.Prefix(), s.N)
	}
	if w := opt.Calib; w != 0 && (w < 1 || w > s.Prefix()) {
		return fmt.Errorf("calibration queries %d outside [1, %d]", w, s.Prefix())
	}
	if heads := int64(s.L) * int64(s.H); heads > MaxHeads {
		return fmt.Errorf("%w: %d layers x %d heads = %d query heads, more than core.MaxHeads = %d", ErrTooLarge, s.L, s.H, heads, MaxHeads)
	}
	if err := checkMagnitudes(s, mx); err != nil {
		return err
	}
	limit, how := Limit(s, opt), "the limit set"
	if opt.MaxAnalysisBytes == 0 {
		how = fmt.Sprintf("the default limit, the larger of %s and %d x the sample's %s", mib(MinAnalysisBytes), AnalysisRatio, mib(sampleBytes(s)))
	}
	if limit > 0 {
		if b := AnalysisBytes(s, opt) + WorkBytes(s); b > limit {
			return fmt.Errorf("%w: analysing its %d KV head(s) (N=%d, d=%d, %d query head(s) per KV head) and compressing one takes about %s, more than %s, %s (Options.MaxAnalysisBytes)",
				ErrTooLarge, s.L*s.KVHeads(), s.N, s.D, s.Group(), mib(b), mib(limit), how)
		}
	}
	return nil
}

// CheckMagnitudes refuses a q/k/v sample whose values are so large that the
// analysis would overflow float32 whatever it does: for some layer and KV
// head, the largest |q| x |k| x d x scale (a bound on the logits) or the
// largest |v| x N (a bound on the attention sums) beyond the float32 range.
// Real activations are many orders of magnitude below (|q|, |k| ~ 1e19 or
// |v| ~ 1e32 would be needed), so only broken or hostile samples are
// refused, before anything is analysed. NewModel calls it; the error wraps
// ErrNonFinite and names the layer and the head.
func CheckMagnitudes(s *sample.Sample) error {
	if !s.HasQKV() {
		return nil
	}
	mx := &sample.Maxima{Q: make([]uint32, s.L*s.H), K: make([]uint32, s.L*s.HKV), V: make([]uint32, s.L*s.HKV)}
	for l := 0; l < s.L; l++ {
		for h := 0; h < s.H; h++ {
			mx.Q[l*s.H+h] = sample.MaxMag(s.QHead(l, h))
		}
		for kv := 0; kv < s.HKV; kv++ {
			mx.K[l*s.HKV+kv], mx.V[l*s.HKV+kv] = sample.MaxMag(s.KHead(l, kv)), sample.MaxMag(s.VHead(l, kv))
		}
	}
	return checkMagnitudes(s, mx)
}

// checkMagnitudes is CheckMagnitudes with the heads' largest magnitudes
// given (from sample.ValidateMaxima; nil for an attention-only sample).
func checkMagnitudes(s *sample.Sample, mx *sample.Maxima) error {
	if !s.HasQKV() || mx == nil {
		return nil
	}
	scale := s.Scale()
	for l := 0; l < s.L; l++ {
		for kv := 0; kv < s.HKV; kv++ {
			k, v := magnitude(mx.K[l*s.HKV+kv]), magnitude(mx.V[l*s.HKV+kv])
			if v*float64(s.N) > math.MaxFloat32 {
				return fmt.Errorf("%w: layer %d KV head %d: |v| up to %.3g over N=%d positions overflows the float32 attention outputs; the sample's values are too large", ErrNonFinite, l, kv, v, s.N)
			}
			for i := 0; i < s.Group(); i++ {
				h := kv*s.Group() + i
				q := magnitude(mx.Q[l*s.H+h])
				if q*k*float64(s.D)*scale > math.MaxFloat32 {
					return fmt.Errorf("%w: layer %d head %d: |q| up to %.3g and |k| up to %.3g overflow the float32 attention logits (d=%d, scale %.3g); the sample's values are too large", ErrNonFinite, l, h, q, k, s.D, scale)
				}
			}
		}
	}
	return nil
}

// magnitude is the number whose bits without the sign are m (a MaxMag).
func magnitude(m uint32) float64 { return float64(math.Float32frombits(m)) }

// mib formats a byte count in MiB.
func mib(b int64) string { return fmt.Sprintf("%d MiB", (b+1<<20-1)>>20) }

// checkFinite returns an error wrapping ErrNonFinite naming what if x holds
// a NaN or an infinity.
func checkFinite(what string, x []float32) error {
	if i := sample.FirstNonFinite(x); i >= 0 {
		return fmt.Errorf("%w: %s overflow float32 (%v at index %d); the sample's values are too large for float32 arithmetic", ErrNonFinite, what, x[i], i)
	}
	return nil
}
