package e2e

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/hub/provider/fakeopenai"
	"albedo/term"
	"albedo/wire"
)

// runningFor is the status bar's running turn with its time so far.
var runningFor = regexp.MustCompile(`running \d+ s \(Esc interrupts\)`)

// ui runs the terminal client on a simulation screen against a daemon.
type ui struct {
	t      *testing.T
	scr    tcell.SimulationScreen
	drawn  chan struct{}
	done   chan error
	cancel context.CancelFunc

	mu      sync.Mutex
	last    []string // the rows of the latest frame, copied on the UI goroutine
	history []string // every status bar drawn
}

func startUI(t *testing.T, c *client.Client, w, h int) *ui {
	t.Helper()
	return startUIWith(t, c, w, h, client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
}

// startUIWith is startUI with the stream's options given.
func startUIWith(t *testing.T, c *client.Client, w, h int, so client.StreamOptions) *ui {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	scr.SetSize(w, h)
	u := &ui{t: t, scr: scr, drawn: make(chan struct{}, 1), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	u.cancel = cancel
	go func() {
		u.done <- term.Run(ctx, term.Options{Client: c, Screen: scr, Stream: so,
			OnDraw: func() {
				// The screen's cells belong to the UI goroutine: copy them here.
				r := u.read()
				u.mu.Lock()
				u.last = r
				u.history = append(u.history, r[len(r)-1])
				u.mu.Unlock()
				select {
				case u.drawn <- struct{}{}:
				default:
				}
			}})
	}()
	t.Cleanup(u.stop)
	return u
}

// stop ends the terminal client and waits for it; safe to call twice.
func (u *ui) stop() {
	u.cancel()
	select {
	case err, ok := <-u.done:
		if ok && err != nil {
			u.t.Errorf("terminal client: %v", err)
		}
		if ok {
			close(u.done)
		}
	case <-time.After(10 * time.Second):
		u.t.Error("terminal client did not stop")
	}
}

// rows returns the latest frame.
func (u *ui) rows() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string{""}, u.last...)
}

// read copies the screen; only on the UI goroutine (OnDraw).
func (u *ui) read() []string {
	cells, w, h := u.scr.GetContents()
	out := make([]string, h)
	for y := range h {
		var b strings.Builder
		for x := range w {
			b.WriteString(string(cells[y*w+x].Runes))
		}
		out[y] = b.String()
	}
	return out
}

// waitFor waits, frame by frame, until the screen satisfies ok.
func (u *ui) waitFor(what string, ok func(screen string) bool) {
	u.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if s := strings.Join(u.rows(), "\n"); ok(s) {
			return
		}
		select {
		case <-u.drawn:
		case <-deadline:
			u.t.Fatalf("screen never showed %s:\n%s", what, strings.Join(u.rows(), "\n"))
		}
	}
}

func (u *ui) typeLine(s string) {
	for _, r := range s {
		u.scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	u.scr.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
}

func has(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}

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
