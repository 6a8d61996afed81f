package client

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"albedo/wire"
)

// writeDaemonFileForTest publishes info as the daemon does (temp file,
// rename).
func writeDaemonFileForTest(t *testing.T, home string, info wire.DaemonInfo) {
	t.Helper()
	b, _ := json.Marshal(info)
	tmp := filepath.Join(home, ".daemon.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(home, DaemonFile)); err != nil {
		t.Fatal(err)
	}
}

// A stream waiting out a long backoff comes back when a new daemon
// appears, after a first delay (≤ 250 ms, jittered), and starts its
// schedule over.
func TestWaitShortensForANewDaemon(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c, err := New(Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan State, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &Stream{c: c, ctx: ctx, opts: StreamOptions{OnState: func(s State) { states <- s }}}
	b := NewBackoff(BackoffOptions{})
	for range 5 {
		b.Next() // the schedule of a stream that failed five times
	}

	// The daemon the last attempt failed on, then a new one (this test's
	// own pid: a live process).
	writeDaemonFileForTest(t, home, wire.DaemonInfo{PID: 999999, Boot: "old"})
	seen := c.daemonBoot()
	returned := make(chan bool, 1)
	go func() { returned <- st.wait(time.Hour, b, nil, seen) }()
	writeDaemonFileForTest(t, home, wire.DaemonInfo{PID: os.Getpid(), Boot: "new"})
	select {
	case ok := <-returned:
		if !ok {
			t.Fatal("wait said the stream was closed")
		}
	case <-time.After(30 * time.Second): // the wait itself is an hour
		t.Fatal("a new daemon did not end the wait")
	}
	s := <-states
	if s.Phase != Reconnecting || s.Attempt != 1 || s.Next > 250*time.Millisecond {
		t.Fatalf("state after a new daemon: %+v", s)
	}
	if b.Attempt() != 1 {
		t.Fatalf("the schedule did not start over: attempt %d", b.Attempt())
	}

	// Closing the stream ends a wait.
	go func() { returned <- st.wait(time.Hour, b, nil, "new") }()
	cancel()
	if ok := <-returned; ok {
		t.Fatal("a closed stream's wait said to retry")
	}
}

// A stream that gave up counts a change of the home from its last attempt
// to connect: a daemon that started after that attempt, before anyone
// asked to wait, ends the wait at once. Counted from the call instead, it
// was missed, and a terminal showed "daemon unavailable" beside a live
// daemon until r was pressed.
func TestAStreamThatGaveUpSeesADaemonThatCameSince(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c, err := New(Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan State, 64)
	st := c.Stream(StreamOptions{Budget: 100 * time.Millisecond, Backoff: BackoffOptions{Cap: 20 * time.Millisecond},
		OnState: func(s State) { states <- s }})
	defer st.Close()
	deadline := time.After(30 * time.Second)
	for s := (State{}); s.Phase != Unavailable; {
		select {
		case s = <-states:
		case <-deadline:
			t.Fatal("the stream did not give up")
		}
	}

	// Nothing changed: the wait goes on.
	short, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := st.WaitHomeChange(short); err != context.DeadlineExceeded {
		t.Fatalf("a wait with nothing changed: %v", err)
	}

	// A daemon published after the stream gave up, before the wait.
	writeDaemonFileForTest(t, home, wire.DaemonInfo{PID: os.Getpid(), Boot: "back"})
	ctx, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	if err := st.WaitHomeChange(ctx); err != nil {
		t.Fatalf("a daemon published since the last attempt did not end the wait: %v", err)
	}
	if err := c.WaitHomeChange(short); err != context.DeadlineExceeded {
		t.Fatalf("the client's wait, counted from its call, ended with %v", err)
	}
}
