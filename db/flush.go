package db

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"unsafe"

	"albedo/wire"
)

// flushBufs are the argument lists of a batch's statements (flush), and
// on PostgreSQL the copy of them that waits to be sent (batchTx.exec),
// kept for the next batch.
type flushBufs struct{ args, logArgs, ids, search, queued []any }

// maxKeptArgs bounds the lists flushBufs keeps (16 bytes an argument): a
// rare batch of many events does not leave its lists in memory.
const maxKeptArgs = 4096

// keep takes the lists back for the next batch, emptied so that they hold
// no event's bytes, or drops those grown past maxKeptArgs.
func (f *flushBufs) keep(args, logArgs, ids, search []any) {
	f.args, f.logArgs, f.ids, f.search = kept(args), kept(logArgs), kept(ids), kept(search)
}

// kept returns s emptied for reuse, with no event's bytes left in it, or
// nil if it grew past maxKeptArgs.
func kept[T any](s []T) []T {
	if cap(s) > maxKeptArgs {
		return nil
	}
	clear(s[:cap(s)])
	return s[:0]
}

// flush writes what the accepted requests of the batch appended: their
// events in multi-row inserts (straight into events, or on SQLite those
// logs picks into the log, fold.go), the input ids their messages took,
// and, in multi-row updates, the counters and updated_at of each touched
// session whose events did not go to the log. A logged session's row is
// left as it was: reads see it through the view sessions_now, which
// takes what is newer from the log, and the fold writes it (migration
// sessions_now): rewriting the row of every session of a batch of many
// was the largest single cost of the batch. Doing this once per batch
// instead of once per request is most of what group commit saves. The
// statements come in a few sizes only (stmtRows), so that each is
// prepared once per connection and kept. It returns how many events it
// wrote to the log.
func (b *batchState) flush(ctx context.Context, tx *batchTx, reqs []*request) (nlogged int, _ error) {
	// The argument lists are the writer's, from batch to batch: grown
	// anew for each, they were much of what the daemon allocated per
	// input.
	bufs := &b.w.bufs
	b.w.docs = kept(b.w.docs) // a failed run's
	args, logArgs, ids, search := b.eventArgs(reqs, bufs.args[:0], bufs.logArgs[:0], bufs.ids[:0], bufs.search[:0])
	defer func() { bufs.keep(args, logArgs, ids, search) }()
	// database/sql directly: bun would inline every argument into the SQL
	// text, and SQLite would parse megabytes of it.
	d, stmts := b.w.dialect, b.w.dialect.flushStmts()
	if err := insertRows(ctx, tx, d, stmts.insertEvents.get, stmts.eventColumns, args); err != nil {
		return 0, fmt.Errorf("insert events: %w", err)
	}
	if err := insertRows(ctx, tx, d, stmts.insertLog.get, logColumns, logArgs); err != nil {
		return 0, fmt.Errorf("log events: %w", err)
	}
	// A taken id fails here: optimistically, the batch then runs again
	// carefully, and that run finds the input it repeats (putPost).
	if err := insertRows(ctx, tx, d, stmts.insertInputIDs.get, inputIDColumns, ids); err != nil {
		return 0, fmt.Errorf("insert input ids: %w", err)
	}
	var err error
	if search, err = b.index(ctx, tx, stmts, search); err != nil {
		return 0, err
	}
	if args, err = b.updateSessions(ctx, tx, stmts, args); err != nil {
		return 0, err
	}
	if b.w.shared {
		if err := b.recordChanges(ctx, tx, reqs); err != nil { // last: see recordChanges
			return 0, err
		}
	}
	return len(logArgs) / logColumns, nil
}

// eventArgs appends the parameters of the events the accepted requests
// of reqs keep: to args those that go straight into events, to logArgs
// those that go to the log (recording their sessions in
// batchMaps.logged), to ids those of the input ids their messages take,
// and to search what the index takes of each document (document).
func (b *batchState) eventArgs(reqs []*request, args, logArgs, ids, search []any) (_, _, _, _ []any) {
	var atArg any = b.at              // boxed once, not once per row
	types := map[wire.EventType]any{} // the same for the few event types
	logged := b.w.maps.logged         // sessions whose events went to the log
	count := b.countEvents(reqs)
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
				search = b.document(e, to, search)
			}
		}
	}
	return args, logArgs, ids, search
}

// document appends what the search index takes of e, if e is a document
// (search.go): on PostgreSQL its (session, offset, text) to search; on
// SQLite the docid the writer gives it now, in commit order, to its row
// in row (a NULL there if it is none), and its text to Writer.docs for
// the indexer.
func (b *batchState) document(e Event, row *[]any, search []any) []any {
	w := b.w
	switch {
	case w.dialect.pg:
		if e.Meta.Text != "" {
			search = append(search, e.Session, e.Offset, e.Meta.Text)
		}
	case e.Meta.Text == "":
		*row = append(*row, nil)
	default:
		w.lastDoc++
		*row = append(*row, w.lastDoc)
		w.docs = append(w.docs, indexDoc{w.lastDoc, e.Meta.Text})
	}
	return search
}

// countEvents counts, in batchMaps.count, each session's events that the
// accepted requests of reqs keep: where a session's events go depends on
// them (fold.go), those of a session with few of them in a batch of many
// sessions to the log, the rest straight into events.
func (b *batchState) countEvents(reqs []*request) map[string]int {
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
	return count
}

// updateSessions writes, in multi-row updates, the counters of each
// session the batch touched whose events did not go to the log, and the
// batch's updated_at. It builds each update's parameters in args, and
// returns args as it grew, for the writer to keep.
func (b *batchState) updateSessions(ctx context.Context, tx *batchTx, stmts *flushStmts, args []any) ([]any, error) {
	var sessions []string
	for id, c := range b.heads {
		if c.head >= 0 && !b.w.maps.logged[id] {
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
		args = append(args, b.at)
		for _, id := range sessions[:n] {
			args = append(args, id)
		}
		if err := tx.exec(ctx, b.w.dialect.bind(stmts.updateSessions.get(n)), args...); err != nil {
			return args, fmt.Errorf("update heads: %w", err)
		}
		sessions = sessions[n:]
	}
	return args, nil
}

// insertRows inserts the rows in args (columns parameters each) with
// statements of stmtRows rows: sql(n) is the statement for n of them.
func insertRows(ctx context.Context, tx *batchTx, d *dialect, sql func(n int) string, columns int, args []any) error {
	for rows := len(args) / columns; rows > 0; {
		n := stmtRows(rows)
		if err := tx.exec(ctx, d.bind(sql(n)), args[:n*columns]...); err != nil {
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
// of two up to maxStmtRows), made once rather than for each batch: their
// text is long, and always the same.
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
	// eventColumns is how many parameters an event's row takes in
	// insertEvents: on SQLite its docid too (logColumns).
	eventColumns int
	// PostgreSQL's search documents with their tsvector (search.go);
	// SQLite's docids are in the events' rows.
	insertDocs *sizedStmts
}

// newFlushStmts makes the statements with the conflict clause or (" OR
// ROLLBACK", or "" for none) after their INSERT or UPDATE; cols is how
// many parameters an event's row takes in events: eventColumns, or on
// SQLite logColumns (its docid too).
func newFlushStmts(or string, cols int) *flushStmts {
	return &flushStmts{
		insertEvents:   sized(insertEventsSQL(or, "events", cols)),
		eventColumns:   cols,
		insertLog:      sized(insertEventsSQL(or, "events_log", logColumns)),
		insertInputIDs: sized(insertInputIDsSQL(or)),
		updateSessions: sized(updateSessionsSQL(or)),
	}
}

// On SQLite a batch's statements roll the transaction back when they fail
// (OR ROLLBACK) instead of undoing only themselves (ABORT, the default). To
// undo only itself, a statement that writes several rows first copies every
// page it is about to change into a statement journal, a cost paid on every
// batch and most of all by folds, which write many pages. The writer never
// keeps a transaction whose flush or fold failed: a batch is rolled back
// whole (and run again carefully, or failed), a fold is rolled back and
// tried again later. A batch's straight insert into events still keeps a
// journal, for its foreign key's check (the fold runs with foreign keys
// off). PostgreSQL has no such clause, nor the journal.
var sqliteFlush, pgFlush = newFlushStmts(" OR ROLLBACK", logColumns), newFlushStmts("", eventColumns)

func init() {
	pgFlush.insertDocs = sized(insertSearchTSVSQL)
}

// flushStmts returns the batch's statements for the backend.
func (d *dialect) flushStmts() *flushStmts {
	if d.pg {
		return pgFlush
	}
	return sqliteFlush
}

// logColumns is how many parameters a row of SQLite's events or its log
// takes: an event's, and its docid.
const logColumns = eventColumns + 1

// insertEventsSQL returns the statement that inserts n events into table,
// cols parameters each: eventColumns, or logColumns with their docids.
func insertEventsSQL(or, table string, cols int) func(n int) string {
	names := `session, "offset", type, payload, at, input_id, ord`
	if cols == logColumns {
		names += ", docid"
	}
	row := "(?" + strings.Repeat(",?", cols-1) + ")"
	return func(n int) string {
		return `INSERT` + or + ` INTO ` + table + ` (` + names + `) VALUES ` + row + strings.Repeat(","+row, n-1)
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
