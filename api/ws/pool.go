package ws

import "sync"

// writerPool runs connections' writers on a few goroutines instead of one
// started per connection per wake. An event for 100 viewers wakes 100
// writers at once, and starting a goroutine for each would cost more
// than the hub's own work per event. A worker starts when a writer is queued and fewer than
// the pool's size work (max, plus any loans: lend), takes writers in
// turn, and ends when the queue is empty: an idle server keeps no
// goroutine, and an idle connection costs nothing here.
//
// A worker never waits on one peer while others queue behind it. When a
// write would block (the peer's socket is full: leanConn.onBlock), or
// before a close handshake (bye, a slow or failed connection), the
// worker leaves the pool, starting a replacement if writers wait, and
// finishes that connection's run as the connection's own goroutine.
// Connections whose socket cannot say so (not a kernel socket, TLS) get a
// goroutine of their own, as before.
//
// One wait is not the worker's own: a frame written outside the writer
// (a heartbeat ping, the reader's pong or close echo, a revocation's
// close) holds coder/websocket's frame lock, which the writer's next
// write needs, and a worker may wait for it while that frame waits for
// the peer. Such a frame lends the pool a worker for as long as it waits
// (lend, from leanConn.Write): the pool may run one more, so the worker it
// holds is replaced.
//
// Who owns a connection's write side (the one goroutine that may call
// hub.Conn.Fill and write its messages) changes at run time:
//
//	state           owner                          enters by                         leaves by
//	idle            nobody                         run ends with nothing to write    kick: queued, or its own goroutine
//	queued          the pool (next or queue)       kick → submit                     a worker's take
//	on a worker     that pool worker               take                              run ends (idle), or leave
//	left the pool   the worker's goroutine, now    leave: a write that would wait,   run ends; the goroutine ends
//	                the connection's own           a close handshake
//	own goroutine   a goroutine of its own         kick, on a socket that is not     run ends
//	                                               the kernel's (no lean socket)
//
// A loan is not a state of a writer's: lend raises the pool's size while a
// frame of others waits for its peer, holding the frame lock a worker may
// be waiting for, and giveBack lowers it (the next take past the size ends
// its worker). writer.mu's running flag keeps a writer in at most one of
// the states but idle, so that at most one goroutine owns its write side.
// Each transition has a stress test in pool_test.go.
type writerPool struct {
	max int
	run func(*writer) // what a worker does with a writer it takes: (*writer).run

	mu   sync.Mutex
	lent int // workers lent by frames waiting for their peers: the pool runs up to max+lent
	// The writer queued last runs first, as Go's scheduler runs the
	// goroutine readied last: a commit's receipt, queued after the
	// commit's pushes to every viewer, would otherwise wait behind them,
	// and a publisher that keeps a window in flight would slow down. The
	// writer it displaces goes to the back of the queue.
	// So that next cannot starve the queue when writers arrive as fast as
	// they are taken, a take from next is followed by one from the queue.
	next     *writer
	tookNext bool
	queue    []*writer // from head on; with next, at most one entry per connection (a writer is queued only to start its run)
	head     int
	workers  int // goroutines working the queue
}

// submit queues w's run, starting a worker if fewer than the pool's size
// work.
func (p *writerPool) submit(w *writer) {
	p.mu.Lock()
	if p.next != nil {
		p.queue = append(p.queue, p.next)
	}
	p.next = w
	p.startOne()
}

// startOne starts a worker if writers wait and fewer than the pool's size
// work, and unlocks p.mu, which the caller holds.
func (p *writerPool) startOne() {
	start := (p.next != nil || p.head < len(p.queue)) && p.workers < p.max+p.lent
	if start {
		p.workers++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// work runs queued writers until the queue is empty, or until a write
// would block and made this goroutine that connection's own.
func (p *writerPool) work() {
	left := false // this worker's: see writer.left
	for {
		w := p.take()
		if w == nil {
			return
		}
		left = false
		w.left = &left
		p.run(w)
		if left {
			return // left the pool while blocked (leave): a replacement works
		}
	}
}

// take returns the writer to run next, or nil, the worker ending, when
// none waits.
func (p *writerPool) take() *writer {
	p.mu.Lock()
	defer p.mu.Unlock()
	var w *writer
	switch {
	case p.workers > p.max+p.lent:
		p.workers-- // a loan ended: the pool is back to its size
	case p.next != nil && !(p.tookNext && p.head < len(p.queue)):
		w, p.next, p.tookNext = p.next, nil, true
	case p.head < len(p.queue):
		w = p.queue[p.head]
		p.queue[p.head] = nil
		p.head++
		p.tookNext = false
		if p.head > 64 && 2*p.head > len(p.queue) {
			// Under load the queue may never empty: drop the taken
			// prefix, or the array would grow with every writer queued.
			n := copy(p.queue, p.queue[p.head:])
			clear(p.queue[n:])
			p.queue, p.head = p.queue[:n], 0
		}
	default:
		p.queue, p.head = p.queue[:0], 0 // the array stays for the next burst
		p.workers--
	}
	return w
}

// lend raises the pool's size by one while a frame written outside the
// writer waits for its peer (it may hold a worker on coder/websocket's
// frame lock), starting a worker if writers wait; giveBack ends the loan.
func (p *writerPool) lend() {
	p.mu.Lock()
	p.lent++
	p.startOne()
}

func (p *writerPool) giveBack() {
	p.mu.Lock()
	p.lent--
	p.mu.Unlock()
}

// leave takes the calling worker, about to block on w's peer, out of the
// pool, and starts a replacement if writers wait (and the pool is not over
// its size: a loan has not just ended). It runs on the worker's
// goroutine, inside w.run.
func (p *writerPool) leave(w *writer) {
	if w.left == nil || *w.left {
		return // not on a worker, or already left
	}
	*w.left = true
	p.mu.Lock()
	p.workers--
	p.startOne()
}
