package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/api/wire"
	"albedo/client"
	"albedo/hub/provider/fakeopenai"
)

// withFake writes a config.toml whose provider "fake" is a fake
// OpenAI-compatible endpoint, and returns it.
func withFake(t *testing.T, home string) *fakeopenai.Server {
	t.Helper()
	f, err := fakeopenai.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg := fmt.Sprintf("[providers.fake]\nkind = \"openai\"\nbase_url = %q\ndefault_model = \"fake-model\"\n", f.URL)
	if err := os.WriteFile(filepath.Join(home, client.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

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
	home := t.TempDir()
	f := withFake(t, home)
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	s, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "fake", Model: "m1", Effort: "high"})
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	if _, err := c.PatchSession(ctx, "s", s.ETag, wire.SessionPatch{Effort: &empty}); err != nil {
		t.Fatal(err)
	}
	// A stale ETag is a typed error.
	if _, err := c.PatchSession(ctx, "s", s.ETag, wire.SessionPatch{Effort: &empty}); !errorsIsStale(err) {
		t.Fatalf("stale etag: %v", err)
	}
	r, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "before")
	if err != nil {
		t.Fatal(err)
	}
	waitTurn(t, c, "s", 0, r.TurnID)
	d.stop()
	startDaemon(t, home)
	got, err := c.Session(ctx, "s")
	if err != nil || got.Effort != "" || got.Model != "m1" {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	r, err = c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "after")
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitTurn(t, c, "s", 0, r.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("turn after restart: %+v", ev)
	}
	reqs := f.Requests()
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
	home := t.TempDir()
	f := withFake(t, home)
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	f.Push(fakeopenai.Reply{Chunks: []string{"partial "}, Block: block})
	first, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "one")
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "two")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.Arrived():
	case <-time.After(30 * time.Second):
		t.Fatal("the provider was never asked")
	}
	d.kill()
	startDaemon(t, home)

	// The queued input runs (echo from the fake) once the crashed turn is repaired.
	if ev := waitTurn(t, c, "s", 0, second.TurnID); ev.State != wire.TurnCompleted {
		t.Fatalf("queued turn after the crash: %+v", ev)
	}
	page, err := c.History(ctx, "s", 0, 0, 1000)
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
	rc, err := c.Input(ctx, "s", first.InputID)
	if err != nil || rc.Delivery != wire.DeliveryInterrupted {
		t.Fatalf("receipt of the crashed turn: %+v %v", rc, err)
	}
	st, err := c.Status(ctx, "s")
	if err != nil || st.Phase != wire.PhaseIdle || st.LastTurn == nil || *st.LastTurn != wire.TurnCompleted {
		t.Fatalf("status %+v %v", st, err)
	}
}

// A graceful stop interrupts the running turn and commits what streamed,
// with reason daemon_shutdown, before the daemon exits.
func TestStopInterruptsRunningTurn(t *testing.T) {
	home := t.TempDir()
	f := withFake(t, home)
	d := startDaemon(t, home)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	defer close(block)
	f.Push(fakeopenai.Reply{Chunks: []string{"said so far"}, Block: block})
	r, err := c.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "q")
	if err != nil {
		t.Fatal(err)
	}
	<-f.Arrived()
	// Wait until the streamed text is in the hub (a partial on subscribe).
	s, _ := c.Session(ctx, "s")
	w := dialWS(t, c.Snapshot())
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "s", After: &s.Head, Epoch: s.Epoch}}})
	w.next(func(f wire.Frame) bool {
		return (f.Op == wire.PushPartial || f.Op == wire.PushDelta) && f.Text.Text == "said so far"
	})
	d.stop()
	startDaemon(t, home)
	page, err := c.History(ctx, "s", 0, 0, 100)
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
