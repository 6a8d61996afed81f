package db

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// ErrClosed is returned by writes submitted after Close.
var ErrClosed = errors.New("db: writer closed")

// Committed is what one commit added to one session's log, in offset order.
type Committed struct {
	Session string
	// Epoch is the session's, so that a node that has not heard of its
	// deletion and re-creation under the same id tells the two apart.
	Epoch  string
	Events []Event
}

// Writer is the one goroutine that writes. Do may be called from any
// goroutine; requests are executed in arrival order. OnCommit runs on the
// writer goroutine and must not block on anything that waits for a write.
type Writer struct {
	// static after construction
	db       *bun.DB
	dialect  *dialect
	onCommit func([]Committed)
	// hook is what HookCommits set, called before onCommit: set once,
	// before the first write, by the store's user (the hub), which gets
	// the store already open.
	hook     atomic.Pointer[func([]Committed)]
	maxBatch int
	single   bool
	keeper   keeper // what a batch's writes become (buildKeeper)
	// legacyPosts: some bot posts are still stored in inputs (from before
	// events recorded them; see migration post_ids), so a post's
	// idempotency check looks there too.
	legacyPosts bool

	reqs      chan *request
	rewindReq chan struct{} // SQLite: checkpoint between two batches (rewind.go)
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	// closing is held shared while a request is queued and exclusively
	// by Close to set closed: once Close has set it, nothing more is
	// queued, so the writer's last drain answers every request.
	closing sync.RWMutex
	closed  bool

	stats writerStats // written by the writer goroutine, read by Stats

	// owned by the writer goroutine: each session's committed counters.
	// On SQLite every write goes through this goroutine, so the cache is
	// authoritative; a session not in it is read from the database on
	// first use. On PostgreSQL other daemons write too (shared): the
	// cache stays empty and each batch reads the counters of the sessions
	// it writes from their rows, locked to its commit (lock.go).
	heads  map[string]counters
	shared bool
	node   string // Options.Node, in the changes it records
	// SQLite only: how many events the log holds, and how many start a
	// fold (fold.go). Owned by the writer goroutine.
	logRows, foldRows int
	alwaysLog         bool
	// SQLite only: the search index's writer, the largest docid given
	// (document), and whether the index has news past the last kick.
	index     *indexer
	lastDoc   int64
	kicked    int64      // lastDoc at the last kick
	kickIndex bool       // a batch left documents for the index to forget
	docs      []indexDoc // the batch's documents, handed to the index once committed

	bufs flushBufs // owned by the writer goroutine
	maps batchMaps // owned by the writer goroutine
}

// counters are what the writer keeps of a session in memory and writes
// to its row once per batch (unless the batch logged its events; see
// flush): its head (the last offset; -1 for a deleted session), how many
// inputs it has accepted (the last receipt's order) and the state of its
// newest turn event.
type counters struct {
	head, inputs int64
	lastTurn     string
	epoch        string // the session's, for what its commits announce
}

type request struct {
	ctx     context.Context
	session string // the session fn writes, when the caller knows it ("": unknown)
	fn      func(*Tx) error
	res     chan error  // the answer, for Pending.Wait; or
	then    func(error) // the answer, called by the writer (Writer.Then)
	tx      *Tx
	fail    error
}

// answer tells r's caller its outcome, r.fail.
func (r *request) answer() {
	if r.then != nil {
		r.then(r.fail)
		return
	}
	r.res <- r.fail
}

func newWriter(db *bun.DB, d *dialect, opts Options, legacyPosts bool, logRows int) *Writer {
	w := &Writer{
		legacyPosts: legacyPosts,
		db:          db,
		dialect:     d,
		shared:      d.pg,
		node:        opts.Node,
		onCommit:    opts.OnCommit,
		maxBatch:    opts.MaxBatch,
		single:      opts.NoGroupCommit,
		keeper:      buildKeeper(),
		reqs:        make(chan *request, 1024),
		rewindReq:   make(chan struct{}, 1),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
		heads:       map[string]counters{},
		logRows:     logRows,
		foldRows:    opts.FoldRows,
		alwaysLog:   opts.AlwaysLog,
	}
	if w.foldRows <= 0 {
		w.foldRows = foldRowsDefault
	}
	w.stats.latency = NewHistogram(commitBounds...)
	if w.maxBatch <= 0 {
		w.maxBatch = 512
	}
	if w.single {
		w.maxBatch = 1
	}
	go w.run()
	return w
}

// Do runs fn in the next group commit and returns once that commit is
// durable (and its events handed to OnCommit), or fn's own error, in which
// case nothing fn wrote is kept. fn runs on the writer goroutine, possibly
// twice (see commit), and must only use the Tx it is given.
func (w *Writer) Do(ctx context.Context, fn func(*Tx) error) ([]Committed, error) {
	return w.Submit(ctx, fn).Wait()
}

// DoIn is Do for a write of one session that the caller names: on
// PostgreSQL a batch locks the rows of the sessions its writes name in
// one statement before it runs them (lock.go), rather than one statement
// a session as each write reaches its own.
func (w *Writer) DoIn(ctx context.Context, session string, fn func(*Tx) error) ([]Committed, error) {
	return w.submit(ctx, session, fn).Wait()
}

// Pending is a write that Submit queued. Its Wait may be called once, from
// any goroutine.
type Pending struct {
	r   *request
	err error // the write was never queued
}

// Submit queues fn as Do does and returns without waiting for its commit:
// writes submitted one after another from one goroutine run in that order.
// Only the queueing honours ctx; once queued, the write is answered.
func (w *Writer) Submit(ctx context.Context, fn func(*Tx) error) *Pending {
	return w.submit(ctx, "", fn)
}

// submit is Submit of a write of session ("": unnamed; DoIn).
func (w *Writer) submit(ctx context.Context, session string, fn func(*Tx) error) *Pending {
	r := &request{ctx: ctx, session: session, fn: fn, res: make(chan error, 1)}
	if err := w.queue(r); err != nil {
		return &Pending{err: err}
	}
	return &Pending{r: r}
}

// Then queues fn as Submit does, and instead of a Pending to wait on it
// calls then with the outcome: on the writer goroutine, once fn's batch
// is committed (or has failed) and its events handed to OnCommit; or at
// once, on the caller's goroutine, when the write could not be queued
// (ErrClosed, ctx's error). Writes queued one after another are answered
// in that order. then must be quick and must not wait for a write: it
// holds up the writer. A caller that would otherwise park a goroutine
// per write (a connection with many inputs in flight) uses it to answer
// from the commit itself.
func (w *Writer) Then(ctx context.Context, fn func(*Tx) error, then func(error)) {
	w.ThenIn(ctx, "", fn, then)
}

// ThenIn is Then for a write of one session that the caller names (DoIn).
func (w *Writer) ThenIn(ctx context.Context, session string, fn func(*Tx) error, then func(error)) {
	r := &request{ctx: ctx, session: session, fn: fn, then: then}
	if err := w.queue(r); err != nil {
		then(err)
	}
}

// queue hands r to the writer, unless Close has begun or ctx ends first.
func (w *Writer) queue(r *request) error {
	w.closing.RLock()
	defer w.closing.RUnlock()
	if w.closed {
		return ErrClosed
	}
	select {
	case w.reqs <- r:
		return nil
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
}

// Wait returns once the write is committed, or failed, as Do does.
func (p *Pending) Wait() ([]Committed, error) {
	if p.err != nil {
		return nil, p.err
	}
	// Once queued, wait for the answer even if ctx ends: the write may
	// commit, and the caller must not believe otherwise. The writer
	// answers every request queued before Close, and none is queued
	// after it (queue).
	r := p.r
	return r.committed(<-r.res)
}

// committed is Do's answer once the writer has answered r.
func (r *request) committed(err error) ([]Committed, error) {
	if err != nil {
		return nil, err
	}
	return r.tx.committed, nil
}

// Close lets the writer finish the requests already queued, then stops it.
func (w *Writer) Close(ctx context.Context) error {
	w.closeOnce.Do(func() {
		w.closing.Lock()
		w.closed = true
		w.closing.Unlock()
		close(w.stop)
	})
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close writer: %w", ctx.Err())
	}
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]*request, 0, w.maxBatch)
	for {
		batch = batch[:0]
		// A rewind asked for goes before the next batch: under load the
		// writer seldom waits in the select below, which would pick
		// between the two at random.
		select {
		case <-w.rewindReq:
			w.rewind()
		default:
		}
		select {
		case <-w.rewindReq:
			w.rewind()
			continue
		case r := <-w.reqs:
			batch = append(batch, r)
		case <-w.stop:
			// Drain what was queued before Close.
			for {
				select {
				case r := <-w.reqs:
					w.commit(append(batch[:0], r))
				default:
					return
				}
			}
		}
		w.commit(w.gather(batch))
	}
}

// gather adds to batch the requests queued behind its first one. Before
// it gives up it yields the processor, and again for as long as a yield
// brought more: a request's sender readies the writer as it queues, and
// the Go scheduler runs the goroutine readied last before any other
// runnable one, so without yielding the writer took one request while the
// senders of the others (their frames read, their goroutines runnable) had
// not yet run: with many writers on one CPU, nearly every batch held a
// single request (TestConcurrentWritersShareCommits). A yield with
// nothing else runnable returns at once, so a lone writer pays next to
// nothing for it.
func (w *Writer) gather(batch []*request) []*request {
	for len(batch) < w.maxBatch {
		select {
		case r := <-w.reqs:
			batch = append(batch, r)
			continue
		default:
		}
		n := len(batch)
		runtime.Gosched()
		select {
		case r := <-w.reqs:
			batch = append(batch, r)
		default:
		}
		if len(batch) == n {
			break
		}
	}
	return batch
}
