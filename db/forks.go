package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"albedo/wire"
)

// A fork is a session whose history is another's events 1..at, then its
// own. Those first events are not copied: the fork's row names where they
// are stored (base_session, base), and its reads go through its Spans.
// A fork costs a row, whatever the size of the session it forks.
//
// Deleting a session its forks read hands its rows up to the furthest
// fork point to the fork that reads furthest (the heir), which then reads
// the rest where its parent did; the other forks read the heir's rows.
// A fork thus stays whole without a parent, and nothing is ever copied.

// Errors of a fork request.
var (
	// ErrOutOfRange is a fork point outside the parent's log.
	ErrOutOfRange = errors.New("offset out of range")
	// ErrNoInput is a rerun at an event that names no input.
	ErrNoInput = errors.New("no input to run again")
)

// ForkOf is what a fork request asks: the parent, the fork point, and
// the new session's row (id, epoch, title, …: its settings are the
// caller's to copy from the parent).
type ForkOf struct {
	Parent string
	At     int64
	Rerun  bool
	Child  Session
}

// Fork makes the fork f asks for, in the request's transaction: its row,
// reading the parent's events up to the fork point; a closing turn event
// when the fork point is inside a turn (interrupted, reason fork), so that
// no fork starts with a turn that never ends; and with Rerun, the receipt
// of the input being run again, queued (its message is the fork's last
// event). It returns the fork, and the rerun's receipt.
func (t *Tx) Fork(ctx context.Context, f ForkOf) (Session, *Input, error) {
	c, err := t.counters(ctx, f.Parent) // and lock its row
	if err != nil {
		return Session{}, nil, err
	}
	if f.At < 0 || f.At > c.head || (f.At == 0 && f.Rerun) {
		return Session{}, nil, fmt.Errorf("session %q has events 1..%d, not %d: %w", f.Parent, c.head, f.At, ErrOutOfRange)
	}
	p, err := scanSession(t.sql.QueryRowContext(ctx, t.bind(sessionSQL), f.Parent))
	if err != nil {
		return Session{}, nil, fmt.Errorf("read the parent: %w", err)
	}
	sp, err := spansOf(ctx, t.sql, t.batch.w.dialect, p)
	if err != nil {
		return Session{}, nil, err
	}
	at, input, err := t.forkPoint(ctx, sp, f)
	if err != nil {
		return Session{}, nil, err
	}
	last, err := t.lastTurnIn(ctx, sp, at)
	if err != nil {
		return Session{}, nil, err
	}
	s := f.Child
	s.Parent, s.ParentOffset, s.Base = f.Parent, at, at
	for _, span := range sp {
		if at == 0 {
			break // nothing to read from it
		}
		if span.After < at && at <= span.upto() {
			s.BaseSession = span.Session
		}
	}
	s.Version, s.Head, s.Inputs, s.LastTurn = 1, at, 0, last.State
	s.CreatedAt = formatTime(t.now)
	s.UpdatedAt = s.CreatedAt
	if _, err := t.NewInsert().Model(&s).Exec(ctx); err != nil {
		return Session{}, nil, fmt.Errorf("insert fork: %w", err)
	}
	t.setCounters(s.ID, counters{head: at, lastTurn: last.State, epoch: s.Epoch})
	t.record(ChangeCreated, s.ID, "")
	if err := t.forkTools(ctx, f.Parent, s.ID); err != nil {
		return Session{}, nil, err
	}
	if err := t.forkBlobRefs(ctx, f.Parent, s.ID, at); err != nil {
		return Session{}, nil, err
	}
	if last.State == wire.TurnStarted {
		end := wire.Event{Type: wire.EventTurn, TurnID: last.TurnID, InputID: last.InputID,
			State: wire.TurnInterrupted, Reason: wire.ReasonFork}
		evs, err := t.Append(ctx, s.ID, end)
		if err != nil {
			return Session{}, nil, err
		}
		s.Head, s.LastTurn = evs[0].Offset, wire.TurnInterrupted
	}
	if input == nil {
		return s, nil, nil
	}
	in, err := t.rerun(ctx, s.ID, *input, at)
	return s, in, err
}

// forkPoint checks the fork point against the event there and returns it:
// for a rerun, the offset of the input's message, which it returns too.
func (t *Tx) forkPoint(ctx context.Context, sp Spans, f ForkOf) (int64, *wire.Event, error) {
	if f.At == 0 {
		return 0, nil, nil // none of its events: a fresh start with its settings
	}
	ev, err := t.eventAt(ctx, sp, f.At)
	if err != nil || !f.Rerun {
		return f.At, nil, err
	}
	if ev.Type != wire.EventMessage || ev.InputID == "" || (ev.Role != wire.RoleUser && ev.Role != wire.RoleAssistant) {
		return 0, nil, fmt.Errorf("event %d is no user's or assistant's message: %w", f.At, ErrNoInput)
	}
	if ev.Role == wire.RoleUser {
		return f.At, &ev, nil
	}
	// An assistant's reply: the input it answered, newest first and not
	// far back (a reply follows its input by its turn's queue).
	var msg *wire.Event
	err = newestOf(ctx, t.sql, t.batch.w.dialect, sp, string(wire.EventMessage), f.At, rerunReach, func(e Event) bool {
		var m wire.Event
		if json.Unmarshal(e.JSON, &m) == nil && m.Role == wire.RoleUser && m.InputID == ev.InputID {
			msg = &m
			return false
		}
		return true
	})
	if err != nil {
		return 0, nil, fmt.Errorf("find the input of event %d: %w", f.At, err)
	}
	if msg == nil {
		return 0, nil, fmt.Errorf("the input of event %d is not among the %d messages before it: %w", f.At, rerunReach, ErrNoInput)
	}
	return msg.Offset, msg, nil
}

// rerunReach is how many messages before an assistant's reply a rerun
// looks through for the input the reply answered.
const rerunReach = 1000

// eventAt reads the event at offset off of a log.
func (t *Tx) eventAt(ctx context.Context, sp Spans, off int64) (wire.Event, error) {
	var ev wire.Event
	found := false
	err := newestOf(ctx, t.sql, t.batch.w.dialect, sp, "", off, 1, func(e Event) bool {
		found = e.Offset == off
		if found {
			err := json.Unmarshal(e.JSON, &ev)
			found = err == nil
		}
		return false
	})
	if err != nil {
		return ev, fmt.Errorf("read event %d: %w", off, err)
	}
	if !found {
		// Past the head as committed: an event of this very batch.
		return ev, fmt.Errorf("event %d is not committed yet: %w", off, ErrOutOfRange)
	}
	return ev, nil
}

// lastTurnIn reads the newest turn event of a log at or before off (the
// zero event if none).
func (t *Tx) lastTurnIn(ctx context.Context, sp Spans, off int64) (wire.Event, error) {
	var ev wire.Event
	err := newestOf(ctx, t.sql, t.batch.w.dialect, sp, string(wire.EventTurn), off, 1, func(e Event) bool {
		return json.Unmarshal(e.JSON, &ev) != nil
	})
	if err != nil {
		return wire.Event{}, fmt.Errorf("read the last turn: %w", err)
	}
	return ev, nil
}

// rerun stores the receipt of msg's input in the fork session, queued
// under a new turn id: its turn runs again there.
func (t *Tx) rerun(ctx context.Context, session string, msg wire.Event, at int64) (*Input, error) {
	turn, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("turn id: %w", err)
	}
	now := formatTime(t.now)
	in := Input{
		Session: session, InputID: msg.InputID, Ord: 1, TextHash: textHash(msg.Text),
		State: wire.ReceiptAccepted, Delivery: wire.DeliveryQueued, TurnID: turn.String(),
		MsgOffset: at, CreatedAt: now, UpdatedAt: now,
	}
	if _, err := t.NewInsert().Model(&in).Exec(ctx); err != nil {
		return nil, fmt.Errorf("insert the rerun's input: %w", err)
	}
	c, _ := t.ownCounters(session)
	c.inputs = 1
	t.setCounters(session, c)
	return &in, nil
}

// handOn gives the rows of a session being deleted that its forks read
// to its heir, the fork that reads furthest (see the top of this file).
// It runs before the session's rows are deleted, and after its input ids
// are (they are found through its events).
func (t *Tx) handOn(ctx context.Context, id string) error {
	var heir string
	var upto int64
	err := t.sql.QueryRowContext(ctx, t.bind(`SELECT id, base FROM sessions WHERE base_session = ? ORDER BY base DESC, id LIMIT 1`), id).Scan(&heir, &upto)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find the heir: %w", err)
	}
	var base string
	var baseAt int64
	if err := t.sql.QueryRowContext(ctx, t.bind(`SELECT base_session, base FROM sessions WHERE id = ?`), id).Scan(&base, &baseAt); err != nil {
		return fmt.Errorf("read the session's base: %w", err)
	}
	type stmt struct {
		what, sql string
		args      []any
	}
	stmts := []stmt{
		{"events", `UPDATE events SET session = ? WHERE session = ? AND "offset" <= ?`, []any{heir, id, upto}},
		{"logged events", `UPDATE events_log SET session = ? WHERE session = ? AND "offset" <= ?`, []any{heir, id, upto}},
		{"the heir's base", `UPDATE sessions SET base_session = ?, base = ? WHERE id = ?`, []any{base, baseAt, heir}},
		{"the other forks' base", `UPDATE sessions SET base_session = ? WHERE base_session = ?`, []any{heir, id}},
	}
	if t.batch.w.dialect.pg { // SQLite's docids go with their events
		stmts = append(stmts, stmt{"search documents", `UPDATE search_docs SET session = ? WHERE session = ? AND "offset" <= ?`, []any{heir, id, upto}})
	}
	for _, s := range stmts {
		if _, err := t.sql.ExecContext(ctx, t.bind(s.sql), s.args...); err != nil {
			return fmt.Errorf("hand on %s: %w", s.what, err)
		}
	}
	return nil
}

// Forks lists the forks of a session, by fork point and then age: at
// most MaxForks of them.
func (d *DB) Forks(ctx context.Context, parent string) ([]Session, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT `+sessionColumns+` FROM sessions_now
		WHERE parent = ? ORDER BY parent_offset, created_at, id LIMIT ?`), parent, MaxForks)
	if err != nil {
		return nil, fmt.Errorf("list forks: %w", err)
	}
	out, err := scanRows(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("list forks: %w", err)
	}
	return out, nil
}

// ForkCount counts the forks made of parent (those since deleted not).
func (t *Tx) ForkCount(ctx context.Context, parent string) (int, error) {
	var n int
	if err := t.sql.QueryRowContext(ctx, t.bind(`SELECT count(*) FROM sessions WHERE parent = ?`), parent).Scan(&n); err != nil {
		return 0, fmt.Errorf("count forks: %w", err)
	}
	return n, nil
}

// MaxForks bounds a list of forks.
const MaxForks = 1000
