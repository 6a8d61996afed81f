package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
)

// A batch's transaction. On SQLite it is database/sql's, and every
// statement is a call into the library. On PostgreSQL every statement is
// a round trip to the server, and a batch of bot posts made seven: BEGIN,
// the sessions' locks, four inserts and an update, and COMMIT, each
// waiting for the one before it. The writer there drives the transaction
// itself on a connection of the pool, in pgx's pipeline mode: BEGIN goes
// with the locks (their counters are needed before the requests run),
// and the flush's statements go with COMMIT, which makes two round trips
// of seven. What a request runs itself (a look-up, an insert whose result
// it reads) still goes at once, on the same connection, inside the same
// transaction.

// sqlTx runs statements with parameters in a batch's transaction: a
// *sql.Tx on SQLite, the batch's *sql.Conn on PostgreSQL.
type sqlTx interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// batchTx is one batch's transaction.
type batchTx struct {
	bun.IDB       // for bun's queries: the bun.Tx, or the bun.Conn
	sql     sqlTx // the same, for statements with parameters

	tx bun.Tx // SQLite

	// PostgreSQL: the connection whose transaction this is (nil once
	// given back), and the flush's statements, waiting to go with
	// COMMIT. args holds their parameters: the flush builds each
	// statement's in lists it reuses for the next, and pgx reads them
	// only when it sends.
	conn  *sql.Conn
	queue pgx.Batch
	args  []any
	bufs  *flushBufs
}

// pgx hands fn the driver's connection under bt.conn, for the length of
// fn. A connection left broken, or in a transaction, goes back to the
// pool all the same: the pool's next use of it closes it (pgx's
// ResetSession).
func (bt *batchTx) pgx(fn func(*pgx.Conn) error) error {
	return bt.raw(func(lc *literalConn) error { return fn(lc.Conn.Conn()) })
}

// raw hands fn the driver's connection under bt.conn.
func (bt *batchTx) raw(fn func(*literalConn) error) error {
	return bt.conn.Raw(func(dc any) error { return fn(dc.(*literalConn)) })
}

// begin opens a batch's transaction. On PostgreSQL it locks session rows
// in the same round trip: needs, waiting, when a run of the batch found
// one locked by another daemon; else the sessions the batch's writes
// name, with NOWAIT (lock.go).
func (w *Writer) begin(ctx context.Context, b *batchState, batch []*request, needs map[string]bool) (*batchTx, error) {
	if !w.shared {
		tx, err := w.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("begin: %w", err)
		}
		return &batchTx{IDB: tx, sql: tx.Tx, tx: tx}, nil
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	bt := &batchTx{IDB: conn, sql: conn.Conn, conn: conn.Conn, args: w.bufs.queued, bufs: &w.bufs}
	q := &bt.queue
	q.Queue("BEGIN")
	lock, nowait := needs, false
	if lock == nil {
		lock, nowait = named(batch), true
	}
	ids := b.toLock(lock)
	if len(ids) > 0 {
		q.Queue(lockSQL(nowait), ids)
	}
	err = bt.raw(func(lc *literalConn) error {
		// Until release, a statement of the batch's own sends what
		// queue holds first.
		lc.first = bt.sendQueued
		br := lc.Conn.Conn().SendBatch(ctx, q)
		_, err := br.Exec()
		if err == nil && len(ids) > 0 {
			err = b.scanLocked(br)
		}
		if cerr := br.Close(); err == nil {
			err = cerr // else it is err again, said once
		}
		return err
	})
	bt.forget()
	if err != nil {
		bt.rollback()
		if pgCode(err) == pgLockNotAvailable {
			return nil, errLockBusy
		}
		return nil, fmt.Errorf("begin and lock sessions: %w", err)
	}
	return bt, nil
}

// queues says whether exec queues statements (PostgreSQL) rather than
// running them at once (SQLite).
func (bt *batchTx) queues() bool { return bt.tx.Tx == nil }

// exec runs a statement whose result nobody reads, and whose parameters
// the caller may reuse once it returns: at once on SQLite; on PostgreSQL
// with COMMIT, or before the next statement that runs at once on the
// batch's connection (literalConn), and whose error that statement or
// commit returns, as a flushError.
func (bt *batchTx) exec(ctx context.Context, query string, args ...any) error {
	if bt.tx.Tx != nil {
		_, err := bt.tx.Tx.ExecContext(ctx, query, args...)
		return err
	}
	from := len(bt.args)
	bt.args = append(bt.args, args...)
	bt.queue.Queue(query, bt.args[from:len(bt.args):len(bt.args)]...)
	return nil
}

// flushError is a queued statement (exec) that failed when it was sent:
// the batch is rolled back, as when the statement fails on SQLite.
type flushError struct{ err error }

func (e *flushError) Error() string { return e.err.Error() }
func (e *flushError) Unwrap() error { return e.err }

// commit commits the transaction: on PostgreSQL with the flush's queued
// statements before COMMIT, in one round trip. Their failure is a
// flushError and leaves the transaction to roll back; COMMIT's own is
// any other error.
func (bt *batchTx) commit(ctx context.Context) error {
	if bt.tx.Tx != nil {
		return bt.tx.Commit()
	}
	return bt.send(ctx, true)
}

// send sends the queued statements, with COMMIT after them if commit,
// and reads their results.
func (bt *batchTx) send(ctx context.Context, commit bool) error {
	err := bt.pgx(func(c *pgx.Conn) error { return bt.sendOn(ctx, c, commit) })
	if err == nil && commit {
		bt.release()
	}
	return err
}

// sendQueued sends the queued statements on c, the batch's connection,
// if there are any: literalConn's first.
func (bt *batchTx) sendQueued(ctx context.Context, c *pgx.Conn) error {
	if len(bt.queue.QueuedQueries) == 0 {
		return nil
	}
	return bt.sendOn(ctx, c, false)
}

// sendOn is send on c, the batch's connection.
func (bt *batchTx) sendOn(ctx context.Context, c *pgx.Conn, commit bool) error {
	q := &bt.queue
	queued := len(q.QueuedQueries)
	if commit {
		q.Queue("COMMIT")
	}
	failed := -1 // the statement whose error ended the pipeline
	br := c.SendBatch(ctx, q)
	var err error
	for i := range q.QueuedQueries {
		if _, err = br.Exec(); err != nil {
			failed = i
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	bt.forget()
	if err != nil && failed >= 0 && failed < queued {
		return &flushError{err} // COMMIT never ran: the transaction is open, aborted
	}
	return err
}

// forget empties the queue and its parameters, and gives the list of
// parameters back to the writer for its next batch (flushBufs.keep).
func (bt *batchTx) forget() {
	clear(bt.queue.QueuedQueries)
	bt.queue.QueuedQueries = bt.queue.QueuedQueries[:0]
	bt.bufs.queued = kept(bt.args)
	bt.args = bt.bufs.queued
}

// rollback ends the transaction without keeping anything; on
// PostgreSQL, once COMMIT ran or failed too.
func (bt *batchTx) rollback() {
	if bt.tx.Tx != nil {
		_ = bt.tx.Rollback()
		return
	}
	if bt.conn == nil {
		return // committed, and given back
	}
	_ = bt.pgx(func(c *pgx.Conn) error {
		if c.PgConn().TxStatus() == 'I' { // BEGIN failed, or COMMIT ran
			return nil
		}
		if _, err := c.Exec(context.Background(), "ROLLBACK"); err != nil {
			return driver.ErrBadConn // closed, not given back in a transaction
		}
		return nil
	})
	bt.forget()
	bt.release()
}

// release gives the connection back to the pool.
func (bt *batchTx) release() {
	if bt.conn != nil {
		_ = bt.raw(func(lc *literalConn) error { lc.first = nil; return nil })
		_ = bt.conn.Close()
		bt.conn = nil
	}
}

// toLock records sessions in b as needed, and as locked with no row
// (deleted) until scanLocked reads theirs, and returns them in id order,
// the order every daemon locks them in.
func (b *batchState) toLock(sessions map[string]bool) []string {
	b.locked = map[string]counters{}
	b.needs = map[string]bool{}
	ids := make([]string, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
		b.needs[id] = true
		b.locked[id] = counters{head: -1}
	}
	slices.Sort(ids)
	return ids
}

// lockSQL locks the rows of the sessions in $1, in id order.
func lockSQL(nowait bool) string {
	q := `SELECT id, head, inputs, last_turn, epoch FROM sessions WHERE id = ANY($1) ORDER BY id FOR UPDATE`
	if nowait {
		q += ` NOWAIT`
	}
	return q
}

// scanLocked records the counters of the rows the lock's statement
// returned.
func (b *batchState) scanLocked(br pgx.BatchResults) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var c counters
		if err := rows.Scan(&id, &c.head, &c.inputs, &c.lastTurn, &c.epoch); err != nil {
			return err
		}
		b.locked[id] = c
	}
	return rows.Err()
}
