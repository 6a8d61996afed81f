//go:build !e2e_only || e2e_core

package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// states records a stream's states for a test to wait on, in order.
type states struct {
	t  *testing.T
	ch chan client.State
}

func newStates(t *testing.T) *states { return &states{t: t, ch: make(chan client.State, 4096)} }

// connectedStream starts a daemon on a new home with the CLI and follows
// it with an auto-starting client's stream (closed with the test); it
// returns the home and the stream's states, once connected.
func connectedStream(t *testing.T) (string, *states) {
	t.Helper()
	home := t.TempDir()
	stopOnCleanup(t, home)
	cli(t, home, "status")
	ss := newStates(t)
	st := autoClient(t, home).Stream(client.StreamOptions{OnState: ss.on})
	t.Cleanup(func() { st.Close() })
	ss.await("connected", phase(client.Connected), nil)
	return home, ss
}

// on is the stream's OnState: it must not block the stream.
func (s *states) on(st client.State) {
	select {
	case s.ch <- st:
	default:
		s.t.Error("more stream states than a test could want")
	}
}

// await waits for the next state that ok accepts, failing on any state bad
// accepts before it (bad may be nil).
func (s *states) await(what string, ok, bad func(client.State) bool) client.State {
	s.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case st := <-s.ch:
			if ok(st) {
				return st
			}
			if bad != nil && bad(st) {
				s.t.Fatalf("waiting for %s, the stream was %s (%v, %+v)", what, st.Phase, st.Err, st.Snap)
			}
		case <-deadline:
			s.t.Fatalf("the stream never was %s", what)
		}
	}
}

func phase(p client.Phase) func(client.State) bool {
	return func(s client.State) bool { return s.Phase == p }
}

// autoClient is a client that starts daemons, as the CLI and the terminal do.
func autoClient(t *testing.T, home string) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{Home: home, AutoStart: true, Exe: albedoBin})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// `albedo stop` sticks while a client that starts daemons is attached.
// Its stream says Stopped and starts none (it used to start the next
// daemon within ~120 ms); it follows a daemon
// that a command starts; a new stream (the terminal's r) starts one; and a
// SIGKILL is still recovered from on its own.
func TestStopSticksWhileAStreamWaits(t *testing.T) {
	parallel(t)
	home, ss := connectedStream(t)
	// Connected to a daemon: the only way to leave Stopped in this test is
	// a daemon started by someone, which is a failure until a command runs.
	connected := phase(client.Connected)

	cli(t, home, "stop")
	ss.await("stopped", phase(client.Stopped), connected)
	noDaemon(t, home, "the stream stopped")
	if d, err := client.ReadDown(home); err != nil || !d.Stopped {
		t.Fatalf("daemon.down after a stop: %+v %v", d, err)
	}

	// A command is a user's: it starts a daemon, and the stream follows.
	cli(t, home, "status")
	s := ss.await("connected after a command", connected, nil)
	if pid := livePID(t, home); s.Snap.PID != pid {
		t.Fatalf("the stream is on pid %d, daemon.json names %d", s.Snap.PID, pid)
	}
	if _, err := os.Stat(filepath.Join(home, client.DownFile)); !os.IsNotExist(err) {
		t.Fatalf("daemon.down once a daemon listens: %v", err)
	}

	// Stopped again; a new stream, as the terminal's r makes, starts one.
	cli(t, home, "stop")
	ss.await("stopped again", phase(client.Stopped), connected)
	noDaemon(t, home, "stopped again")
	retry := newStates(t)
	st2 := autoClient(t, home).Stream(client.StreamOptions{OnState: retry.on})
	defer st2.Close()
	s = retry.await("the retry connected", connected, phase(client.Stopped))
	pid := livePID(t, home)
	if s.Snap.PID != pid {
		t.Fatalf("the retry is on pid %d, daemon.json names %d", s.Snap.PID, pid)
	}
	ss.await("the first stream back", connected, nil)

	// A crash leaves no record: the streams start the next daemon themselves.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s = ss.await("connected after a SIGKILL", func(s client.State) bool {
		return s.Phase == client.Connected && s.Snap.PID != pid
	}, phase(client.Stopped))
	if next := livePID(t, home); next != s.Snap.PID {
		t.Fatalf("after the SIGKILL: stream on %d, daemon.json names %d", s.Snap.PID, next)
	}
	// Both streams may have started a daemon; the one that lost has
	// exited once its stream is connected, so none is left starting.
	retry.await("the retry back after a SIGKILL", func(st client.State) bool {
		return st.Phase == client.Connected && st.Snap.PID == s.Snap.PID
	}, phase(client.Stopped))
}

// A client that has found a daemon and made calls does not start the
// next one when a call meets a stop on purpose: the terminal's own
// requests (a session's usage after a turn, a page of history) are no
// user asking for a daemon. The call waits for one that someone starts
// (a restart), and fails with ErrStopped once CallRetry is over; the home
// stays free. A new client (a command) still starts one.
func TestStopSticksForACallAfterIt(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	stopOnCleanup(t, home)
	c, err := client.New(client.Options{Home: home, AutoStart: true, Exe: albedoBin, CallRetry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := c.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	cli(t, home, "stop")
	if _, err := c.Sessions(ctx); !errors.Is(err, client.ErrStopped) {
		t.Fatalf("a call after the stop: %v, want ErrStopped", err)
	}
	noDaemon(t, home, "a call after the stop")
	if _, err := autoClient(t, home).Sessions(ctx); err != nil {
		t.Fatalf("a new client after the stop: %v", err)
	}
	livePID(t, home)
}

// A terminal whose stream has given up ("daemon unavailable") notices a
// daemon coming back and connects to it by itself, without r.
func TestTerminalNoticesTheDaemonComingBack(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s", create: wire.SessionCreate{Title: "back"}})
	u := startUIWith(t, fx.c, 100, 30, client.StreamOptions{Budget: 500 * time.Millisecond,
		Backoff: client.BackoffOptions{Cap: 100 * time.Millisecond}})
	u.waitFor("a connected status bar", has(" connected"))
	fx.d.kill() // a crash: nothing says the stop was meant, and this client starts no daemon
	u.waitFor("the stream giving up", has("daemon unavailable"))
	startDaemon(t, fx.home)
	u.waitFor("a connected status bar again", has(" connected │"))
}
