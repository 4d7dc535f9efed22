package core

import (
	"sync"
	"sync/atomic"

	"github.com/haeols/haeols/core/solve"
)

// scratch is the temporary memory of one Compress or Evaluate call: zeroed
// slices carved from buffers that are kept between calls (scratchPool), so
// that a slider move does not allocate, clear and collect its temporaries
// again. Nothing carved from a scratch may outlive the call that took it:
// a Cache and Metrics own their memory.
type scratch struct {
	f32  arena[float32]
	f64  arena[float64]
	ints arena[int]
	i32  arena[int32]
	u8   arena[uint8]
	nnls solve.NNLSWorkspace
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// lastScratch holds the scratch put back last, out of the pool: a
// sync.Pool drops what it holds at garbage collections, and a scratch made
// anew allocates and zeroes every buffer again, which brings the next
// collection sooner. One scratch serves a caller that compresses and
// evaluates one call at a time (the browser's worker); concurrent callers
// share the pool.
var lastScratch atomic.Pointer[scratch]

// getScratch returns an empty scratch; give it back with put.
func getScratch() *scratch {
	if sc := lastScratch.Swap(nil); sc != nil {
		return sc
	}
	return scratchPool.Get().(*scratch)
}

// put empties sc and returns it to the pool. The slices carved from it
// must no longer be used.
func (sc *scratch) put() {
	sc.f32.used, sc.f64.used, sc.ints.used, sc.i32.used, sc.u8.used = 0, 0, 0, 0, 0
	if old := lastScratch.Swap(sc); old != nil {
		scratchPool.Put(old)
	}
}

// arena hands out consecutive pieces of one buffer.
type arena[T any] struct {
	buf  []T
	used int
}

// minArena is the smallest buffer an arena allocates.
const minArena = 1 << 12

// take returns n zeroed elements. When the buffer is too small a larger one
// replaces it (the pieces already taken keep the old one), so after a few
// calls of the same shape every take is served from one buffer.
func (a *arena[T]) take(n int) []T {
	s := a.takeSet(n)
	clear(s)
	return s
}

// takeSet is take without the zeroing, for memory its caller sets in full
// before it reads any of it (the output of a kernel that sets every
// element, or of a loop over all of it): it may hold an earlier call's
// values.
func (a *arena[T]) takeSet(n int) []T {
	if a.used+n > len(a.buf) {
		a.buf = make([]T, max(2*len(a.buf), a.used+n, minArena))
		a.used = 0
	}
	s := a.buf[a.used : a.used+n : a.used+n]
	a.used += n
	return s
}
