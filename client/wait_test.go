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
