package db

import (
	"context"
	"os"
	"strings"
	"testing"

	"albedo/wire"
)

// The session row keeps the state of its newest turn event, written with
// the head at each commit, whatever else the batch holds.
func TestSessionKeepsItsLastTurn(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	createSession(t, d, "s")
	createSession(t, d, "other")
	ctx := context.Background()
	lastTurn := func() string {
		t.Helper()
		s, err := d.Session(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return s.LastTurn
	}
	appendEvs := func(session string, evs ...wire.Event) {
		t.Helper()
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			_, err := tx.Append(ctx, session, evs...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	turn := func(state string) wire.Event {
		return wire.Event{Type: wire.EventTurn, TurnID: "t", State: state}
	}
	msg := wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: "hi"}

	if got := lastTurn(); got != "" {
		t.Fatalf("new session: %q", got)
	}
	appendEvs("s", msg, turn(wire.TurnStarted))
	if got := lastTurn(); got != wire.TurnStarted {
		t.Fatalf("after started: %q", got)
	}
	appendEvs("s", msg)
	appendEvs("other", turn(wire.TurnFailed))
	if got := lastTurn(); got != wire.TurnStarted {
		t.Fatalf("a message, or another session's turn, changed it: %q", got)
	}
	appendEvs("s", turn(wire.TurnInterrupted), msg, turn(wire.TurnCompleted), msg)
	if got := lastTurn(); got != wire.TurnCompleted {
		t.Fatalf("the newest of several: %q", got)
	}

	// Migration 5 fills the column for sessions that had turns before it,
	// when every event was in events (fold.go).
	if err := fold(ctx, d.rw.DB); err != nil {
		t.Fatal(err)
	}
	up, err := os.ReadFile("../migrations/20261129000005_last_turn.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(up), "--bun:split")
	if _, err := d.rw.ExecContext(ctx, "UPDATE sessions SET last_turn = ''"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.rw.ExecContext(ctx, parts[len(parts)-1]); err != nil {
		t.Fatal(err)
	}
	if got := lastTurn(); got != wire.TurnCompleted {
		t.Fatalf("backfilled: %q", got)
	}
	if s, _ := d.Session(ctx, "other"); s.LastTurn != wire.TurnFailed {
		t.Fatalf("backfilled other: %q", s.LastTurn)
	}
}
