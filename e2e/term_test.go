//go:build !e2e_only || e2e_core

package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"albedo/hub/provider/fakeopenai"
	"albedo/wire"
)

// runningFor is the status bar's running turn with its time so far.
var runningFor = regexp.MustCompile(`running \d+ s \(Esc interrupts\)`)

// A turn that blocks at the provider is interrupted (with Esc in
// a terminal client); the daemon restarts; the session is idle with its last turn interrupted; the
// terminal client opens it, shows the transcript, accepts ordinary input
// without any slash command, and the answer arrives.
func TestTerminalReopensInterruptedSession(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{fake: true, session: "s", create: wire.SessionCreate{Title: "reopened", Provider: "fake"}})
	block := make(chan struct{})
	defer close(block)
	fx.fake.Push(fakeopenai.Reply{Chunks: []string{"never finished"}, Block: block})
	r, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "blocked question")
	if err != nil {
		t.Fatal(err)
	}
	<-fx.fake.Arrived()
	// The terminal shows the reply streaming, and for how long it has run;
	// Esc interrupts it.
	first := startUI(t, fx.c, 100, 30)
	first.waitFor("the streaming reply", func(s string) bool {
		return strings.Contains(s, "never finished") && runningFor.MatchString(s)
	})
	first.scr.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	first.waitFor("the interrupted reply", func(s string) bool {
		return strings.Contains(s, "[interrupted]") && strings.Contains(s, "interrupted (user)")
	})
	first.stop()
	rc, err := fx.c.Input(fx.ctx, "s", r.InputID)
	if err != nil || rc.Delivery != wire.DeliveryInterrupted {
		t.Fatalf("receipt after Esc: %+v %v", rc, err)
	}
	fx.d.stop()
	startDaemon(t, fx.home)
	stat, err := fx.c.Status(fx.ctx, "s")
	if err != nil || stat.Phase != wire.PhaseIdle || stat.LastTurn == nil || *stat.LastTurn != wire.TurnInterrupted {
		t.Fatalf("status after restart: %+v %v", stat, err)
	}

	u := startUI(t, fx.c, 100, 30)
	u.waitFor("the transcript", func(s string) bool {
		return strings.Contains(s, "blocked question") && strings.Contains(s, "never finished") &&
			strings.Contains(s, "[interrupted]") && strings.Contains(s, "connected")
	})
	u.typeLine("plain input")
	u.waitFor("the answer", has("fake: plain input"))
}

// A terminal client on a session gets its reset, the daemon
// is stopped (the terminal says so) and started again, a turn is sent from
// another client, and the terminal shows the reply without ever showing a
// stream error.
func TestTerminalFollowsAcrossRestart(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "followed"}})
	if _, err := fx.c.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "before the restart"); err != nil {
		t.Fatal(err)
	}
	u := startUI(t, fx.c, 100, 30)
	u.waitFor("the first reply", has("echo: before the restart"))
	fx.d.stop()
	u.waitFor("a stopped status", has("daemon stopped"))
	startDaemon(t, fx.home)
	other := newClient(t, fx.home)
	if _, err := other.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "from another client"); err != nil {
		t.Fatal(err)
	}
	u.waitFor("the reply after the restart", func(s string) bool {
		return strings.Contains(s, "echo: from another client") && strings.Contains(s, " connected")
	})
	screen := strings.Join(u.rows(), "\n")
	if n := strings.Count(screen, "echo: before the restart"); n != 1 {
		t.Fatalf("first reply shown %d times:\n%s", n, screen)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, status := range u.history {
		if strings.Contains(status, "unavailable") || strings.Contains(status, "error") || strings.Contains(status, "EOF") {
			t.Fatalf("the status bar showed %q", status)
		}
	}
}
