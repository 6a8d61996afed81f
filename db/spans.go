package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"albedo/wire"
)

// ErrMoved says that events a read expected under one session were not
// there: a parent's deletion handed them to one of its forks
// (DeleteSession) after the reader resolved its Spans. The reader
// resolves them again (SpansOf) and reads again.
var ErrMoved = errors.New("a fork's events moved to another session")

// Span is a range of a session's log as it is stored: the events at
// offsets After+1..Upto are rows of Session (Upto 0: no end).
type Span struct {
	Session     string
	After, Upto int64
}

// Spans is a session's log as stored, oldest first. A session that is no
// fork is one span, its own. A fork's first events are its parent's rows,
// never copied (forks.go), so its spans are its ancestors' up to its
// fork point, then its own.
type Spans []Span

// Own is the spans of a session that is no fork.
func Own(session string) Spans { return Spans{{Session: session}} }

// Session is the session the spans are the log of.
func (sp Spans) Session() string { return sp[len(sp)-1].Session }

// Forked says whether the log starts in another session's rows.
func (sp Spans) Forked() bool { return len(sp) > 1 }

// upto is the span's last offset, math.MaxInt64 for the open one.
func (s Span) upto() int64 {
	if s.Upto == 0 {
		return math.MaxInt64
	}
	return s.Upto
}

// querier is what reads: the readers' pool, a read snapshot, or the
// writer's transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// maxForkDepth bounds a walk up the stored spans, which a fork of a fork
// of … makes one longer each.
const maxForkDepth = 10000

// spansOf resolves the spans of s (a row just read through q).
func spansOf(ctx context.Context, q querier, d *dialect, s Session) (Spans, error) {
	if s.BaseSession == "" {
		return Own(s.ID), nil
	}
	out := Spans{{Session: s.ID, After: s.Base}}
	src, upto := s.BaseSession, s.Base
	for src != "" {
		if len(out) > maxForkDepth {
			return nil, fmt.Errorf("session %q: forks deeper than %d", s.ID, maxForkDepth)
		}
		var next string
		var base int64
		err := q.QueryRowContext(ctx, d.bind(`SELECT base_session, base FROM sessions WHERE id = ?`), src).Scan(&next, &base)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("session %q reads %q, which is gone: %w", s.ID, src, ErrMoved)
		}
		if err != nil {
			return nil, fmt.Errorf("read a fork's spans: %w", err)
		}
		out = append(out, Span{Session: src, After: base, Upto: upto})
		src, upto = next, base
	}
	slices.Reverse(out)
	return out, nil
}

// SpansOf reads a session and resolves its spans in one snapshot, or
// returns ErrNotFound.
func (d *DB) SpansOf(ctx context.Context, id string) (Session, Spans, error) {
	rtx, err := d.ro.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Session{}, nil, fmt.Errorf("read session: %w", err)
	}
	defer rtx.Rollback()
	return d.spansIn(ctx, rtx, id)
}

// inSnapshot calls f with a read snapshot and the spans of session
// resolved in it: a fork's read, which its parent's deletion must not
// move under it.
func (d *DB) inSnapshot(ctx context.Context, session string, f func(*sql.Tx, Spans) error) error {
	rtx, err := d.ro.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer rtx.Rollback()
	_, sp, err := d.spansIn(ctx, rtx, session)
	if err != nil {
		return err
	}
	return f(rtx, sp)
}

// spansIn is SpansOf in the snapshot rtx.
func (d *DB) spansIn(ctx context.Context, rtx *sql.Tx, id string) (Session, Spans, error) {
	s, err := scanSession(rtx.QueryRowContext(ctx, d.dialect.bind(sessionSQL), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Session{}, nil, fmt.Errorf("read session: %w", err)
	}
	sp, err := spansOf(ctx, rtx, d.dialect, s)
	return s, sp, err
}

// The reads of a span: a range of one session's rows, in both tables on
// SQLite (bothTables), in events alone on PostgreSQL, which never uses the
// log: there, the UNION ALL of an empty table hid the order of the
// primary key from the planner, which sorted every row of the range for
// a LIMIT 1.
const (
	spanAfterSQL  = `SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" > ? AND "offset" <= ?`
	spanBeforeSQL = `SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" > ? AND "offset" < ?`
	spanAnySQL    = `SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" > ? AND "offset" <= ? AND type <> ?`
	ascending     = ` ORDER BY "offset" LIMIT ?`
	descending    = ` ORDER BY "offset" DESC LIMIT ?`
)

// spanTypesSQL is the read of a span's events of n types (1 to
// maxTypes), for typesIn.
var spanTypesSQL = typesSQL(`SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" > ? AND "offset" <= ? AND `, "")

// maxTypes is the most types one read of events asks for.
const maxTypes = 4

// typesSQL is, for each n from 1 to maxTypes, head then a condition on
// an event's type being one of n, then tail: type = ?, or several joined
// by OR. Not an IN list of bound values: SQLite builds a table of its
// own for one at every statement, which a turn's transcript read (many
// a second) felt.
func typesSQL(head, tail string) [maxTypes + 1]string {
	var out [maxTypes + 1]string
	for n := 1; n <= maxTypes; n++ {
		cond := "type = ?"
		if n > 1 {
			cond = "(type = ?" + strings.Repeat(" OR type = ?", n-1) + ")"
		}
		out[n] = head + cond + tail
	}
	return out
}

// spanRead runs the read q of a span, its rows in order (ascending or
// descending), with its parameters and then the limit.
func spanRead(ctx context.Context, q querier, d *dialect, sql, order string, limit int, args ...any) (*sql.Rows, error) {
	if d.pg {
		return q.QueryContext(ctx, d.bind(sql+order), append(args, limit)...)
	}
	all := append(append(args, args...), limit)
	return q.QueryContext(ctx, bothTables(sql)+order, all...)
}

// EventsAfterIn is EventsAfter over a session's spans (SpansOf). A span
// of a parent must hold every offset of its range: one that does not has
// moved (ErrMoved).
func (d *DB) EventsAfterIn(ctx context.Context, sp Spans, after int64, limit, maxBytes int) ([]Event, error) {
	if !sp.Forked() {
		return d.eventsAfter(ctx, sp.Session(), after, limit, maxBytes)
	}
	var out []Event
	size := 0
	for _, s := range sp {
		if after >= s.upto() {
			continue
		}
		if len(out) >= limit || (maxBytes > 0 && size >= maxBytes) {
			break
		}
		from := max(after, s.After)
		rows, err := spanRead(ctx, d.ro.DB, d.dialect, spanAfterSQL, ascending, limit-len(out), s.Session, from, s.upto())
		if err != nil {
			return nil, fmt.Errorf("events after %d: %w", after, err)
		}
		page, err := scanEvents(rows, sp.Session(), maxBytes-size)
		if err != nil {
			return nil, fmt.Errorf("events after %d: %w", after, err)
		}
		for i, e := range page {
			if e.Offset != from+int64(i)+1 {
				return nil, fmt.Errorf("events after %d: %w", after, ErrMoved)
			}
			size += len(e.JSON)
		}
		out = append(out, page...)
		full := len(out) >= limit || (maxBytes > 0 && size >= maxBytes)
		if s.Upto != 0 && !full && from+int64(len(page)) < s.Upto {
			return nil, fmt.Errorf("events after %d: %w", after, ErrMoved)
		}
		if len(page) > 0 {
			after = page[len(page)-1].Offset
		}
	}
	return out, nil
}

// EventsBeforeIn is EventsBefore over a session's spans, as EventsAfterIn
// is EventsAfter.
func (d *DB) EventsBeforeIn(ctx context.Context, sp Spans, before int64, limit, maxBytes int) ([]Event, error) {
	if !sp.Forked() {
		return d.eventsBefore(ctx, sp.Session(), before, limit, maxBytes)
	}
	var out []Event // newest first
	size := 0
	for i := len(sp) - 1; i >= 0; i-- {
		s := sp[i]
		if before <= s.After+1 {
			continue
		}
		if len(out) >= limit || (maxBytes > 0 && size >= maxBytes) {
			break
		}
		to := before // the rows below to
		if s.Upto != 0 {
			to = min(before, s.Upto+1)
		}
		rows, err := spanRead(ctx, d.ro.DB, d.dialect, spanBeforeSQL, descending, limit-len(out), s.Session, s.After, to)
		if err != nil {
			return nil, fmt.Errorf("events before %d: %w", before, err)
		}
		page, err := scanEvents(rows, sp.Session(), maxBytes-size)
		if err != nil {
			return nil, fmt.Errorf("events before %d: %w", before, err)
		}
		for j, e := range page {
			if s.Upto != 0 && e.Offset != to-int64(j)-1 {
				return nil, fmt.Errorf("events before %d: %w", before, ErrMoved)
			}
			size += len(e.JSON)
		}
		out = append(out, page...)
		full := len(out) >= limit || (maxBytes > 0 && size >= maxBytes)
		if s.Upto != 0 && !full && to-int64(len(page)) > s.After+1 {
			return nil, fmt.Errorf("events before %d: %w", before, ErrMoved)
		}
		if len(page) > 0 {
			before = page[len(page)-1].Offset
		} else {
			before = s.After + 1
		}
	}
	slices.Reverse(out)
	return out, nil
}

// newestOf calls each with the events of one type (any, for "") in a
// session's spans at offsets up to upto, newest first, until it returns
// false or limit have been read. The spans must be of the snapshot q
// reads.
func newestOf(ctx context.Context, q querier, d *dialect, sp Spans, typ string, upto int64, limit int, each func(Event) bool) error {
	query, args := spanTypesSQL[1], []any{typ}
	if typ == "" {
		query = spanAnySQL
	}
	return newestIn(ctx, q, d, sp, query, args, upto, limit, each)
}

// Newest calls each with a session's events of any of types (1 to
// maxTypes) at offsets up to upto, newest first, through its spans, until it
// returns false or limit have been read: the messages, tool calls and
// compactions a turn's transcript is made of (hub's compaction.go).
//
// sp is the session's spans as the caller keeps them: for a session that
// is no fork (which never becomes one) they are used as they are; a
// fork's are resolved again, in the read's snapshot, as its parent's
// deletion may have moved them.
func (d *DB) Newest(ctx context.Context, sp Spans, types []wire.EventType, upto int64, limit int, each func(Event) bool) error {
	query, args := spanTypesSQL[len(types)], typeArgs(types)
	if !sp.Forked() {
		return newestIn(ctx, d.ro.DB, d.dialect, sp, query, args, upto, limit, each)
	}
	err := d.inSnapshot(ctx, sp.Session(), func(rtx *sql.Tx, sp Spans) error {
		return newestIn(ctx, rtx, d.dialect, sp, query, args, upto, limit, each)
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", sp.Session(), err)
	}
	return nil
}

// typeArgs is types as the parameters of a typesSQL condition.
func typeArgs(types []wire.EventType) []any {
	if len(types) == 0 || len(types) > maxTypes {
		panic(fmt.Sprintf("db: %d event types where 1 to %d are read", len(types), maxTypes))
	}
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = string(t)
	}
	return args
}

// newestIn is newestOf with the query (a span's read, then its
// conditions' args).
func newestIn(ctx context.Context, q querier, d *dialect, sp Spans, query string, extra []any, upto int64, limit int, each func(Event) bool) error {
	n := 0
	for i := len(sp) - 1; i >= 0 && n < limit; i-- {
		s := sp[i]
		hi := min(upto, s.upto())
		if hi <= s.After {
			continue
		}
		rows, err := spanRead(ctx, q, d, query, descending, limit-n, append([]any{s.Session, s.After, hi}, extra...)...)
		if err != nil {
			return err
		}
		stop := false
		for rows.Next() && !stop {
			e := Event{Session: sp.Session()}
			if err := rows.Scan(&e.Offset, &e.Type, &e.JSON); err != nil {
				rows.Close()
				return err
			}
			n++
			stop = !each(e)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil || stop {
			return err
		}
	}
	return nil
}
