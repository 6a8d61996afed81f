package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"albedo/wire"
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
	// ord is a bot post's order (its receipt's), set by PutInput: this
	// event is the post's idempotency record, stored with Meta.InputID.
	ord int64
}

// Meta is what the hub needs of an event to drive turns, so that the
// commit hook does not decode a message (and its text) to find it.
type Meta struct {
	Role                   wire.Role
	InputID, TurnID, State string
	// Text is a message's text, which the batch indexes for search
	// (search.go); empty for other events.
	Text string
}

// Decode returns the event as a wire.Event.
func (e Event) Decode() (wire.Event, error) {
	var ev wire.Event
	err := json.Unmarshal(e.JSON, &ev)
	return ev, err
}

// Append adds events to the end of a session's log, assigning each the next
// offset and the batch's time. It returns ErrNotFound for a missing session.
// The events become visible to OnCommit and readers once the batch commits.
func (t *Tx) Append(ctx context.Context, session string, evs ...wire.Event) ([]Event, error) {
	return t.append(ctx, session, false, evs)
}

// Head returns a session's head as this request sees it, or ErrNotFound.
func (t *Tx) Head(ctx context.Context, session string) (int64, error) { return t.head(ctx, session) }

// AppendAsWas is Append for events restored from an export: each keeps
// its own time (the batch's when it has none), and none queues a turn.
func (t *Tx) AppendAsWas(ctx context.Context, session string, evs ...wire.Event) ([]Event, error) {
	return t.append(ctx, session, true, evs)
}

func (t *Tx) append(ctx context.Context, session string, keepAt bool, evs []wire.Event) ([]Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	c, err := t.counters(ctx, session)
	if err != nil {
		return nil, err
	}
	cur := c.head
	out := make([]Event, len(evs))
	for i, ev := range evs {
		ev.Offset = cur + int64(i) + 1
		if !keepAt || ev.At.IsZero() {
			ev.At = t.now
		}
		// wire.Encode(ev), by hand: every input stores an event.
		js := wire.AppendEvent(make([]byte, 0, wire.EventSize(&ev)), &ev)
		out[i] = Event{Session: session, Offset: ev.Offset, Type: ev.Type, JSON: js,
			Meta: Meta{Role: ev.Role, InputID: ev.InputID, TurnID: ev.TurnID, State: ev.State}}
		if searchable(ev.Type) {
			out[i].Meta.Text = ev.Text
		}
		if keepAt {
			// A restored input's message keeps its input_id in its JSON,
			// but its Meta names none: the commit hook queues a turn for
			// a user's message with one, and a restored one has had its
			// turn.
			out[i].Meta.InputID = ""
			if ev.Type == wire.EventMessage && ev.Role == wire.RoleUser && ev.InputID != "" {
				c.inputs++ // a live input's order follows the restored ones
			}
		}
		if ev.Type == wire.EventTurn {
			c.lastTurn = ev.State
		}
	}
	if err := t.refBlobs(ctx, session, evs, cur+1); err != nil {
		return nil, err
	}
	c.head += int64(len(evs))
	t.setCounters(session, c)
	t.committed = append(t.committed, Committed{Session: session, Epoch: c.epoch, Events: out})
	return out, nil
}

// eventColumns is how many parameters an event's row takes.
const eventColumns = 7

// bothTables returns q, a SELECT from events, as the UNION ALL of it and
// the same SELECT from events_log (fold.go): a statement reads one
// snapshot, in which each event is in one of the two. Followed by an ORDER
// BY of the offset, SQLite merges the two index scans (a MERGE in the
// plan: no sort, rows still read one at a time; TestReadsMergeBothTables)
// and PostgreSQL appends them in order.
func bothTables(q string) string {
	return q + ` UNION ALL ` + strings.Replace(q, " FROM events", " FROM events_log", 1)
}

var (
	eventsAfterSQL = bothTables(`SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" > ?`) +
		` ORDER BY "offset" LIMIT ?`
	eventsBeforeSQL = bothTables(`SELECT "offset", type, payload FROM events WHERE session = ? AND "offset" < ?`) +
		` ORDER BY "offset" DESC LIMIT ?`
)

// EventsAfter returns events of session with offset > after, oldest
// first: at most limit of them, and none past the one that brings their
// JSON to maxBytes (maxBytes ≤ 0: no such bound). The first event is
// returned whatever its size, so a page always moves on. Rows are read one
// at a time, so a page of large events costs its bound, not its count.
// A reader that keeps a session's spans reads with EventsAfterIn.
func (d *DB) EventsAfter(ctx context.Context, session string, after int64, limit, maxBytes int) ([]Event, error) {
	_, sp, err := d.SpansOf(ctx, session)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return d.EventsAfterIn(ctx, sp, after, limit, maxBytes)
}

// eventsAfter is EventsAfter in a session that is no fork.
func (d *DB) eventsAfter(ctx context.Context, session string, after int64, limit, maxBytes int) ([]Event, error) {
	// Catch-up pages: SQL with parameters, prepared once per connection.
	ctx, err := d.shortRead(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(eventsAfterSQL), session, after, session, after, limit)
	if err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	out, err := scanEvents(rows, session, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("events after %d: %w", after, err)
	}
	return out, nil
}

// EventsBefore returns events of session with offset < before, the newest
// of them, oldest first: at most limit, bounded by maxBytes as EventsAfter
// is (counted from the newest).
func (d *DB) EventsBefore(ctx context.Context, session string, before int64, limit, maxBytes int) ([]Event, error) {
	_, sp, err := d.SpansOf(ctx, session)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return d.EventsBeforeIn(ctx, sp, before, limit, maxBytes)
}

// eventsBefore is EventsBefore in a session that is no fork.
func (d *DB) eventsBefore(ctx context.Context, session string, before int64, limit, maxBytes int) ([]Event, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(eventsBeforeSQL), session, before, session, before, limit)
	if err != nil {
		return nil, fmt.Errorf("events before %d: %w", before, err)
	}
	out, err := scanEvents(rows, session, maxBytes)
	if err != nil {
		return nil, fmt.Errorf("events before %d: %w", before, err)
	}
	slices.Reverse(out)
	return out, nil
}

// scanEvents reads rows of ("offset", type, payload) until they end or
// their payloads reach maxBytes, and closes them.
func scanEvents(rows *sql.Rows, session string, maxBytes int) ([]Event, error) {
	defer rows.Close()
	var out []Event
	size := 0
	for rows.Next() {
		e := Event{Session: session}
		if err := rows.Scan(&e.Offset, &e.Type, &e.JSON); err != nil {
			return nil, err
		}
		out = append(out, e)
		if size += len(e.JSON); maxBytes > 0 && size >= maxBytes {
			break
		}
	}
	return out, rows.Err()
}

const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// formatTime stores times as fixed-width UTC text so that they sort.
func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// OpenTurn returns the id of the turn session's log leaves started (its
// last turn event says started), "" if none. pending are the events this
// request appended to it, not stored yet: the last turn event among them
// is the log's last.
func (t *Tx) OpenTurn(ctx context.Context, session string, pending []wire.Event) (string, error) {
	c, err := t.counters(ctx, session)
	if err != nil || c.lastTurn != wire.TurnStarted {
		return "", err
	}
	for i := len(pending) - 1; i >= 0; i-- {
		if pending[i].Type == wire.EventTurn {
			return pending[i].TurnID, nil
		}
	}
	ev, err := t.lastTurnIn(ctx, Spans{{Session: session}}, c.head)
	return ev.TurnID, err
}
