package sample

import (
	"bytes"
	"encoding/binary"
	"math"
	"sync"

	"github.com/haeols/haeols/core/half"
)

// DecodeLazy is Decode, except that a safetensors file's q, k and v in F16
// or BF16 are widened to float32 one KV head at a time: the query heads
// that share it, its keys and its values, when QHead, KHead or VHead
// first asks for one of them, rather than all before it returns. A viewer
// that shows one head first then waits for the widening of that head's
// KV head only (an eighth of the 4K sample of docs/PERFORMANCE.md), and a
// worker that analyses some of the KV heads widens only those.
//
// The sample is checked as Decode checks it: the shapes, the metadata,
// and every value finite (from the file's bits, which order as the
// widened values' magnitudes do: the largest magnitude of each head, see
// ValidateMaxima, comes from them too). A file with a value that is not
// finite is widened whole and gives Decode's error; any other format or
// dtype is decoded as Decode does.
//
// Unlike Decode, DecodeLazy keeps data until every KV head was widened:
// the caller must not change it. Code that reads the sample's Q, K or V
// slices directly rather than through QHead, KHead and VHead calls Widen
// first (WriteSafetensors does). Validate and ValidateMaxima of a lazy
// sample check the file's values, not changes made to the widened
// slices since.
func DecodeLazy(name string, data []byte) (*Sample, error) {
	return decode(name, bytes.NewReader(data), int64(len(data)), data, true)
}

// lazyQKV is the part of a sample left to widen (DecodeLazy).
type lazyQKV struct {
	once []sync.Once // per KV head, l*HKV+kv

	mu      sync.Mutex
	q, k, v *raw // nil once every KV head was widened
	left    int  // KV heads not widened yet

	maxOnce sync.Once
	max     *Maxima // from the file's bits; nil if one is not finite
}

// lazyFits reports whether q, k and v (no attn) can be widened lazily:
// in memory, whole, and 16-bit floats, whose bits give the heads' largest
// magnitudes without widening them.
func lazyFits(q, k, v, attn *raw) bool {
	if q == nil || attn != nil {
		return false
	}
	for _, t := range []*raw{q, k, v} {
		if (t.dt.name != "F16" && t.dt.name != "BF16") || t.dt.bigEndian || len(t.mem) != t.n*t.dt.size {
			return false
		}
	}
	return true
}

func newLazy(s *Sample, q, k, v *raw) *lazyQKV {
	n := s.L * s.HKV
	return &lazyQKV{once: make([]sync.Once, n), q: q, k: k, v: v, left: n}
}

// Widen widens every KV head of a lazy sample (DecodeLazy) not widened
// yet; for any other sample it does nothing.
func (s *Sample) Widen() {
	if s.lazy == nil {
		return
	}
	for l := 0; l < s.L; l++ {
		for kv := 0; kv < s.HKV; kv++ {
			s.widen(l, kv)
		}
	}
}

// widen widens KV head kv of layer l of a lazy sample once: the query
// heads that share it, its keys and its values.
func (s *Sample) widen(l, kv int) {
	z := s.lazy
	if z == nil {
		return
	}
	g := l*s.HKV + kv
	z.once[g].Do(func() {
		z.mu.Lock()
		q, k, v := z.q, z.k, z.v
		z.mu.Unlock()
		per, hd := s.H/s.HKV, s.N*s.D
		qo := (l*s.H + kv*per) * hd
		// convert fails only for F64, which is never lazy.
		_ = q.widenInto(s.Q[qo:qo+per*hd], qo)
		_ = k.widenInto(s.K[g*hd:(g+1)*hd], g*hd)
		_ = v.widenInto(s.V[g*hd:(g+1)*hd], g*hd)
		z.mu.Lock()
		defer z.mu.Unlock()
		if z.left--; z.left == 0 {
			z.q, z.k, z.v = nil, nil, nil // the file's bytes are no longer needed
		}
	})
}

// widenInto widens the len(dst) elements of t's in-memory bytes (mem)
// from flat index off into dst, a chunk at a time: many short calls,
// which V8 optimises early (see FirstNonFinite).
func (t *raw) widenInto(dst []float32, off int) error {
	per := chunk / t.dt.size
	for i := 0; i < len(dst); i += per {
		m := min(per, len(dst)-i)
		b := (off + i) * t.dt.size
		if err := t.convert(dst[i:i+m], t.mem[b:b+m*t.dt.size], off+i); err != nil {
			return err
		}
	}
	return nil
}

// maxima returns the largest magnitude of each head of a lazy sample,
// from the file's bits (computed once), or nil when a value is not
// finite.
func (z *lazyQKV) maxima(s *Sample) *Maxima {
	z.maxOnce.Do(func() {
		z.mu.Lock()
		q, k, v := z.q, z.k, z.v
		z.mu.Unlock()
		if q == nil {
			return // widened whole before it was asked: left to the caller
		}
		mx := &Maxima{Q: make([]uint32, s.L*s.H), K: make([]uint32, s.L*s.HKV), V: make([]uint32, s.L*s.HKV)}
		if q.rawMaxima(mx.Q) && k.rawMaxima(mx.K) && v.rawMaxima(mx.V) {
			z.max = mx
		}
	})
	return z.max
}

// rawMaxima sets heads[i] to the largest magnitude (as MaxMag gives it)
// of the i-th of len(heads) equal parts of t's 16-bit floats, from their
// bits, and reports whether every value is finite.
func (t *raw) rawMaxima(heads []uint32) bool {
	size := len(t.mem) / len(heads)
	for h := range heads {
		part := t.mem[h*size : (h+1)*size]
		var m uint16
		for off := 0; off < len(part); off += 2 * scanBlock {
			// A block at a time, as FirstNonFinite.
			m = max(m, maxMag16(part[off:min(off+2*scanBlock, len(part))]))
		}
		switch t.dt.name {
		case "F16":
			if m >= 0x7c00 {
				return false
			}
			heads[h] = math.Float32bits(half.F16ToF32(m))
		default: // BF16
			if m >= 0x7f80 {
				return false
			}
			heads[h] = uint32(m) << 16
		}
	}
	return true
}

// maxMag16 returns the largest of the little-endian 16-bit values in b
// (an even count of bytes) without their top bit: for float16 and
// bfloat16 numbers, the bits of the largest magnitude. Vector registers
// take what they can (maxMag16Vec), the loop the rest.
func maxMag16(b []byte) uint16 {
	m, i := maxMag16Vec(b)
	for ; i+1 < len(b); i += 2 {
		m = max(m, binary.LittleEndian.Uint16(b[i:])&0x7fff)
	}
	return m
}
