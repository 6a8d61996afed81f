package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeDownForTest(t *testing.T, home string, d Down) {
	t.Helper()
	b, _ := json.Marshal(d)
	if err := os.WriteFile(filepath.Join(home, DownFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// What daemon.down lets a client do on its own.
func TestDownErr(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte("x = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := StampConfig(home)
	edited := ConfigStamp{ModNS: now.ModNS - 1, Size: now.Size}
	c, _ := New(Options{Home: home})
	tests := []struct {
		name  string
		down  *Down // nil: no file
		raw   string
		check func(error) bool
	}{
		{"nothing recorded: a crash", nil, "", func(err error) bool { return err == nil }},
		{"stopped", &Down{Stopped: true}, "", func(err error) bool { return errors.Is(err, ErrStopped) && errors.Is(err, ErrUnavailable) }},
		{"failed, config unchanged", &Down{Error: "config.toml line 3: bad", Config: &now}, "", func(err error) bool {
			var se *StartError
			return errors.As(err, &se) && se.Reason == "config.toml line 3: bad" && errors.Is(err, ErrUnavailable)
		}},
		{"failed, config edited since", &Down{Error: "bad", Config: &edited}, "", func(err error) bool { return err == nil }},
		{"failed, no stamp", &Down{Error: "bad"}, "", func(err error) bool { return err == nil }},
		{"unreadable", nil, "{", func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(home, DownFile))
			if tt.down != nil {
				writeDownForTest(t, home, *tt.down)
			}
			if tt.raw != "" {
				os.WriteFile(filepath.Join(home, DownFile), []byte(tt.raw), 0o600)
			}
			if err := c.downErr(); !tt.check(err) {
				t.Fatalf("downErr: %v", err)
			}
		})
	}
}

func TestBrief(t *testing.T) {
	t.Parallel()
	home := "/h/albedo"
	got := brief("/h/albedo/config.toml line 3:\n  expected\t']'", home)
	if want := "config.toml line 3: expected ']'"; got != want {
		t.Fatalf("brief: %q, want %q", got, want)
	}
}

// A stream waiting for a daemon that is down on purpose goes on when any
// of daemon.json, daemon.down, config.toml changes, and not before.
func TestWaitHomeEndsOnAChange(t *testing.T) {
	t.Parallel()
	for _, name := range []string{DaemonFile, DownFile, ConfigFile} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			c, _ := New(Options{Home: home})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st := &Stream{c: c, ctx: ctx}
			marks := c.homeMarks()
			returned := make(chan bool, 1)
			go func() { returned <- st.waitHome(marks) }()
			// Changed after the marks were taken, before or while the wait
			// runs: either way it must end.
			if err := os.WriteFile(filepath.Join(home, name), []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			select {
			case ok := <-returned:
				if !ok {
					t.Fatal("waitHome said the stream was closed")
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a change did not end the wait")
			}
			// Unchanged: only closing the stream ends it.
			go func() { returned <- st.waitHome(c.homeMarks()) }()
			cancel()
			if ok := <-returned; ok {
				t.Fatal("a wait with nothing changed said to go on")
			}
		})
	}
}

// A stream on its own (discover, not explicit) starts no daemon where
// daemon.down says none should start; a user's Discover tries regardless.
// The albedo binary here does not exist, so any start fails with "start
// daemon": that error says a start was tried.
func TestDiscoverOnItsOwnStartsNone(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c, _ := New(Options{Home: home, AutoStart: true, Exe: filepath.Join(home, "no-such-albedo")})
	ctx := context.Background()
	tried := func(err error) bool { return err != nil && strings.Contains(err.Error(), "start daemon") }

	writeDownForTest(t, home, Down{Stopped: true})
	if _, err := c.discover(ctx, false); !errors.Is(err, ErrStopped) {
		t.Fatalf("on its own after a stop: %v", err)
	}
	if _, err := c.Discover(ctx); !tried(err) {
		t.Fatalf("a user's Discover after a stop: %v", err)
	}

	cfg := StampConfig(home) // no config.toml: the zero stamp
	writeDownForTest(t, home, Down{Error: "broken", Config: &cfg})
	var se *StartError
	if _, err := c.discover(ctx, false); !errors.As(err, &se) || se.Reason != "broken" {
		t.Fatalf("on its own after a failed start: %v", err)
	}
	if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.discover(ctx, false); !tried(err) {
		t.Fatalf("on its own once config.toml changed: %v", err)
	}

	os.Remove(filepath.Join(home, DownFile))
	if _, err := c.discover(ctx, false); !tried(err) {
		t.Fatalf("on its own after a crash: %v", err)
	}
}

// A passive copy of an auto-starting client never starts a daemon: its
// calls fail as unavailable where the client itself would try a start.
func TestPassiveStartsNone(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	c, _ := New(Options{Home: home, AutoStart: true, Exe: filepath.Join(home, "no-such-albedo"), CallRetry: time.Millisecond})
	ctx := context.Background()
	if _, err := c.Sessions(ctx); err == nil || !strings.Contains(err.Error(), "start daemon") {
		t.Fatalf("the auto-starting client did not try a start: %v", err)
	}
	p, err := c.Passive()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sessions(ctx); !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "start daemon") {
		t.Fatalf("the passive client: %v", err)
	}
	if !c.opts.AutoStart {
		t.Fatal("Passive changed the client it copied")
	}
}
