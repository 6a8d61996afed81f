package hub

import (
	"context"
	"errors"
	"strings"
	"testing"

	"albedo/wire"
)

// A reply cut off is continued as soon as its end is in the log: its
// watchers see the end before its runner says it is idle, and a continue
// asked in between is not told that a turn is running.
func TestAContinueAsTheCutTurnWrapsUpIsTaken(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	h := blockHub(t, release)
	ctx := context.Background()
	w := blockSession(t, h, "s")
	r, err := h.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "user"})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		turn string
		err  error
	}
	w.next(t, func(f wire.Frame) bool { return f.Text != nil && f.Text.Text != "" }) // it said something
	got := make(chan answer, 1)
	h.afterTurnEnd(r.TurnID, func(error) { // the end is committed; the runner has not let go
		turn, err := h.Continue(ctx, "s")
		got <- answer{turn, err}
	})
	if _, running, err := h.Interrupt(ctx, "s", "test"); err != nil || !running {
		t.Fatalf("interrupt: %v %v", running, err)
	}
	a := <-got
	if a.err != nil || a.turn == "" {
		t.Fatalf("a continue as the cut turn wrapped up: %q %v", a.turn, a.err)
	}
	var werr *wire.Error
	if _, err := h.Continue(ctx, "s"); !errors.As(err, &werr) || werr.Code != wire.CodeConflict {
		t.Fatalf("a continue while the continuation runs: %v", err)
	}
}

// A continue asked on a node that does not run the session's turn is
// told that a turn is running, not that the reply is whole: the log says
// the turn started and has not ended.
func TestAContinueOnAnotherNodeSeesTheRunningTurn(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	a, b, _ := busPair(t, release) // a runs every turn
	ctx := context.Background()
	w := blockSession(t, a, "s")
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "user"}); err != nil {
		t.Fatal(err)
	}
	w.next(t, func(f wire.Frame) bool { return f.Text != nil && f.Text.Text != "" }) // running on a
	var werr *wire.Error
	if _, err := b.Continue(ctx, "s"); !errors.As(err, &werr) || werr.Code != wire.CodeConflict || !strings.Contains(werr.Message, "running") {
		t.Fatalf("a continue on b while a runs the turn: %v", err)
	}
}
