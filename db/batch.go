package db

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// batchMaps are a batch's maps, emptied and kept for the next batch: made
// anew for each one, they were a large share of what the daemon allocated
// per input under many writers. A batch holds at most maxBatch requests,
// so what they keep is bounded.
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

// commit runs one batch in one transaction. Requests run optimistically,
// without savepoints; if one fails, the batch is rolled back and run again
// with a savepoint per request, so that the failing one costs only itself.
// Request functions must therefore be safe to run twice (they only touch
// the Tx and their own results). A batch of one runs optimistically too:
// carefully, it would pay a savepoint and a post's look-ups for a repeat
// on every input, to spare a rerun only to the rare one that fails; and
// with one writer, every batch is a batch of one.
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

// keeper is how a batch's writes are kept, once every request has run:
// flush writes the rows they appended, and returns how many events it
// wrote to the log; commit ends the transaction. Each build has one
// (buildKeeper): durable in the daemon's, keepsNothing in the bench's
// with its store taken out (benchnostore_on.go).
type keeper interface {
	flush(ctx context.Context, b *batchState, tx *batchTx, reqs []*request) (logged int, _ error)
	commit(ctx context.Context, tx *batchTx) error
}

// durable keeps a batch: its rows flushed, its transaction committed.
type durable struct{}

func (durable) flush(ctx context.Context, b *batchState, tx *batchTx, reqs []*request) (int, error) {
	return b.flush(ctx, tx, reqs)
}

func (durable) commit(ctx context.Context, tx *batchTx) error { return tx.commit(ctx) }

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
	now := t.UTC()
	m := w.maps.fresh()
	b := &batchState{w: w, heads: m.heads, posts: m.posts, now: now, at: formatTime(now)}
	tx, err := w.begin(ctx, b, batch, needs)
	if errors.Is(err, errLockBusy) {
		return false, b.needs
	} else if err != nil {
		w.answerAll(batch, err)
		return true, nil
	}
	t = since(&st.begin, t)
	live, err := b.run(ctx, tx, batch, careful)
	t = since(&st.run, t)
	logged := 0
	if err == nil && live > 0 {
		logged, err = w.keeper.flush(ctx, b, tx, batch)
		if err != nil && !careful {
			err = errRetryCarefully
		}
	}
	t = since(&st.flush, t)
	if err == nil && live > 0 {
		// On PostgreSQL the flush's statements go with COMMIT, and fail
		// there as they would have in flush.
		var flushed *flushError
		switch err = w.keeper.commit(ctx, tx); {
		case errors.As(err, &flushed):
			if !careful {
				err = errRetryCarefully
			}
		case err != nil:
			tx.rollback()  // gives PostgreSQL's connection back, or closes it
			clear(w.heads) // unknown state: read heads afresh
			w.answerAll(batch, fmt.Errorf("commit: %w", err))
			return true, nil
		}
	}
	switch {
	case errors.Is(err, errLockBusy):
		tx.rollback()
		return false, b.needs
	case errors.Is(err, errRetryCarefully):
		tx.rollback()
		return false, nil
	case err != nil:
		tx.rollback()
		w.answerAll(batch, err)
		return true, nil
	case live == 0:
		tx.rollback()
		w.answerEach(batch)
		return true, nil
	}
	t = since(&st.commit, t)
	st.latency.Observe(t.Sub(began))
	// A fold, when one is due, before the answers: the writer's last act
	// for a batch is its answers, on which the tests' oneBatch relies.
	w.logged(logged)
	w.indexed()
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
func (b *batchState) run(ctx context.Context, tx *batchTx, batch []*request, careful bool) (live int, _ error) {
	for i, r := range batch {
		r.fail = r.ctx.Err()
		if r.fail != nil {
			continue
		}
		r.tx = &Tx{IDB: tx.IDB, sql: tx.sql, bt: tx, now: b.now, batch: b, careful: careful}
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
			// would cost an allocation.
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
func inSavepoint(ctx context.Context, tx *batchTx, r *request) error {
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
	hook := w.hook.Load()
	if w.onCommit != nil || hook != nil {
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
		if len(all) > 0 && hook != nil {
			(*hook)(all)
		}
		if len(all) > 0 && w.onCommit != nil {
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
