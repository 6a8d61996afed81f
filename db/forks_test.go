package db

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"albedo/wire"
)

// forkAt forks parent at offset at into a new session id.
func forkAt(t *testing.T, d *DB, parent string, at int64, id string, rerun bool) (Session, *Input) {
	t.Helper()
	var s Session
	var in *Input
	_, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
		var err error
		s, in, err = tx.Fork(context.Background(), ForkOf{Parent: parent, At: at, Rerun: rerun, Child: Session{ID: id, Epoch: "e-" + id}})
		return err
	})
	if err != nil {
		t.Fatalf("fork %s at %d: %v", parent, at, err)
	}
	return s, in
}

// appendN appends n messages to session, texts prefixed by what.
func appendN(t *testing.T, d *DB, session, what string, n int) {
	t.Helper()
	for i := range n {
		if _, err := appendText(context.Background(), d, session, fmt.Sprintf("%s %d", what, i+1)); err != nil {
			t.Fatal(err)
		}
	}
}

// logOf reads a session's whole log in pages of page events, forward,
// and checks that reading it backward gives the same.
func logOf(t *testing.T, d *DB, session string, page int) [][]byte {
	t.Helper()
	ctx := context.Background()
	var out [][]byte
	for after := int64(0); ; {
		evs, err := d.EventsAfter(ctx, session, after, page, 0)
		if err != nil {
			t.Fatalf("read %s after %d: %v", session, after, err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Offset != after+1 || e.Session != session {
				t.Fatalf("read %s: event %d (of %q) after %d", session, e.Offset, e.Session, after)
			}
			out = append(out, e.JSON)
			after = e.Offset
		}
	}
	var back [][]byte
	for before := int64(len(out) + 1); before > 1; {
		evs, err := d.EventsBefore(ctx, session, before, page, 0)
		if err != nil || len(evs) == 0 {
			t.Fatalf("read %s before %d: %d events, %v", session, before, len(evs), err)
		}
		back = append(evs2json(evs), back...)
		before = evs[0].Offset
	}
	if len(back) != len(out) {
		t.Fatalf("%s: %d events forward, %d backward", session, len(out), len(back))
	}
	for i := range out {
		if !bytes.Equal(out[i], back[i]) {
			t.Fatalf("%s: event %d differs backward", session, i+1)
		}
	}
	return out
}

func evs2json(evs []Event) [][]byte {
	out := make([][]byte, len(evs))
	for i, e := range evs {
		out[i] = e.JSON
	}
	return out
}

// samePrefix checks that fork's log is parent's first n events, byte for
// byte, then own more of its own.
func samePrefix(t *testing.T, parent, fork [][]byte, n, own int) {
	t.Helper()
	if len(fork) != n+own {
		t.Fatalf("fork has %d events, want %d + %d", len(fork), n, own)
	}
	for i := range n {
		if !bytes.Equal(parent[i], fork[i]) {
			t.Fatalf("event %d: fork %s, parent %s", i+1, fork[i], parent[i])
		}
	}
}

// A fork's history is its parent's events 1..at, byte for byte, then its
// own; a fork of a fork reads through both; and deleting a parent, then
// its parent, leaves every fork whole. The parent's log is long enough to
// be partly folded (SQLite's events and events_log both hold some).
func TestForksStayWholeWhenParentsGo(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, target string) {
		d := openOn(t, target, Options{})
		createSession(t, d, "p")
		appendN(t, d, "p", "p", 1500)
		pLog := logOf(t, d, "p", 400)

		a, _ := forkAt(t, d, "p", 700, "a", false)
		if a.Head != 700 || a.Parent != "p" || a.ParentOffset != 700 || a.BaseSession != "p" {
			t.Fatalf("fork a: %+v", a)
		}
		forkAt(t, d, "p", 1200, "b", false)
		appendN(t, d, "a", "a", 30)
		appendN(t, d, "b", "b", 20)
		// A fork of a fork, at a point inside its parent's own part, and
		// one at a point its parent read from p.
		aa, _ := forkAt(t, d, "a", 710, "aa", false)
		ab, _ := forkAt(t, d, "a", 300, "ab", false)
		if aa.BaseSession != "a" || ab.BaseSession != "p" {
			t.Fatalf("bases: aa %q, ab %q", aa.BaseSession, ab.BaseSession)
		}
		appendN(t, d, "aa", "aa", 5)
		appendN(t, d, "p", "p more", 10)

		aLog := logOf(t, d, "a", 333)
		samePrefix(t, pLog, aLog, 700, 30)
		samePrefix(t, pLog, logOf(t, d, "b", 97), 1200, 20)
		aaLog := logOf(t, d, "aa", 50)
		samePrefix(t, aLog, aaLog, 710, 5)
		abLog := logOf(t, d, "ab", 1000)
		samePrefix(t, pLog, abLog, 300, 0)

		forks, err := d.Forks(context.Background(), "p")
		if err != nil || len(forks) != 2 || forks[0].ID != "a" || forks[1].ID != "b" {
			t.Fatalf("forks of p: %+v %v", forks, err)
		}

		for _, gone := range []string{"p", "a"} {
			if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
				_, _, err := tx.DeleteSession(context.Background(), gone)
				return err
			}); err != nil {
				t.Fatalf("delete %s: %v", gone, err)
			}
			for id, want := range map[string][][]byte{"b": logOf(t, d, "b", 1000), "aa": aaLog, "ab": abLog} {
				got := logOf(t, d, id, 77)
				samePrefix(t, want, got, len(want), 0)
			}
			if gone == "p" {
				samePrefix(t, aLog, logOf(t, d, "a", 64), len(aLog), 0)
			}
		}
		// b, the heir of p's rows, then read them as its own; p's rows
		// past b's fork point went with p.
		s, err := d.Session(context.Background(), "b")
		if err != nil || s.BaseSession != "" || s.Parent != "p" || s.ParentOffset != 1200 {
			t.Fatalf("b after p went: %+v %v", s, err)
		}
		if n := countRows(t, d, "p"); n != 0 {
			t.Fatalf("%d rows of p left", n)
		}
	})
}

// countRows counts a session's rows in both event tables.
func countRows(t *testing.T, d *DB, session string) int {
	t.Helper()
	var n int
	err := d.ro.DB.QueryRowContext(context.Background(), d.dialect.bind(`SELECT (SELECT count(*) FROM events WHERE session = ?) + (SELECT count(*) FROM events_log WHERE session = ?)`),
		session, session).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A reader holding the spans a fork had before its parent went finds its
// events moved and says so, rather than returning a gap.
func TestStaleSpansSayMoved(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	ctx := context.Background()
	createSession(t, d, "p")
	appendN(t, d, "p", "p", 20)
	forkAt(t, d, "p", 10, "f", false)
	_, sp, err := d.SpansOf(ctx, "f")
	if err != nil || !sp.Forked() {
		t.Fatalf("spans of f: %+v %v", sp, err)
	}
	if _, err := d.Writer().Do(ctx, func(tx *Tx) error { _, _, err := tx.DeleteSession(ctx, "p"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := d.EventsAfterIn(ctx, sp, 0, 100, 0); !errors.Is(err, ErrMoved) {
		t.Fatalf("after, stale spans: %v", err)
	}
	if _, err := d.EventsBeforeIn(ctx, sp, 11, 100, 0); !errors.Is(err, ErrMoved) {
		t.Fatalf("before, stale spans: %v", err)
	}
	_, sp, err = d.SpansOf(ctx, "f")
	if err != nil || sp.Forked() {
		t.Fatalf("spans of f now: %+v %v", sp, err)
	}
	if evs, err := d.EventsAfterIn(ctx, sp, 0, 100, 0); err != nil || len(evs) != 10 {
		t.Fatalf("after: %d, %v", len(evs), err)
	}
}

// A fork point inside a turn closes the turn in the fork; a rerun at a
// user's message, or at the reply to it, queues that input again; the
// transcript, the newest message and the unread count of a fork read
// through its parent.
func TestForkTurnsAndReads(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, target string) {
		d := openOn(t, target, Options{})
		ctx := context.Background()
		createSession(t, d, "p")
		var in Input
		do(t, d, func(tx *Tx) error {
			var err error
			in, _, _, err = tx.PutInput(ctx, "p", "i1", "question", wire.RoleUser, wire.Author{Name: "ann"})
			return err
		})
		do(t, d, func(tx *Tx) error {
			_, err := tx.Append(ctx, "p", wire.Event{Type: wire.EventTurn, TurnID: in.TurnID, InputID: "i1", State: wire.TurnStarted})
			return err
		})
		do(t, d, func(tx *Tx) error {
			_, err := tx.Append(ctx, "p",
				wire.Event{Type: wire.EventMessage, Role: wire.RoleAssistant, Text: "answer", TurnID: in.TurnID, InputID: "i1", State: wire.MessageComplete},
				wire.Event{Type: wire.EventTurn, TurnID: in.TurnID, InputID: "i1", State: wire.TurnCompleted})
			return err
		})
		// 1 question, 2 started, 3 answer, 4 completed.
		mid, _ := forkAt(t, d, "p", 2, "mid", false)
		evs, err := d.EventsAfter(ctx, "mid", 2, 10, 0)
		if err != nil || len(evs) != 1 || mid.Head != 3 || mid.LastTurn != wire.TurnInterrupted {
			t.Fatalf("fork inside a turn: %+v, %+v %v", mid, evs, err)
		}
		if ev, _ := evs[0].Decode(); ev.State != wire.TurnInterrupted || ev.Reason != wire.ReasonFork || ev.TurnID != in.TurnID {
			t.Fatalf("closing event: %+v", ev)
		}
		for _, at := range []int64{1, 3} {
			f, rin := forkAt(t, d, "p", at, fmt.Sprintf("rerun%d", at), true)
			if rin == nil || rin.InputID != "i1" || rin.MsgOffset != 1 || rin.Delivery != wire.DeliveryQueued || rin.TurnID == in.TurnID || f.Head != 1 || f.ParentOffset != 1 {
				t.Fatalf("rerun at %d: %+v, %+v", at, f, rin)
			}
		}
		pending, err := d.PendingInputs(ctx)
		if err != nil || len(pending) != 3 { // p's own (never run here), and the two reruns
			t.Fatalf("pending: %+v %v", pending, err)
		}
		var e error
		_, err = d.Writer().Do(ctx, func(tx *Tx) error {
			_, _, e = tx.Fork(ctx, ForkOf{Parent: "p", At: 2, Rerun: true, Child: Session{ID: "x", Epoch: "x"}})
			return e
		})
		if !errors.Is(err, ErrNoInput) {
			t.Fatalf("rerun at a turn event: %v", err)
		}
		for _, at := range []int64{-1, 5} {
			_, err = d.Writer().Do(ctx, func(tx *Tx) error {
				_, _, e = tx.Fork(ctx, ForkOf{Parent: "p", At: at, Child: Session{ID: "x", Epoch: "x"}})
				return e
			})
			if !errors.Is(err, ErrOutOfRange) {
				t.Fatalf("fork at %d: %v", at, err)
			}
		}

		tr, err := d.Transcript(ctx, forkedSpans(t, d, "rerun3"), Messages, 1, 1<<20, 100)
		if err != nil || len(tr) != 1 || tr[0].Text != "question" {
			t.Fatalf("transcript of a rerun: %+v %v", tr, err)
		}
		full, _ := forkAt(t, d, "p", 4, "full", false)
		if full.LastTurn != wire.TurnCompleted {
			t.Fatalf("fork after a turn: %+v", full)
		}
		last, ok, err := d.LastMessage(ctx, "full")
		if ev, _ := last.Decode(); err != nil || !ok || ev.Text != "answer" || last.Session != "full" {
			t.Fatalf("newest message of a fork: %+v %v %v", ev, ok, err)
		}
		if _, n, err := d.Unread(ctx, "", "full"); err != nil || n != 2 {
			t.Fatalf("unread in a fork: %d %v", n, err)
		}
		appendN(t, d, "full", "more", 2)
		if _, n, err := d.Unread(ctx, "", "full"); err != nil || n != 4 {
			t.Fatalf("unread in a fork with its own: %d %v", n, err)
		}
	})
}

// do runs fn as one write request, failing t on error.
func do(t *testing.T, d *DB, fn func(*Tx) error) {
	t.Helper()
	if _, err := d.Writer().Do(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// forkedSpans are a session's spans as SpansOf resolves them.
func forkedSpans(t *testing.T, d *DB, id string) Spans {
	t.Helper()
	_, sp, err := d.SpansOf(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
