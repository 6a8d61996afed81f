package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Dense offsets across daemons (PostgreSQL). A batch writes a session
// only while its transaction holds the session's row lock, and takes the
// session's counters from that row, so that writers on every daemon are
// serialised per session and offsets stay dense. The locks are taken
// without ever waiting while holding one, so daemons cannot deadlock:
//
//   - A batch first locks, in one statement and in id order, the sessions
//     its previous run found it needed (Writer.begin, sent with BEGIN).
//     Waiting here is safe: every daemon takes these locks in the same
//     order. A first run locks the sessions its writes name (Writer.DoIn,
//     ThenIn) the same way, but with NOWAIT: one statement for a batch of
//     inputs to many sessions, instead of one round trip a session.
//   - Any other session a request touches is locked with NOWAIT. If
//     another daemon holds it, the batch rolls back (errLockBusy) and
//     runs again, this time locking every session it has seen up front.
//
// Each run adds at least one session to the set, so a batch runs at most
// once more than it has sessions. Locking in arrival order and waiting
// instead deadlocks: two daemons each holding a session the other wants
// wait for each other until PostgreSQL's deadlock_timeout fails one, and
// with three writers or more that is the common case, not the rare one.
// docs/cluster.md ("What each part does") is the operator's view of it.

// errLockBusy ends a run of a batch that found a session's row locked by
// another daemon.
var errLockBusy = errors.New("db: a session row is locked by another daemon; run the batch again, locking it first")

// named is the sessions batch's writes name (nil for none).
func named(batch []*request) map[string]bool {
	var m map[string]bool
	for _, r := range batch {
		if r.session != "" {
			if m == nil {
				m = map[string]bool{}
			}
			m[r.session] = true
		}
	}
	return m
}

// lock returns a session's committed counters, locking its row for the
// rest of the transaction unless another daemon holds it (errLockBusy).
// A session that does not exist has head -1. A lock taken by a request
// that then fails is forgotten with the request's other results: its
// savepoint's rollback released it.
func (t *Tx) lock(ctx context.Context, session string) (counters, error) {
	b := t.batch
	if c, ok := t.locked[session]; ok {
		return c, nil
	}
	if c, ok := b.locked[session]; ok {
		return c, nil
	}
	b.needs[session] = true
	c := counters{head: -1}
	err := t.sql.QueryRowContext(ctx, `SELECT head, inputs, last_turn, epoch FROM sessions WHERE id = $1 FOR UPDATE NOWAIT`, session).Scan(&c.head, &c.inputs, &c.lastTurn, &c.epoch)
	switch {
	case pgCode(err) == pgLockNotAvailable:
		return counters{}, errLockBusy
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return counters{}, fmt.Errorf("lock session: %w", err)
	}
	if t.locked == nil {
		t.locked = map[string]counters{}
	}
	t.locked[session] = c
	return c, nil
}
