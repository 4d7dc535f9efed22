package worker

import (
	"sync"
	"time"

	"github.com/haeols/haeols/wire"
)

// item is one request waiting in the queue, with its binary buffers.
type item struct {
	req  wire.Request
	bufs map[string][]byte
	at   time.Time // when it was pushed
	lag  float64   // ms from the page's sending it to its push (0: unknown)
}

// Queue holds the requests that arrived and not yet started. A newer
// request of an Op replaces a queued older one of the same Op (the older one
// is dropped without an answer), and a stop (wire.OpStop) the queued grids
// and curves. Loads and compute switches are barriers
// (wire.Barrier): requests that came after one wait for it; among the requests before the first load, heads
// go first, then curves, then grids.
type Queue struct {
	mu    sync.Mutex
	items []item
	wake  chan struct{}
	head  time.Time // when the latest head request arrived
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{wake: make(chan struct{}, 1)} }

// Push adds a request, dropping a queued older one of the same Op.
func (q *Queue) Push(req wire.Request, bufs map[string][]byte) { q.PushLate(req, bufs, 0) }

// PushLate is Push for a request that took lag ms to reach the queue
// (reported in Response.QueuedMs).
func (q *Queue) PushLate(req wire.Request, bufs map[string][]byte, lag float64) {
	q.mu.Lock()
	kept := q.items[:0]
	for _, it := range q.items {
		// A stop drops the queued grids and curves; a grid or a curve
		// after it is not stopped.
		stopped := req.Op == wire.OpStop && stoppable(it.req.Op) || stoppable(req.Op) && it.req.Op == wire.OpStop
		if it.req.Op != req.Op && !stopped {
			kept = append(kept, it)
		}
	}
	at := time.Now()
	q.items = append(kept, item{req, bufs, at, max(lag, 0)})
	if req.Op == wire.OpHead {
		q.head = at
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// stoppable reports whether wire.OpStop stops requests of op.
func stoppable(op string) bool { return op == wire.OpGrid || op == wire.OpCurve }

// priority orders the ops that may overtake each other (lower first).
func priority(op string) int {
	switch op {
	case wire.OpHead:
		return 0
	case wire.OpEval:
		return 1
	case wire.OpCurve:
		return 2
	case wire.OpGrid:
		return 3
	}
	return 4
}

// take removes and returns the next request to run, considering only ops
// accepted by ok; false when there is none.
func (q *Queue) take(ok func(op string) bool) (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	best := -1
	for i, it := range q.items {
		if wire.Barrier(it.req.Op) {
			if best < 0 && i == 0 && ok(it.req.Op) {
				best = 0
			}
			break
		}
		if ok(it.req.Op) && (best < 0 || priority(it.req.Op) < priority(q.items[best].req.Op)) {
			best = i
		}
	}
	if best < 0 {
		return item{}, false
	}
	it := q.items[best]
	q.items = append(q.items[:best], q.items[best+1:]...)
	return it, true
}

// HeavyDefer is how long after a head request the worker waits before it
// starts or continues a grid or a curve: while a user scrubs, head requests
// follow each other faster than that, and each is answered at once instead
// of waiting behind a KV head of grid work (which cannot be interrupted).
const HeavyDefer = 100 * time.Millisecond

// deferHeavy returns how long to hold back grid and curve work: the rest
// of HeavyDefer after the latest head request, or 0.
func (q *Queue) deferHeavy() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return max(0, HeavyDefer-time.Since(q.head))
}

// wait blocks until a request arrives or d has passed.
func (q *Queue) wait(d time.Duration) { waitOn(q.wake, d) }

// waitOn blocks until wake signals or d has passed.
func waitOn(wake <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	}
}

// Next blocks until a request is queued and returns the next one to run.
func (q *Queue) Next() item {
	for {
		if it, ok := q.take(func(string) bool { return true }); ok {
			return it
		}
		<-q.wake
	}
}

// TakeHead returns a queued head request that may run now (none is behind
// a load), if any.
func (q *Queue) TakeHead() (item, bool) {
	return q.take(func(op string) bool { return op == wire.OpHead })
}

// Queued returns the queued request of op, if any.
func (q *Queue) Queued(op string) (wire.Request, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range q.items {
		if it.req.Op == op {
			return it.req, true
		}
	}
	return wire.Request{}, false
}

// Len is the number of queued requests.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Supersedes reports whether a queued request replaces a running one of
// op: a newer request of the same op, a load, or, for a grid or a curve,
// a stop.
func (q *Queue) Supersedes(op string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range q.items {
		stop := it.req.Op == wire.OpStop && stoppable(op)
		if it.req.Op == op || wire.Barrier(it.req.Op) || stop {
			return true
		}
	}
	return false
}

// Worker runs queued requests on an Engine, one at a time.
type Worker struct {
	E     *Engine
	Q     *Queue
	Emit  Emit
	Yield func() // lets the host deliver new messages (nil: no-op)

	climbing bool // Loop climbed the ladder since the last OpLadderDone
}

// ScrubReach is how far from the focus the ladder climbs while a person
// scrubs (HeavyDefer after a head request): the steps a drag reaches next.
// The rest of the ladder waits for scrubbing to pause, as grid and curve
// work does: climbing it during a drag takes the cores the pages need to
// show the moves.
const ScrubReach = 2

// Loop runs requests forever. Head requests and end-to-end evaluations
// run as they come; grid and curve work waits until scrubbing pauses
// (HeavyDefer after the latest head request). Whenever no request may run
// it climbs the focus's ladder (Engine.Climb; while scrubbing, only
// ScrubReach steps either way), one step at a time, yielding in between so
// that a new request is seen at once, and says OpLadderDone when the
// ladder is done.
func (w *Worker) Loop() {
	for {
		d := w.Q.deferHeavy()
		it, ok := w.Q.take(func(op string) bool {
			return op == wire.OpHead || op == wire.OpEval || wire.Barrier(op) || d == 0
		})
		if !ok {
			reach := 0
			if d > 0 {
				reach = ScrubReach
			}
			if w.E.Climb(reach) {
				w.climbing = true
				if w.Yield != nil {
					w.Yield()
				}
				continue
			}
			if d > 0 {
				w.Q.wait(d) // the rest waits for scrubbing to pause
				continue
			}
			if w.climbing {
				w.climbing = false
				w.Emit(wire.Response{Op: wire.OpLadderDone, Done: true}, nil)
			}
			it = w.Q.Next()
		}
		if it.req.Op == wire.OpHead && w.E.focus == nil && w.E.Pool != nil {
			// The page sends a grid right behind the first head after a
			// load: let it arrive, and have the helpers compute their
			// share while this worker answers the head.
			if w.Yield != nil {
				w.Yield()
			}
			if g, ok := w.Q.Queued(wire.OpGrid); ok {
				w.E.Prestart(g)
			}
		}
		w.run(it)
	}
}

// run answers one request; long requests check between units of work for
// urgent head requests (answered at once) and for being superseded.
func (w *Worker) run(it item) {
	op := it.req.Op
	start := time.Now()
	var queued float64
	if !it.at.IsZero() {
		queued = it.lag + float64(start.Sub(it.at).Microseconds())/1000
	}
	emit := func(r wire.Response, bufs map[string][]byte) {
		r.ComputeMs = float64(time.Since(start).Microseconds()) / 1000
		r.QueuedMs = queued
		w.Emit(r, bufs)
	}
	w.E.Handle(it.req, it.bufs, emit, func() bool {
		if w.Yield != nil {
			w.Yield()
		}
		if op == wire.OpHead {
			return w.Q.Supersedes(op)
		}
		if op == wire.OpEval {
			// Between methods: the heads asked meanwhile, then on unless
			// a newer eval came.
			for {
				h, ok := w.Q.TakeHead()
				if !ok {
					break
				}
				w.run(h)
			}
			return w.Q.Supersedes(op)
		}
		for {
			for {
				h, ok := w.Q.TakeHead()
				if !ok {
					break
				}
				w.run(h)
			}
			if w.Q.Supersedes(op) {
				return true
			}
			d := w.Q.deferHeavy()
			if d <= 0 {
				return false
			}
			w.Q.wait(d)
		}
	})
}
