package db

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"albedo/wire"
)

// stateOf is s's state as SessionState reads it.
func stateOf(s Session) SessionState {
	return SessionState{ID: s.ID, Epoch: s.Epoch, Head: s.Head, LastTurn: s.LastTurn, Version: s.Version,
		Model: s.Model, Effort: s.Effort, BaseSession: s.BaseSession}
}

// A session's state is the part of its row a watched session keeps,
// as the whole row reads it: a session with a turn, a fork (its base
// session), one that does not exist (ErrNotFound); and several in one
// query, each once, the missing left out.
func TestSessionStateIsTheRowsPart(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "p")
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			if _, err := tx.Append(ctx, "p", wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: "hi"}); err != nil {
				return err
			}
			_, err := tx.Append(ctx, "p", wire.Event{Type: wire.EventTurn, TurnID: "t", State: wire.TurnCompleted})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			_, _, err := tx.Fork(ctx, ForkOf{Parent: "p", At: 1, Child: Session{ID: "f", Epoch: "ef", Model: "m", Effort: "high"}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var want []SessionState
		for _, id := range []string{"f", "p"} {
			s, err := d.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			st, err := d.SessionState(ctx, id)
			if err != nil || st != stateOf(s) {
				t.Fatalf("%s: state %+v (%v), row %+v", id, st, err, stateOf(s))
			}
			want = append(want, st)
		}
		if want[0].BaseSession != "p" || want[0].Model != "m" || want[1].Head != 2 || want[1].LastTurn != string(wire.TurnCompleted) {
			t.Fatalf("the fork's and its parent's states: %+v", want)
		}
		if _, err := d.SessionState(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("nope: %v, want ErrNotFound", err)
		}
		got, err := d.SessionStates(ctx, []string{"p", "nope", "f", "p"})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b SessionState) int { return strings.Compare(a.ID, b.ID) })
		if !slices.Equal(got, want) {
			t.Fatalf("in one query: %+v, want %+v", got, want)
		}
	})
}

// On SQLite a bounded read (a session's row or state, a page of events)
// does not have database/sql watch a cancellable context with a
// goroutine (shortRead): it allocates what a read with a context that
// cannot end does. A context already ended still fails it.
func TestShortReadsDoNotWatchTheContext(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	d := openTest(t, Options{})
	createSession(t, d, "s")
	bg := context.Background()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	reads := map[string]func(context.Context) error{
		"row":   func(ctx context.Context) error { _, err := d.Session(ctx, "s"); return err },
		"state": func(ctx context.Context) error { _, err := d.SessionState(ctx, "s"); return err },
		"page":  func(ctx context.Context) error { _, err := d.eventsAfter(ctx, "s", 0, 10, 1<<20); return err },
	}
	for name, read := range reads {
		quiet := testing.AllocsPerRun(50, func() { _ = read(bg) })
		watched := testing.AllocsPerRun(50, func() {
			if err := read(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if watched > quiet+2 { // a margin for another goroutine's allocations; watching costs 6-8
			t.Errorf("%s: %v allocations with a cancellable context, %v without", name, watched, quiet)
		}
	}
	cancel()
	for name, read := range reads {
		if err := read(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with an ended context: %v", name, err)
		}
	}
}
