package worker

import (
	"sync"
	"time"

	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/wire"
)

// Helper workers. A grid is one analysis and one compression per KV head,
// independent of each other; a worker alone computes them one after the
// other on one core. With a Pool, the worker hands a sample file it loaded
// to helpers, other workers running this package's Worker on their own
// copy of the sample, and each grid's KV heads are shared out: KV head
// number g (layer-major) goes to worker g mod (1 + helpers), the worker
// itself being 0, so that the same helper analyses the same KV heads at
// every ratio and keeps their analyses. The answers are the same bits
// whoever computes them (the same code on the same float32 data).
const (
	// MaxHelpers bounds the helper workers of a worker.
	MaxHelpers = 3
	// ShareMinBytes is the smallest sample file handed to helpers: a
	// smaller sample's grid takes a fraction of a second, less than
	// starting a helper, whose start would take the cores the first
	// answer needs.
	ShareMinBytes = 8 << 20
	// ShareMaxBytes bounds the sample bytes the helpers hold together
	// (each decodes its own copy, float16 to twice its bytes of float32).
	ShareMaxBytes = 256 << 20
	// helperPoll is how often a grid waiting for its helpers looks at
	// the queue (urgent head requests, a newer grid).
	helperPoll = 10 * time.Millisecond
	// helperStartWait bounds how long a share waits for helpers it
	// started to run before the worker decodes its own copy (see share).
	helperStartWait = time.Second
)

// Conn is one helper worker. Post sends it a request with its buffers (a
// copy: the caller keeps using them); its answers come through the
// deliver function that started it. Started's channel is closed once the
// helper runs (what was posted to it is on its way) or has failed to
// start. Close ends it.
type Conn interface {
	Post(req wire.Request, bufs map[string][]byte)
	Started() <-chan struct{}
	Close()
}

// Pool is a worker's helper workers, started when a sample file of at
// least ShareMinBytes is loaded and ended when a sample that is not
// shared (a preset, a model's run) replaces it. A nil *Pool has no
// helpers.
type Pool struct {
	// N is the most helpers to start (at most MaxHelpers are).
	N int
	// MinBytes is the smallest sample file shared (0: ShareMinBytes).
	MinBytes int
	// Start starts helper i, whose answers it passes to deliver, from
	// any goroutine.
	Start func(i int, deliver func(wire.Response)) (Conn, error)
	// Handed, when set, is called with each file the worker fetched or
	// was sent once the Pool is done with it: posted to the helpers by
	// share, found too small to share, or not a sample (keep).
	Handed func(data []byte)

	mu    sync.Mutex
	inbox []reply
	wake  chan struct{}

	hs      []*helper
	settled bool           // a file was shared or the helpers dropped: StartFor is too late
	loads   map[int]int    // the id of each helper's latest load
	sample  *sample.Sample // the sample the helpers hold; nil: none (yet)
	nextID  int
}

type helper struct {
	conn   Conn
	broken bool // its load or a grid failed: not used until the next share
}

// reply is an answer of helper from.
type reply struct {
	from int
	r    wire.Response
}

// share hands the sample file data (named name) to the helpers, starting
// them as needed, or ends them when the file is too small to share; bind
// says when the worker's own decoding of it succeeded. It returns once
// the helpers run (at most helperStartWait): in a browser a worker that
// starts a helper must get back to its event loop for the helper to
// start, which the long decoding that follows a share would hold off, so
// the helpers would start decoding their copies only after the worker's
// first answers.
func (p *Pool) share(name string, data []byte) {
	if p == nil {
		return
	}
	if p.Handed != nil {
		defer p.Handed(data)
	}
	n := p.sharedWith(len(data))
	if n == 0 {
		p.drop()
		return
	}
	p.mu.Lock()
	p.settled = true
	p.sample = nil
	for len(p.hs) > n {
		p.hs[len(p.hs)-1].conn.Close()
		p.hs = p.hs[:len(p.hs)-1]
	}
	p.startLocked(n)
	posts := make([]func(), len(p.hs))
	started := make([]<-chan struct{}, len(p.hs))
	for i, h := range p.hs {
		h.broken = false
		p.nextID++
		p.loads[i] = p.nextID
		req := wire.Request{ID: p.nextID, Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: name}}
		posts[i] = func() { h.conn.Post(req, map[string][]byte{"file": data}) }
		started[i] = h.conn.Started()
	}
	p.mu.Unlock()
	for _, post := range posts {
		post()
	}
	deadline := time.NewTimer(helperStartWait)
	defer deadline.Stop()
	for _, c := range started {
		select {
		case <-c:
		case <-deadline.C:
			return
		}
	}
}

// keep tells the Pool that the worker keeps data, a file it fetched that
// is not a sample (a model's checkpoint or tokenizer), to itself.
func (p *Pool) keep(data []byte) {
	if p != nil && p.Handed != nil {
		p.Handed(data)
	}
}

// StartFor starts the helpers that a sample file of size bytes will be
// shared with, before the file is there (a fetch under way): their start
// then overlaps the download instead of following it. A share of another
// size keeps as many of them as it uses, a load that is not shared ends
// them. Once a file was shared or the helpers ended, it does nothing:
// the file it was told of came, or is not wanted.
func (p *Pool) StartFor(size int) {
	if p == nil {
		return
	}
	n := p.sharedWith(size)
	if n == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.settled {
		p.startLocked(n)
	}
}

// startLocked starts helpers until there are n (or one fails to start);
// p.mu is held.
func (p *Pool) startLocked(n int) {
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
		p.loads = map[int]int{}
	}
	for i := len(p.hs); i < n; i++ {
		c, err := p.Start(i, func(r wire.Response) { p.deliver(i, r) })
		if err != nil {
			break // fewer helpers, or none
		}
		p.hs = append(p.hs, &helper{conn: c})
	}
}

// HelpersFor is how many helpers a worker starts on a machine of cores
// cores: one per core beyond the worker's, at most MaxHelpers. (On 2
// cores, with the pages on the same cores, a helper still brings a 4K
// sample's grid 1.5 times sooner: docs/PERFORMANCE.md.)
func HelpersFor(cores int) int { return max(0, min(cores-1, MaxHelpers)) }

// helpersFor is how many of n helpers get a sample file of size bytes:
// none under least bytes, else as many as ShareMaxBytes holds, at most
// MaxHelpers.
func helpersFor(n, size, least int) int {
	if size < least || size <= 0 {
		return 0
	}
	return max(0, min(n, MaxHelpers, ShareMaxBytes/size))
}

// sharedWith is how many helpers p shares a sample file of size bytes
// with.
func (p *Pool) sharedWith(size int) int {
	least := p.MinBytes
	if least <= 0 {
		least = ShareMinBytes
	}
	return helpersFor(p.N, size, least)
}

// bind records that the helpers were handed s's file (the last share).
func (p *Pool) bind(s *sample.Sample) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.hs) > 0 {
		p.sample = s
	}
}

// drop ends the helpers, freeing their copies of the sample.
func (p *Pool) drop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settled = true
	for _, h := range p.hs {
		h.conn.Close()
	}
	p.hs, p.sample, p.inbox = nil, nil, nil
}

// usable returns the helpers that hold s and have not failed.
func (p *Pool) usable(s *sample.Sample) []int {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sample == nil || p.sample != s {
		return nil
	}
	var ok []int
	for i, h := range p.hs {
		if !h.broken {
			ok = append(ok, i)
		}
	}
	return ok
}

// post sends req to helper i under a new id, which it returns.
func (p *Pool) post(i int, req wire.Request) int {
	p.mu.Lock()
	p.nextID++
	req.ID = p.nextID
	var c Conn
	if i < len(p.hs) {
		c = p.hs[i].conn
	}
	p.mu.Unlock()
	if c != nil {
		c.Post(req, nil) // not under mu: a Conn may answer at once
	}
	return req.ID
}

// fail marks helper i as not to be used until the next share.
func (p *Pool) fail(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < len(p.hs) {
		p.hs[i].broken = true
	}
}

// deliver takes an answer of helper i.
func (p *Pool) deliver(i int, r wire.Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Error != "" && (r.ID == 0 || r.ID == p.loads[i]) && i < len(p.hs) {
		// A failed load of the latest share, or a helper that died: it
		// cannot help.
		p.hs[i].broken = true
	}
	if r.Op == wire.OpLoad {
		return
	}
	p.inbox = append(p.inbox, reply{i, r})
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take returns the answers that came since the last take.
func (p *Pool) take() []reply {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.inbox
	p.inbox = nil
	return r
}

// wait blocks until an answer comes or d has passed.
func (p *Pool) wait(d time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	waitOn(wake, d)
}
