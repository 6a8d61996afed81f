package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"albedo/wire"
)

// What the hub's sessions feed reads from the store: every session once
// (its index of them), the sessions other nodes changed since a time, the
// sessions deleted since a time (tombstones), a session's newest message
// and a person's unread count. The feed keeps the rest in memory.

// keepTombstones is how long a deleted session's tombstone is kept: a
// feed resumed from further back than this starts again.
const keepTombstones = 30 * 24 * time.Hour

// KeepTombstones is keepTombstones, for the hub.
const KeepTombstones = keepTombstones

// Tombstone is a session deleted at a time.
type Tombstone struct {
	ID string
	At time.Time
}

// AllSessions reads every session, for the feed's index. Its cost grows
// with the home, which is why the hub reads it once and keeps it.
func (d *DB) AllSessions(ctx context.Context) ([]Session, error) {
	return d.sessionsWhere(ctx, "TRUE")
}

// SessionsSince reads the sessions whose last change is at or after at:
// those another node of a cluster changed, for the feed.
func (d *DB) SessionsSince(ctx context.Context, at time.Time) ([]Session, error) {
	return d.sessionsWhere(ctx, "updated_at >= ?", formatTime(at))
}

func (d *DB) sessionsWhere(ctx context.Context, where string, args ...any) ([]Session, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT `+sessionColumns+` FROM sessions_now WHERE `+where), args...)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	ss, err := scanRows(rows, scanSession)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
	}
	return ss, nil
}

// Tombstones reads the sessions deleted at or after since.
func (d *DB) Tombstones(ctx context.Context, since time.Time) ([]Tombstone, error) {
	rows, err := d.ro.DB.QueryContext(ctx, d.dialect.bind(`SELECT id, at FROM tombstones WHERE at >= ?`), formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("read tombstones: %w", err)
	}
	defer rows.Close()
	var ts []Tombstone
	for rows.Next() {
		var id, at string
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("read tombstones: %w", err)
		}
		ts = append(ts, Tombstone{ID: id, At: parseTime(at)})
	}
	return ts, rows.Err()
}

// bury records the session's tombstone, and forgets those older than
// keepTombstones.
func (t *Tx) bury(ctx context.Context, id string) error {
	now := formatTime(t.now)
	if _, err := t.sql.ExecContext(ctx, t.bind(`INSERT INTO tombstones (id, at) VALUES (?, ?)
		ON CONFLICT (id) DO UPDATE SET at = excluded.at`), id, now); err != nil {
		return fmt.Errorf("record tombstone: %w", err)
	}
	if _, err := t.sql.ExecContext(ctx, t.bind(`DELETE FROM tombstones WHERE at < ?`), formatTime(t.now.Add(-keepTombstones))); err != nil {
		return fmt.Errorf("prune tombstones: %w", err)
	}
	return nil
}

// lastMessageSQL reads a session's newest message.
var lastMessageSQL = bothTables(`SELECT "offset", type, payload FROM events WHERE session = ? AND type = 'message'`) +
	` ORDER BY "offset" DESC LIMIT 1`

// LastMessage reads a session's newest message; ok is false when it has
// none.
func (d *DB) LastMessage(ctx context.Context, session string) (_ Event, ok bool, _ error) {
	e := Event{Session: session}
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(lastMessageSQL), session, session).Scan(&e.Offset, &e.Type, &e.JSON)
	if err == nil {
		return e, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Event{}, false, fmt.Errorf("read newest message: %w", err)
	}
	// None of its own: a fork's may be its parent's.
	err = d.inForks(ctx, session, func(rtx *sql.Tx, sp Spans) error {
		return newestOf(ctx, rtx, d.dialect, sp, string(wire.EventMessage), sp[len(sp)-1].After, 1, func(m Event) bool {
			e, ok = m, true
			return false
		})
	})
	if err != nil {
		return Event{}, false, fmt.Errorf("read newest message: %w", err)
	}
	return e, ok, nil
}

// inForks calls f with the spans of session, in one snapshot, if it is a
// fork; it does nothing for one that is not, or is gone.
func (d *DB) inForks(ctx context.Context, session string, f func(*sql.Tx, Spans) error) error {
	// A look at the row first, out of a snapshot: most sessions are no
	// fork, and a session never becomes one.
	var base string
	err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(`SELECT base_session FROM sessions WHERE id = ?`), session).Scan(&base)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && base == "") {
		return nil
	}
	if err != nil {
		return err
	}
	return d.inSnapshot(ctx, session, f)
}

// unreadSQL counts up to MaxUnread messages of a session after an offset.
var unreadSQL = `SELECT count(*) FROM (` +
	bothTables(`SELECT 1 AS one FROM events WHERE session = ? AND "offset" > ? AND "offset" <= ? AND type = 'message'`) +
	` LIMIT ` + fmt.Sprint(wire.MaxUnread) + `) AS unread`

// Unread returns reader's read marker in session (0: none) and how many
// messages came after it, counted up to wire.MaxUnread: a count that
// costs the messages it counts, not the session's size.
func (d *DB) Unread(ctx context.Context, reader, session string) (read int64, unread int, _ error) {
	return d.UnreadUpTo(ctx, reader, session, math.MaxInt64)
}

// UnreadUpTo is Unread counting the messages up to offset upto only: a
// count a caller adds the messages after upto to (the feed's, from a
// snapshot of the session's head) counts none twice.
func (d *DB) UnreadUpTo(ctx context.Context, reader, session string, upto int64) (read int64, unread int, _ error) {
	if reader != "" {
		var err error
		if read, err = d.ReadOf(ctx, reader, session); err != nil {
			return 0, 0, err
		}
	}
	if err := d.ro.DB.QueryRowContext(ctx, d.dialect.bind(unreadSQL), session, read, upto, session, read, upto).Scan(&unread); err != nil {
		return 0, 0, fmt.Errorf("count unread: %w", err)
	}
	if unread >= wire.MaxUnread {
		return read, unread, nil
	}
	// A fork's count goes on in its parent's messages before its own.
	err := d.inForks(ctx, session, func(rtx *sql.Tx, sp Spans) error {
		return newestOf(ctx, rtx, d.dialect, sp[:len(sp)-1], string(wire.EventMessage), sp[len(sp)-1].After, wire.MaxUnread-unread, func(m Event) bool {
			if m.Offset <= read {
				return false
			}
			if m.Offset <= upto {
				unread++
			}
			return true
		})
	})
	if err != nil {
		return 0, 0, fmt.Errorf("count unread: %w", err)
	}
	return read, unread, nil
}
