package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Tx is the view a write request has of the batch's transaction. It is only
// valid inside the request's function.
type Tx struct {
	bun.IDB
	sql       sqlTx    // the same transaction, for statements with parameters
	bt        *batchTx // the batch's transaction, for statements it may queue (exec)
	now       time.Time
	batch     *batchState
	careful   bool                // the batch runs with savepoints (commit)
	heads     []sessionCounters   // this request's new counters (ownCounters)
	posts     []Input             // this request's new bot posts (ownPost)
	locked    map[string]counters // shared: session rows this request locked (lock.go)
	deleted   []string            // sessions this request deleted
	committed []Committed         // this request's events, inserted at the batch's flush
	changes   []Change            // shared: this request's changes to who may do what (changes.go)
}

// postKey names a bot post: its input id in its session.
type postKey struct{ session, inputID string }

// sessionCounters is a session's counters as one request changed them.
// A request's are a slice, not a map: it nearly always touches one
// session, and a map per request was a large share of what the daemon
// allocated per input.
type sessionCounters struct {
	session string
	c       counters
}

// ownCounters returns the counters this request set for session.
func (t *Tx) ownCounters(session string) (counters, bool) {
	for _, h := range t.heads {
		if h.session == session {
			return h.c, true
		}
	}
	return counters{}, false
}

// ownPost returns the post this request accepted under inputID in session.
func (t *Tx) ownPost(session, inputID string) (Input, bool) {
	for _, p := range t.posts {
		if p.Session == session && p.InputID == inputID {
			return p, true
		}
	}
	return Input{}, false
}

// counters returns a session's counters as this request sees them, or
// ErrNotFound.
func (t *Tx) counters(ctx context.Context, session string) (counters, error) {
	c, ok := t.ownCounters(session)
	if !ok {
		c, ok = t.batch.heads[session]
	}
	if !ok && t.batch.w.shared {
		var err error
		if c, err = t.lock(ctx, session); err != nil {
			return counters{}, err
		}
		ok = true
	}
	if !ok {
		c, ok = t.batch.w.heads[session]
	}
	if !ok {
		err := t.sql.QueryRowContext(ctx, t.bind(`SELECT head, inputs, last_turn, epoch FROM sessions_now WHERE id = ?`), session).Scan(&c.head, &c.inputs, &c.lastTurn, &c.epoch)
		if errors.Is(err, sql.ErrNoRows) {
			c.head = -1
		} else if err != nil {
			return counters{}, fmt.Errorf("read head: %w", err)
		}
	}
	if c.head < 0 {
		return counters{}, fmt.Errorf("session %q: %w", session, ErrNotFound)
	}
	return c, nil
}

// head returns a session's current head as this request sees it, or
// ErrNotFound.
func (t *Tx) head(ctx context.Context, session string) (int64, error) {
	c, err := t.counters(ctx, session)
	return c.head, err
}

func (t *Tx) setCounters(session string, c counters) {
	for i := range t.heads {
		if t.heads[i].session == session {
			t.heads[i].c = c
			return
		}
	}
	t.heads = append(t.heads, sessionCounters{session, c})
}

// CheckSession returns ErrNotFound if session does not exist as this
// request sees it (a delete earlier in the batch included). On PostgreSQL
// it also locks the session's row for the rest of the batch, as writing
// its events does (lock.go): a request that changes the row some other
// way (settings, delete) calls it first.
func (t *Tx) CheckSession(ctx context.Context, session string) error {
	_, err := t.head(ctx, session)
	return err
}

// bind returns q, written with ? placeholders, as the backend takes it.
func (t *Tx) bind(q string) string { return t.batch.w.dialect.bind(q) }

// Now is the commit batch's timestamp, used for every row it writes.
func (t *Tx) Now() time.Time { return t.now }

// nowText is formatTime(t.Now()), formatted once per batch.
func (t *Tx) nowText() string { return t.batch.at }
