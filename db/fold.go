package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// On SQLite the events of a batch of many sessions with few events each go
// to events_log, a table in the order they are written (logs says which),
// and the writer moves them into events once the log holds foldRows of
// them (migration events_log). Written straight into events, a commit of
// one event in each of many sessions dirtied a page of events' (session,
// offset) key per session, and wrote each to the WAL whole: with many
// writers, most of what the store cost per input. The log's rows of one
// commit share its last pages, and a fold writes each session's events
// together: their rows at the end of events, a rowid table, and their
// key's entries a page for many (migration events_layout).
//
// Every read of events is the union of both tables (events.go), each
// through its (session, offset) index; an event is in exactly one of them
// in any snapshot, since a fold is one transaction. The log's index keeps
// reads of the newest events cheap, and its few pages are all a commit
// dirties of it, because the log never holds much more than foldRows.
// Nor does a batch rewrite the rows of the sessions it logs: every read
// of a session is of the view sessions_now, which takes their counters
// from the log, and the fold writes them (migration sessions_now).
// PostgreSQL writes events directly and never folds: it is shared by
// several daemons, and its heap is already in the order rows are written.

// logs says whether a session's n events of a batch that writes events
// of sessions sessions go to the log rather than straight into events.
// Straight in, a session's events of one batch cost a page of events
// (its last leaf), however many they are; logged, they share the log's
// pages with the other sessions' but are written again by the fold, the
// sessions' rows with them (BenchmarkFold). So the log takes a session's
// events when they are few in a batch of several sessions: a session's
// many events of one batch share their page of events anyway, and a
// writer with many posts in flight to one session was slower when they
// all went through the log; a batch of one session gains nothing from it.
func logs(n, sessions int) bool {
	return n < logBelow && sessions >= logFrom
}

// logBelow and logFrom are logs' bounds: the log takes fewer than
// logBelow events of a session, in a batch of logFrom sessions or more.
const logBelow, logFrom = 4, 4

// foldRowsDefault is how many logged events start a fold. A fold moves
// them in one transaction on the writer goroutine, which holds commits
// back meanwhile. More, and each fold holds them back longer, and the
// log's index spreads over more pages, each of which a commit may dirty
// (4096 cost more per input than 1024 under many writers); fewer, and
// more of a session's events land on a page of events apart.
const foldRowsDefault = 1024

// foldSQL moves the whole log into events, each session's events together
// and in order: the writer is the only one that writes to the log, and it
// folds between batches, so the log holds only what it committed. It and
// foldSessionsSQL fail by rolling the fold back, which spares them a
// statement journal (sqliteFlush).
const foldSQL = `INSERT OR ROLLBACK INTO events (session, "offset", type, payload, at, input_id, ord, docid)
	SELECT session, "offset", type, payload, at, input_id, ord, docid FROM events_log ORDER BY session, "offset"`

// foldSessionsSQL writes into each logged session's row what the view
// sessions_now takes from the log for it (flush leaves those rows as they
// were). It reads the log, so it runs before the log is emptied; the
// events just moved are in both tables then, which the view, reading only
// the log, does not mind.
const foldSessionsSQL = `UPDATE OR ROLLBACK sessions SET (head, inputs, updated_at, last_turn) = (
	SELECT n.head, n.inputs, n.updated_at, n.last_turn FROM sessions_now n WHERE n.id = sessions.id)
	WHERE id IN (SELECT session FROM events_log)`

// logged counts n events committed to the log, and folds it once it holds
// foldRows. A fold that fails leaves the log as it was (reads are right
// either way) and waits for another foldRows.
func (w *Writer) logged(n int) {
	if w.shared || n == 0 {
		return
	}
	if w.logRows += n; w.logRows < w.foldRows {
		return
	}
	rows := w.logRows
	w.logRows = 0
	t := time.Now()
	if err := fold(context.Background(), w.db.DB); err != nil {
		w.stats.foldErrors.Add(1)
	} else {
		w.stats.folds.Add(1)
		w.stats.foldedRows.Add(int64(rows))
	}
	since(&w.stats.fold, t)
}

// fold moves every event of the log into events, in one transaction,
// without checking each event's session for the foreign key: the log's
// events all have one (the writer appends only to a session it has, a batch
// does not write the events of a session it deletes, and DeleteSession
// deletes the session's logged ones), and the check was a large part of the
// fold's insert (BenchmarkFold). The pragma is a no-op inside a
// transaction, so it is set around it, on the writer's one connection.
func fold(ctx context.Context, db *sql.DB) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("fold: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return fmt.Errorf("fold: %w", err)
	}
	defer func() {
		// Deleting a session relies on the cascade to events and inputs.
		if _, ferr := conn.ExecContext(ctx, "PRAGMA foreign_keys = ON"); ferr != nil {
			err = errors.Join(err, fmt.Errorf("fold: foreign keys on again: %w", ferr))
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("fold: begin: %w", err)
	}
	if _, err := tx.ExecContext(ctx, foldSQL); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("fold: move the log: %w", err)
	}
	if _, err := tx.ExecContext(ctx, foldSessionsSQL); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("fold: bring the sessions' rows up to date: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM events_log`); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("fold: empty the log: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fold: commit: %w", err)
	}
	return nil
}
