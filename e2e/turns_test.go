//go:build !e2e_only || e2e_core

package e2e

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// waitTurn watches session from after until turn ends and returns its
// closing event.
func waitTurn(t *testing.T, c *client.Client, session string, after int64, turn string) wire.Event {
	t.Helper()
	s, err := c.Session(ctxT(t), session)
	if err != nil {
		t.Fatal(err)
	}
	w := dialWS(t, c.Snapshot())
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: session, After: &after, Epoch: s.Epoch}}})
	for {
		f := w.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		if f.Event.Type == wire.EventTurn && f.Event.TurnID == turn && f.Event.State != wire.TurnStarted {
			w.c.CloseNow()
			return *f.Event
		}
	}
}

// A cleared effort stays cleared across a restart: the provider gets the
// model and no reasoning_effort.
func TestEffortClearedSurvivesRestart(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Provider: "fake", Model: "m1", Effort: "high"}})
	empty := ""
	if _, err := fx.c.PatchSession(fx.ctx, "s", fx.s.ETag, wire.SessionPatch{Effort: &empty}); err != nil {
		t.Fatal(err)
	}
	// A stale ETag is a typed error.
	if _, err := fx.c.PatchSession(fx.ctx, "s", fx.s.ETag, wire.SessionPatch{Effort: &empty}); !errorsIsStale(err) {
		t.Fatalf("stale etag: %v", err)
	}
	r, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "before")
	if err != nil {
		t.Fatal(err)
	}
	waitTurn(t, fx.c, "s", 0, r.TurnID)
	fx.d.stop()
	startDaemon(t, fx.home)
	got, err := fx.c.Session(fx.ctx, "s")
	if err != nil || got.Effort != "" || got.Model != "m1" {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	r, err = fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "after")
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitTurn(t, fx.c, "s", 0, r.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("turn after restart: %+v", ev)
	}
	reqs := fx.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	for i, req := range reqs {
		if _, sent := req.Raw["reasoning_effort"]; sent || req.Model != "m1" {
			t.Fatalf("request %d: model %q, effort sent %v", i, req.Model, req.Raw["reasoning_effort"])
		}
	}
}

// SIGKILL mid-turn: after the next start the turn is interrupted with
// reason daemon_restart, the session is idle, every input that got a
// receipt is in the log, and the input queued behind it runs.
func TestCrashMidTurn(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"partial "}, Block: block})
	first, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "one")
	if err != nil {
		t.Fatal(err)
	}
	second, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "two")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-fx.fake.Arrived():
	case <-time.After(30 * time.Second):
		t.Fatal("the provider was never asked")
	}
	fx.d.kill()
	startDaemon(t, fx.home)

	// The queued input runs (echo from the fake) once the crashed turn is repaired.
	if ev := waitTurn(t, fx.c, "s", 0, second.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("queued turn after the crash: %+v", ev)
	}
	page, err := fx.c.History(fx.ctx, "s", 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var repaired *wire.Event
	users := map[string]bool{}
	for i, e := range page.Events {
		if e.Offset != int64(i+1) {
			t.Fatalf("offsets not dense at %d: %d", i, e.Offset)
		}
		if e.Type == wire.EventTurn && e.TurnID == first.TurnID && e.State != wire.TurnStarted {
			repaired = &page.Events[i]
		}
		if e.Type == wire.EventMessage && e.Role == wire.RoleUser {
			users[e.InputID] = true
		}
	}
	if repaired == nil || repaired.State != wire.TurnInterrupted || repaired.Reason != wire.ReasonDaemonRestart {
		t.Fatalf("crashed turn: %+v", repaired)
	}
	if !users[first.InputID] || !users[second.InputID] || len(users) != 2 {
		t.Fatalf("user messages %v", users)
	}
	rc, err := fx.c.Input(fx.ctx, "s", first.InputID)
	if err != nil || rc.Delivery != wire.DeliveryInterrupted {
		t.Fatalf("receipt of the crashed turn: %+v %v", rc, err)
	}
	st, err := fx.c.Status(fx.ctx, "s")
	if err != nil || st.Phase != wire.PhaseIdle || st.LastTurn == nil || *st.LastTurn != wire.TurnCompleted {
		t.Fatalf("status %+v %v", st, err)
	}
}

// A graceful stop interrupts the running turn and commits what streamed,
// with reason daemon_shutdown, before the daemon exits.
func TestStopInterruptsRunningTurn(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"said so far"}, Block: block})
	r, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "q")
	if err != nil {
		t.Fatal(err)
	}
	<-fx.fake.Arrived()
	// Wait until the streamed text is in the hub (a partial on subscribe).
	s, _ := fx.c.Session(fx.ctx, "s")
	w := dialWS(t, fx.c.Snapshot())
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "s", After: &s.Head, Epoch: s.Epoch}}})
	w.next(func(f wire.Frame) bool {
		return (f.Op == wire.PushPartial || f.Op == wire.PushDelta) && f.Text.Text == "said so far"
	})
	fx.d.stop()
	startDaemon(t, fx.home)
	page, err := fx.c.History(fx.ctx, "s", 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	n := len(page.Events)
	msg, end := page.Events[n-2], page.Events[n-1]
	if msg.Text != "said so far" || msg.State != wire.MessageInterrupted || end.TurnID != r.TurnID ||
		end.State != wire.TurnInterrupted || end.Reason != wire.ReasonDaemonShutdown {
		t.Fatalf("after a stop: %+v %+v", msg, end)
	}
}
