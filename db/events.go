package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"albedo/api/wire"
)

// ErrNotFound is returned when a session or input does not exist.
var ErrNotFound = errors.New("not found")

// Event is one stored event. JSON is its wire encoding (wire.Event), kept as
// bytes so that fan-out and history pages never re-encode it.
type Event struct {
	Session string
	Offset  int64
	Type    wire.EventType
	JSON    []byte
	// Meta is set by Append, for the commit hook; events read back from
	// storage leave it empty and are decoded when needed.
	Meta Meta
}

// Meta is what the hub needs of an event to drive turns, so that the
// commit hook does not decode a message (and its text) to find it.
type Meta struct {
	Role                   wire.Role
	InputID, TurnID, State string
}

// Decode returns the event as a wire.Event.
func (e Event) Decode() (wire.Event, error) {
	var ev wire.Event
	err := json.Unmarshal(e.JSON, &ev)
	return ev, err
}

type eventRow struct {
	bun.BaseModel `bun:"table:events"`

	Session string         `bun:"session"`
	Offset  int64          `bun:"offset"`
	Type    wire.EventType `bun:"type"`
	Payload string         `bun:"payload"`
}

// Append adds events to the end of a session's log, assigning each the next
// offset and the batch's time. It returns ErrNotFound for a missing session.
// The events become visible to OnCommit and readers once the batch commits.
func (t *Tx) Append(ctx context.Context, session string, evs ...wire.Event) ([]Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	cur, err := t.head(ctx, session)
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(evs))
	for i, ev := range evs {
		ev.Offset = cur + int64(i) + 1
		ev.At = t.now
		out[i] = Event{Session: session, Offset: ev.Offset, Type: ev.Type, JSON: wire.Encode(ev),
			Meta: Meta{Role: ev.Role, InputID: ev.InputID, TurnID: ev.TurnID, State: ev.State}}
	}
	t.setHead(session, cur+int64(len(evs)))
	t.committed = append(t.committed, Committed{Session: session, Events: out})
	return out, nil
}

const insertEventsSQL = `INSERT INTO events (session, "offset", type, payload, at) VALUES (?,?,?,?,?)`

// EventsAfter returns up to limit events of session with offset > after,
// oldest first.
func (d *DB) EventsAfter(ctx context.Context, session string, after int64, limit int) ([]Event, error) {
	// Catch-up pages: SQL with parameters, prepared once per connection.
	rows, err := d.ro.DB.QueryContext(ctx, `SELECT "offset", type, payload FROM events
		WHERE session = ? AND "offset" > ? ORDER BY "offset" LIMIT ?`, session, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{Session: session}
		if err := rows.Scan(&e.Offset, &e.Type, &e.JSON); err != nil {
			return nil, fmt.Errorf("events after %d: %w", after, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	return out, nil
}

// EventsBefore returns up to limit events of session with offset < before,
// the newest of them, oldest first.
func (d *DB) EventsBefore(ctx context.Context, session string, before int64, limit int) ([]Event, error) {
	var rows []eventRow
	err := d.ro.NewSelect().Model(&rows).
		Column("session", "offset", "type", "payload").
		Where(`session = ? AND "offset" < ?`, session, before).
		OrderExpr(`"offset" DESC`).Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("events before %d: %w", before, err)
	}
	slices.Reverse(rows)
	return toEvents(rows), nil
}

func toEvents(rows []eventRow) []Event {
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = Event{Session: r.Session, Offset: r.Offset, Type: r.Type, JSON: []byte(r.Payload)}
	}
	return out
}

const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// formatTime stores times as fixed-width UTC text so that they sort.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
