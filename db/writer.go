package db

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
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
	onCommit func([]Committed)
	maxBatch int
	single   bool

	reqs      chan *request
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type request struct {
	ctx  context.Context
	fn   func(*Tx) error
	res  chan error
	tx   *Tx
	fail error
}

// Tx is the view a write request has of the batch's transaction. It is only
// valid inside the request's function.
type Tx struct {
	bun.IDB
	now       time.Time
	committed []Committed
}

// Now is the commit batch's timestamp, used for every row it writes.
func (t *Tx) Now() time.Time { return t.now }

func newWriter(db *bun.DB, opts Options) *Writer {
	w := &Writer{
		db:       db,
		onCommit: opts.OnCommit,
		maxBatch: opts.MaxBatch,
		single:   opts.NoGroupCommit,
		reqs:     make(chan *request, 1024),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if w.maxBatch <= 0 {
		w.maxBatch = 512
	}
	if w.single {
		w.maxBatch = 1
	}
	go w.run()
	return w
}

// Do runs fn inside a savepoint of the next group commit and returns once
// that commit is durable (and its events handed to OnCommit), or fn's own
// error, in which case nothing fn wrote is kept. fn may run on another
// goroutine and must only use the Tx it is given.
func (w *Writer) Do(ctx context.Context, fn func(*Tx) error) ([]Committed, error) {
	r := &request{ctx: ctx, fn: fn, res: make(chan error, 1)}
	select {
	case w.reqs <- r:
	case <-w.stop:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Once queued, wait for the answer even if ctx ends: the write may
	// commit, and the caller must not believe otherwise.
	err := <-r.res
	if err != nil {
		return nil, err
	}
	return r.tx.committed, nil
}

// Close lets the writer finish the requests already queued, then stops it.
func (w *Writer) Close(ctx context.Context) error {
	w.closeOnce.Do(func() { close(w.stop) })
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
		select {
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
	fill:
		for len(batch) < w.maxBatch {
			select {
			case r := <-w.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		w.commit(batch)
	}
}

// commit runs one batch in one transaction. Each request gets a savepoint so
// that one failing request (a conflict, a missing session) costs only itself.
func (w *Writer) commit(batch []*request) {
	ctx := context.Background()
	now := time.Now().UTC()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		w.answerAll(batch, fmt.Errorf("begin: %w", err))
		return
	}
	live := 0
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.fail = err
			continue
		}
		r.tx = &Tx{IDB: tx, now: now}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT req"); err != nil {
			r.fail = fmt.Errorf("savepoint: %w", err)
			continue
		}
		if err := r.fn(r.tx); err != nil {
			r.fail = err
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO req"); rerr != nil {
				_ = tx.Rollback()
				w.answerAll(batch, fmt.Errorf("rollback to savepoint: %w", rerr))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE req"); err != nil {
			_ = tx.Rollback()
			w.answerAll(batch, fmt.Errorf("release savepoint: %w", err))
			return
		}
		if r.fail == nil {
			live++
		}
	}
	if live == 0 {
		_ = tx.Rollback()
		w.answerEach(batch)
		return
	}
	if err := tx.Commit(); err != nil {
		w.answerAll(batch, fmt.Errorf("commit: %w", err))
		return
	}
	if w.onCommit != nil {
		var all []Committed
		for _, r := range batch {
			if r.fail == nil {
				all = append(all, r.tx.committed...)
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
		r.res <- r.fail
	}
}

func (w *Writer) answerAll(batch []*request, err error) {
	for _, r := range batch {
		if r.fail == nil {
			r.fail = err
		}
		r.res <- r.fail
	}
}
