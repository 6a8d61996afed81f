package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/uptrace/bun"

	"albedo/wire"
)

// ErrClosed is returned by writes submitted after Close.
var ErrClosed = errors.New("db: writer closed")

// Committed is what one commit added to one session's log, in offset order.
type Committed struct {
	Session string
	Events  []Event
}

// Writer is the one goroutine that writes. Do may be called from any
// goroutine; requests are executed in arrival order. OnCommit runs on the
// writer goroutine and must not block on anything that waits for a write.
type Writer struct {
	// static after construction
	db       *bun.DB
	dialect  *dialect
	onCommit func([]Committed)
	maxBatch int
	single   bool
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
	// SQLite only: how many events the log holds, and how many start a
	// fold (fold.go). Owned by the writer goroutine.
	logRows, foldRows int
	alwaysLog         bool

	bufs flushBufs // owned by the writer goroutine
	maps batchMaps // owned by the writer goroutine
}

// batchMaps are a batch's maps, emptied and kept for the next batch: made
// anew, they were a sixth of the bytes the daemon allocated per input at
// 100 writers (issue 16). A batch holds at most maxBatch requests, so
// what they keep is bounded.
type batchMaps struct {
	heads  map[string]counters
	posts  map[postKey]*Input // each in its request's Tx.posts
	count  map[string]int     // flush: each session's events in the batch
	logged map[string]bool    // flush: the sessions whose events went to the log
}

// fresh empties the maps for a new run of a batch.
func (m *batchMaps) fresh() *batchMaps {
	if m.heads == nil {
		m.heads, m.posts = map[string]counters{}, map[postKey]*Input{}
		m.count, m.logged = map[string]int{}, map[string]bool{}
	}
	clear(m.heads)
	clear(m.posts)
	clear(m.count)
	clear(m.logged)
	return m
}

// flushBufs are the argument lists of a batch's statements (flush), kept
// for the next batch.
type flushBufs struct{ args, logArgs, ids []any }

// maxKeptArgs bounds the lists flushBufs keeps (16 bytes an argument): a
// rare batch of many events does not leave its lists in memory.
const maxKeptArgs = 4096

// keep takes the lists back for the next batch, emptied so that they hold
// no event's bytes, or drops those grown past maxKeptArgs.
func (f *flushBufs) keep(args, logArgs, ids []any) {
	kept := func(s []any) []any {
		if cap(s) > maxKeptArgs {
			return nil
		}
		clear(s[:cap(s)])
		return s[:0]
	}
	f.args, f.logArgs, f.ids = kept(args), kept(logArgs), kept(ids)
}

// counters are what the writer keeps of a session in memory and writes
// to its row once per batch (unless the batch logged its events; see
// flush): its head (the last offset; -1 for a deleted session), how many
// inputs it has accepted (the last receipt's order) and the state of its
// newest turn event.
type counters struct {
	head, inputs int64
	lastTurn     string
}

type request struct {
	ctx  context.Context
	fn   func(*Tx) error
	res  chan error  // the answer, for Pending.Wait; or
	then func(error) // the answer, called by the writer (Writer.Then)
	tx   *Tx
	fail error
}

// answer tells r's caller its outcome, r.fail.
func (r *request) answer() {
	if r.then != nil {
		r.then(r.fail)
		return
	}
	r.res <- r.fail
}

// Tx is the view a write request has of the batch's transaction. It is only
// valid inside the request's function.
type Tx struct {
	bun.IDB
	sql       *sql.Tx // the same transaction, for statements with parameters
	now       time.Time
	batch     *batchState
	careful   bool                // the batch runs with savepoints (commit)
	heads     []sessionCounters   // this request's new counters (ownCounters)
	posts     []Input             // this request's new bot posts (ownPost)
	locked    map[string]counters // shared: session rows this request locked (lock.go)
	deleted   []string            // sessions this request deleted
	committed []Committed         // this request's events, inserted at the batch's flush
}

// postKey names a bot post: its input id in its session.
type postKey struct{ session, inputID string }

// sessionCounters is a session's counters as one request changed them.
// A request's are a slice, not a map: it nearly always touches one
// session, and a map per request was a tenth of the bytes the daemon
// allocated per input (issue 16).
type sessionCounters struct {
	session string
	c       counters
}

// ownCounters returns the counters this request set for session.
func (t *Tx) ownCounters(session string) (counters, bool) {
	for _, h := range t.heads {
		if h.session == session {
			return h.c, true
		}
	}
	return counters{}, false
}

// ownPost returns the post this request accepted under inputID in session.
func (t *Tx) ownPost(session, inputID string) (Input, bool) {
	for _, p := range t.posts {
		if p.Session == session && p.InputID == inputID {
			return p, true
		}
	}
	return Input{}, false
}

// batchState is the state of one group commit, owned by the writer goroutine.
type batchState struct {
	w     *Writer
	heads map[string]counters // counters as of the requests accepted so far
	posts map[postKey]*Input  // bot posts accepted so far, inserted by flush
	now   time.Time           // the batch's timestamp, for every row it writes
	at    string              // formatTime(now), for the rows that store it as text

	// deleted names the sessions deleted in this batch, each with the
	// index of the last request that deleted it: the events of earlier
	// requests to it are not written (flush).
	deleted map[string]int

	// shared (PostgreSQL) only: the sessions whose rows this transaction
	// has locked, with their counters as committed, and those a failed
	// run found it needed (lock.go).
	locked map[string]counters
	needs  map[string]bool
}

// counters returns a session's counters as this request sees them, or
// ErrNotFound.
func (t *Tx) counters(ctx context.Context, session string) (counters, error) {
	c, ok := t.ownCounters(session)
	if !ok {
		c, ok = t.batch.heads[session]
	}
	if !ok && t.batch.w.shared {
		var err error
		if c, err = t.lock(ctx, session); err != nil {
			return counters{}, err
		}
		ok = true
	}
	if !ok {
		c, ok = t.batch.w.heads[session]
	}
	if !ok {
		err := t.sql.QueryRowContext(ctx, t.bind(`SELECT head, inputs, last_turn FROM sessions_now WHERE id = ?`), session).Scan(&c.head, &c.inputs, &c.lastTurn)
		if errors.Is(err, sql.ErrNoRows) {
			c.head = -1
		} else if err != nil {
			return counters{}, fmt.Errorf("read head: %w", err)
		}
	}
	if c.head < 0 {
		return counters{}, fmt.Errorf("session %q: %w", session, ErrNotFound)
	}
	return c, nil
}

// head returns a session's current head as this request sees it, or
// ErrNotFound.
func (t *Tx) head(ctx context.Context, session string) (int64, error) {
	c, err := t.counters(ctx, session)
	return c.head, err
}

func (t *Tx) setCounters(session string, c counters) {
	for i := range t.heads {
		if t.heads[i].session == session {
			t.heads[i].c = c
			return
		}
	}
	t.heads = append(t.heads, sessionCounters{session, c})
}

// CheckSession returns ErrNotFound if session does not exist as this
// request sees it (a delete earlier in the batch included). On PostgreSQL
// it also locks the session's row for the rest of the batch, as writing
// its events does (lock.go): a request that changes the row some other
// way (settings, delete) calls it first.
func (t *Tx) CheckSession(ctx context.Context, session string) error {
	_, err := t.head(ctx, session)
	return err
}

// bind returns q, written with ? placeholders, as the backend takes it.
func (t *Tx) bind(q string) string { return t.batch.w.dialect.bind(q) }

// Now is the commit batch's timestamp, used for every row it writes.
func (t *Tx) Now() time.Time { return t.now }

// nowText is formatTime(t.Now()), formatted once per batch.
func (t *Tx) nowText() string { return t.batch.at }

func newWriter(db *bun.DB, d *dialect, opts Options, legacyPosts bool, logRows int) *Writer {
	w := &Writer{
		legacyPosts: legacyPosts,
		db:          db,
		dialect:     d,
		shared:      d.pg,
		onCommit:    opts.OnCommit,
		maxBatch:    opts.MaxBatch,
		single:      opts.NoGroupCommit,
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
	r := &request{ctx: ctx, fn: fn, res: make(chan error, 1)}
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
	r := &request{ctx: ctx, fn: fn, then: then}
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
// not yet run. At 100 writers on one CPU, 98 % of batches held one request
// (docs/benchmarks.md, issue 16). A yield with nothing else runnable
// returns at once, so a lone writer pays about a microsecond for it.
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

// commit runs one batch in one transaction. Requests run optimistically,
// without savepoints; if one fails, the batch is rolled back and run again
// with a savepoint per request, so that the failing one costs only itself.
// Request functions must therefore be safe to run twice (they only touch
// the Tx and their own results). A batch of one runs optimistically too:
// carefully, it paid a savepoint and a post's look-ups for a repeat on
// every input, to spare a rerun only to one that fails, which is rare
// (issue 16: a sixth of the daemon's CPU per input with one writer).
func (w *Writer) commit(batch []*request) {
	w.stats.batch(len(batch))
	var needs map[string]bool // shared: the sessions to lock up front (lock.go)
	careful := false
	for {
		done, more := w.runBatch(batch, careful, needs)
		if done {
			return
		}
		if more != nil {
			needs = more // a session's row was locked elsewhere: again, locking them all first
			w.stats.lockRetries.Add(1)
			continue
		}
		careful = true
		w.stats.retries.Add(1)
	}
}

// errRetryCarefully ends an optimistic run of a batch at its first failed
// request: the batch is rolled back and run again with savepoints.
var errRetryCarefully = errors.New("db: a request failed; run the batch again with savepoints")

// runBatch executes batch in one transaction and answers every request,
// except when it must run again: when careful is false and a request
// fails (done false), or, on PostgreSQL, when a session's row was locked
// by another daemon (done false, and the sessions to lock first next
// time; lock.go). needs are sessions to lock before anything else.
func (w *Writer) runBatch(batch []*request, careful bool, needs map[string]bool) (done bool, more map[string]bool) {
	ctx := context.Background()
	st := &w.stats
	t := time.Now()
	began := t
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		w.answerAll(batch, fmt.Errorf("begin: %w", err))
		return true, nil
	}
	t = since(&st.begin, t)
	now := t.UTC()
	m := w.maps.fresh()
	b := &batchState{w: w, heads: m.heads, posts: m.posts, now: now, at: formatTime(now)}
	if w.shared {
		if err := b.lockAll(ctx, tx.Tx, needs); err != nil {
			_ = tx.Rollback()
			w.answerAll(batch, err)
			return true, nil
		}
	}
	live, err := b.run(ctx, tx, batch, careful)
	t = since(&st.run, t)
	logged := 0
	if err == nil && live > 0 && !KeepsNothing {
		logged, err = b.flush(ctx, tx, batch)
		if err != nil && !careful {
			err = errRetryCarefully
		}
	}
	t = since(&st.flush, t)
	switch {
	case errors.Is(err, errLockBusy):
		_ = tx.Rollback()
		return false, b.needs
	case errors.Is(err, errRetryCarefully):
		_ = tx.Rollback()
		return false, nil
	case err != nil:
		_ = tx.Rollback()
		w.answerAll(batch, err)
		return true, nil
	case live == 0:
		_ = tx.Rollback()
		w.answerEach(batch)
		return true, nil
	}
	if KeepsNothing {
		_ = tx.Rollback() // bench/run's bound only (benchnostore_on.go)
	} else if err := tx.Commit(); err != nil {
		clear(w.heads) // unknown state: read heads afresh
		w.answerAll(batch, fmt.Errorf("commit: %w", err))
		return true, nil
	}
	t = since(&st.commit, t)
	st.latency.Observe(t.Sub(began))
	// A fold, when one is due, before the answers: the writer's last act
	// for a batch is its answers, on which the tests' oneBatch relies.
	w.logged(logged)
	t = time.Now()
	w.committed(b, batch)
	since(&st.answer, t)
	return true, nil
}

// run executes each request of the batch that is still wanted and says
// how many succeeded. Optimistically (careful false) the first failure
// ends the run with errRetryCarefully; carefully, each request runs in a
// savepoint and a failure costs only that request. Any other error is the
// transaction's own, and fails the whole batch.
func (b *batchState) run(ctx context.Context, tx bun.Tx, batch []*request, careful bool) (live int, _ error) {
	for i, r := range batch {
		r.fail = r.ctx.Err()
		if r.fail != nil {
			continue
		}
		r.tx = &Tx{IDB: tx, sql: tx.Tx, now: b.now, batch: b, careful: careful}
		if !careful {
			if err := r.fn(r.tx); errors.Is(err, errLockBusy) {
				return live, err
			} else if err != nil {
				return live, errRetryCarefully
			}
		} else if err := inSavepoint(ctx, tx, r); err != nil {
			return live, err
		} else if errors.Is(r.fail, errLockBusy) {
			r.fail = nil
			return live, errLockBusy
		}
		if r.fail == nil {
			for _, h := range r.tx.heads {
				b.heads[h.session] = h.c
			}
			// Pointers into the request's own list: an Input is too
			// large for a map to hold inline, and as a value each one
			// cost an allocation (issue 16).
			for j := range r.tx.posts {
				p := &r.tx.posts[j]
				b.posts[postKey{p.Session, p.InputID}] = p
			}
			maps.Copy(b.locked, r.tx.locked)
			for _, s := range r.tx.deleted {
				if b.deleted == nil {
					b.deleted = map[string]int{}
				}
				b.deleted[s] = i
			}
			live++
		}
	}
	return live, nil
}

// inSavepoint runs r inside a savepoint, rolled back if r fails (r.fail
// says so). The error is the savepoint's own.
func inSavepoint(ctx context.Context, tx bun.Tx, r *request) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT req"); err != nil {
		r.fail = fmt.Errorf("savepoint: %w", err)
		return nil
	}
	if err := r.fn(r.tx); err != nil {
		r.fail = err
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO req"); rerr != nil {
			return fmt.Errorf("rollback to savepoint: %w", rerr)
		}
	}
	if _, err := tx.ExecContext(ctx, "RELEASE req"); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// keeps says whether the events c of the batch's request i are written:
// a session deleted by that request or a later one of the batch keeps
// none of them. Its row is gone, and with it the foreign key events
// would have failed on (the whole batch, before) and the log does not
// have (migration events_log); nor are they handed to the commit hook,
// which would show viewers events that no read will ever return.
func (b *batchState) keeps(i int, c Committed) bool {
	d, ok := b.deleted[c.Session]
	return !ok || i > d
}

// committed records the batch's new heads, hands its events to the commit
// hook in commit order (those keeps keeps), and answers every request.
func (w *Writer) committed(b *batchState, batch []*request) {
	if !w.shared { // other daemons write too: no heads in memory (lock.go)
		for id, c := range b.heads {
			if c.head < 0 {
				delete(w.heads, id)
			} else {
				w.heads[id] = c
			}
		}
	}
	if w.onCommit != nil {
		var all []Committed
		for i, r := range batch {
			if r.fail != nil {
				continue
			}
			for _, c := range r.tx.committed {
				if b.keeps(i, c) {
					all = append(all, c)
				}
			}
		}
		if len(all) > 0 {
			w.onCommit(all)
		}
	}
	w.answerEach(batch)
}

func (w *Writer) answerEach(batch []*request) {
	for _, r := range batch {
		r.answer()
	}
}

func (w *Writer) answerAll(batch []*request, err error) {
	for _, r := range batch {
		if r.fail == nil {
			r.fail = err
		}
		r.answer()
	}
}

// flush writes what the accepted requests of the batch appended: their
// events in multi-row inserts (straight into events, or on SQLite those
// logs picks into the log, fold.go), the input ids their messages took,
// and, in multi-row updates, the counters and updated_at of each touched
// session whose events did not go to the log. A logged session's row is
// left as it was: reads see it through the view sessions_now, which
// takes what is newer from the log, and the fold writes it (migration
// sessions_now). Rewriting fifty rows a batch was the largest single cost
// of a batch at 100 writers (issue 16). Doing this once per batch
// instead of once per request is most of what group commit saves. The
// statements come in a few sizes only (stmtRows), so that each is
// prepared once per connection and kept. It returns how many events it
// wrote to the log.
func (b *batchState) flush(ctx context.Context, tx bun.Tx, reqs []*request) (nlogged int, _ error) {
	at := b.at
	// The argument lists are the writer's, from batch to batch: grown
	// anew, they were a tenth of the bytes the daemon allocated per input
	// at 100 writers (issue 16).
	args, logArgs, ids := b.w.bufs.args[:0], b.w.bufs.logArgs[:0], b.w.bufs.ids[:0]
	defer func() { b.w.bufs.keep(args, logArgs, ids) }()
	var atArg any = at                // boxed once, not once per row
	types := map[wire.EventType]any{} // the same for the few event types
	logged := b.w.maps.logged         // sessions whose events went to the log
	// Where each session's events go (fold.go): those of a session with
	// few of them in a batch of many sessions to the log, the rest
	// straight into events.
	count := b.w.maps.count
	for i, r := range reqs {
		if r.fail == nil && r.tx != nil {
			for _, c := range r.tx.committed {
				if b.keeps(i, c) {
					count[c.Session] += len(c.Events)
				}
			}
		}
	}
	for i, r := range reqs {
		if r.fail != nil || r.tx == nil {
			continue
		}
		for _, c := range r.tx.committed {
			if !b.keeps(i, c) {
				continue
			}
			to := &args
			if !b.w.shared && (b.w.alwaysLog || logs(count[c.Session], len(count))) {
				to = &logArgs
				logged[c.Session] = true
			}
			for _, e := range c.Events {
				var inputID, ord any // NULL unless the event is an input's message
				if e.ord > 0 {
					inputID, ord = e.Meta.InputID, e.ord
					ids = append(ids, inputID, e.Session, e.Offset)
				}
				typ, ok := types[e.Type]
				if !ok {
					typ = string(e.Type)
					types[e.Type] = typ
				}
				// The payload as a string without a copy: an event's JSON
				// is never written once Append has made it, and the
				// drivers copy what they bind.
				*to = append(*to, e.Session, e.Offset, typ, unsafe.String(unsafe.SliceData(e.JSON), len(e.JSON)), atArg, inputID, ord)
			}
		}
	}
	// database/sql directly: bun would inline every argument into the SQL
	// text, and SQLite would parse megabytes of it.
	stmts := b.w.dialect.flushStmts()
	if err := insertRows(ctx, tx, b.w.dialect, stmts.insertEvents.get, eventColumns, args); err != nil {
		return 0, fmt.Errorf("insert events: %w", err)
	}
	if err := insertRows(ctx, tx, b.w.dialect, stmts.insertLog.get, eventColumns, logArgs); err != nil {
		return 0, fmt.Errorf("log events: %w", err)
	}
	nlogged = len(logArgs) / eventColumns
	// A taken id fails here: optimistically, the batch then runs again
	// carefully, and that run finds the input it repeats (putPost).
	if err := insertRows(ctx, tx, b.w.dialect, stmts.insertInputIDs.get, inputIDColumns, ids); err != nil {
		return 0, fmt.Errorf("insert input ids: %w", err)
	}
	var sessions []string
	for id, c := range b.heads {
		if c.head >= 0 && !logged[id] {
			sessions = append(sessions, id)
		}
	}
	for len(sessions) > 0 {
		n := stmtRows(len(sessions))
		args = args[:0]
		for _, id := range sessions[:n] {
			args = append(args, id, b.heads[id].head)
		}
		for _, id := range sessions[:n] {
			args = append(args, id, b.heads[id].inputs)
		}
		for _, id := range sessions[:n] {
			args = append(args, id, b.heads[id].lastTurn)
		}
		args = append(args, at)
		for _, id := range sessions[:n] {
			args = append(args, id)
		}
		if _, err := tx.Tx.ExecContext(ctx, b.w.dialect.bind(stmts.updateSessions.get(n)), args...); err != nil {
			return 0, fmt.Errorf("update heads: %w", err)
		}
		sessions = sessions[n:]
	}
	return nlogged, nil
}

// insertRows inserts the rows in args (columns parameters each) with
// statements of stmtRows rows: sql(n) is the statement for n of them.
func insertRows(ctx context.Context, tx bun.Tx, d *dialect, sql func(n int) string, columns int, args []any) error {
	for rows := len(args) / columns; rows > 0; {
		n := stmtRows(rows)
		if _, err := tx.Tx.ExecContext(ctx, d.bind(sql(n)), args[:n*columns]...); err != nil {
			return err
		}
		args, rows = args[n*columns:], rows-n
	}
	return nil
}

// maxStmtRows bounds the rows of one statement: 128 events are 896
// parameters, well under SQLite's (32 766) and PostgreSQL's (65 535) limits.
const maxStmtRows = 1 << maxStmtLog

// maxStmtLog is log2(maxStmtRows).
const maxStmtLog = 7

// stmtRows is how many of rows the next statement takes: the largest power
// of two that fits, at most maxStmtRows. A statement per batch size (up to
// 512) overflowed the connection's statement cache, and preparing a long
// statement again each batch cost more than a few more executions.
func stmtRows(rows int) int {
	n := 1
	for n*2 <= rows && n*2 <= maxStmtRows {
		n *= 2
	}
	return n
}

// sizedStmts holds a statement for each size stmtRows gives (the powers
// of two up to maxStmtRows), made once: made for each batch, their text
// was a few percent of the bytes the daemon allocated per input.
type sizedStmts [maxStmtLog + 1]string

// sized makes the statements of every size with sql.
func sized(sql func(n int) string) *sizedStmts {
	var s sizedStmts
	for i := range s {
		s[i] = sql(1 << i)
	}
	return &s
}

// get returns the statement for n rows, a size stmtRows gave.
func (s *sizedStmts) get(n int) string { return (*s)[bits.TrailingZeros(uint(n))] }

// flushStmts are a batch's statements, each in every size, for one
// backend.
type flushStmts struct {
	insertEvents, insertLog, insertInputIDs, updateSessions *sizedStmts
}

// newFlushStmts makes the statements with the conflict clause or (" OR
// ROLLBACK", or "" for none) after their INSERT or UPDATE.
func newFlushStmts(or string) *flushStmts {
	return &flushStmts{
		insertEvents:   sized(insertEventsSQL(or, "events")),
		insertLog:      sized(insertEventsSQL(or, "events_log")),
		insertInputIDs: sized(insertInputIDsSQL(or)),
		updateSessions: sized(updateSessionsSQL(or)),
	}
}

// On SQLite a batch's statements roll the transaction back when they fail
// (OR ROLLBACK) instead of undoing only themselves (ABORT, the default).
// To undo only itself, a statement that writes several rows first copies
// every page it is about to change into a statement journal: at 100
// writers 5 % of the daemon's CPU, most of it in folds (issue 16,
// docs/benchmarks.md). The writer never keeps a transaction whose flush
// or fold failed: a batch is rolled back whole (and run again carefully,
// or failed), a fold is rolled back and tried again later. A batch's
// straight insert into events still keeps a journal, for its foreign
// key's check (the fold runs with foreign keys off). PostgreSQL has no
// such clause, nor the journal.
var sqliteFlush, pgFlush = newFlushStmts(" OR ROLLBACK"), newFlushStmts("")

// flushStmts returns the batch's statements for the backend.
func (d *dialect) flushStmts() *flushStmts {
	if d.pg {
		return pgFlush
	}
	return sqliteFlush
}

// insertEventsSQL returns the statement that inserts n events into table.
func insertEventsSQL(or, table string) func(n int) string {
	return func(n int) string {
		return `INSERT` + or + ` INTO ` + table + ` (session, "offset", type, payload, at, input_id, ord) VALUES (?,?,?,?,?,?,?)` +
			strings.Repeat(",(?,?,?,?,?,?,?)", n-1)
	}
}

// inputIDColumns is how many parameters a row of input_ids takes.
const inputIDColumns = 3

// insertInputIDsSQL returns the statement that inserts n rows of
// input_ids.
func insertInputIDsSQL(or string) func(n int) string {
	return func(n int) string {
		return `INSERT` + or + ` INTO input_ids (input_id, session, "offset") VALUES (?,?,?)` + strings.Repeat(",(?,?,?)", n-1)
	}
}

// updateSessionsSQL returns the statement that writes n sessions' head,
// inputs and last_turn, and the batch's updated_at. Its parameters:
// (id, head)×n, (id, inputs)×n, (id, last_turn)×n, updated_at, id×n.
func updateSessionsSQL(or string) func(n int) string {
	return func(n int) string {
		when := strings.Repeat(" WHEN ? THEN ?", n)
		return "UPDATE" + or + " sessions SET head = CASE id" + when + " ELSE head END" +
			", inputs = CASE id" + when + " ELSE inputs END" +
			", last_turn = CASE id" + when + " ELSE last_turn END" +
			", updated_at = ? WHERE id IN (?" + strings.Repeat(",?", n-1) + ")"
	}
}
