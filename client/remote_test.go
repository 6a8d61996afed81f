package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"albedo/api"
	"albedo/hub"
	"albedo/wire"
)

func TestServerURL(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"http://127.0.0.1:7411":         "http://127.0.0.1:7411",
		"http://127.0.0.1:7411/":        "http://127.0.0.1:7411",
		" https://albedo.example ":      "https://albedo.example",
		"https://albedo.example/team//": "https://albedo.example/team",
	}
	for in, want := range good {
		if got, err := ServerURL(in); err != nil || got != want {
			t.Errorf("ServerURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:7411", "ws://h:1", "ftp://h", "http://", "http://u:p@h",
		"http://h/?token=x", "http://h/#token=x", "mailto:x@y"} {
		if got, err := ServerURL(bad); err == nil {
			t.Errorf("ServerURL(%q) = %q, want an error", bad, got)
		}
	}
	for base, want := range map[string]string{"http://h:1": "ws://h:1/v1/ws", "https://h/p": "wss://h/p/v1/ws"} {
		if got := WSURL(base); got != want {
			t.Errorf("WSURL(%q) = %q, want %q", base, got, want)
		}
	}
}

// Which mode New picks, and what it refuses. Not parallel: it sets the
// environment New reads.
func TestNewWithURL(t *testing.T) {
	t.Setenv(EnvURL, "")
	t.Setenv(EnvToken, "")
	home := t.TempDir()
	if _, err := New(Options{URL: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), EnvToken) {
		t.Errorf("a URL without a token: %v, want an error naming %s", err, EnvToken)
	}
	if _, err := New(Options{URL: "http://127.0.0.1:1", Token: "t", Home: home}); err == nil {
		t.Error("URL and Home together were accepted")
	}
	if _, err := New(Options{URL: "http://127.0.0.1:1", Token: "t", AutoStart: true}); err == nil {
		t.Error("URL with AutoStart was accepted")
	}
	if _, err := New(Options{URL: "127.0.0.1:1", Token: "t"}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}

	t.Setenv(EnvURL, "https://albedo.example/")
	t.Setenv(EnvToken, "env-token")
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	if c.URL() != "https://albedo.example" || c.Home() != "" || s.BaseURL != c.URL() || s.Token != "env-token" || s.Port != 443 {
		t.Errorf("from the environment: URL %q home %q snapshot %+v", c.URL(), c.Home(), s)
	}
	if c, err = New(Options{Token: "mine"}); err != nil || c.Snapshot().Token != "mine" {
		t.Errorf("Options.Token does not beat $%s: %+v, %v", EnvToken, c.Snapshot(), err)
	}
	// A home given is a home, whatever $ALBEDO_URL says.
	if c, err = New(Options{Home: home}); err != nil || c.URL() != "" || c.Home() != home {
		t.Errorf("a home with $%s set: URL %q home %q, %v", EnvURL, c.URL(), c.Home(), err)
	}
	rc, _ := New(Options{})
	if _, err := rc.Shutdown(context.Background()); !errors.Is(err, ErrNoHome) {
		t.Errorf("Shutdown in cluster mode: %v, want ErrNoHome", err)
	}
}

// server is the real stack (hub on a SQLite file, api, echo) behind an
// httptest server on a port of its own, which can stop and start again
// on the same port and database, as a daemon restarted behind a URL.
type server struct {
	t     *testing.T
	db    string
	addr  string
	tls   bool
	hub   *hub.Hub
	api   *api.Server
	hs    *httptest.Server
	token string
}

func startServer(t *testing.T, tls bool) *server {
	t.Helper()
	s := &server{t: t, db: filepath.Join(t.TempDir(), "albedo.db"), addr: "127.0.0.1:0", tls: tls, token: "owner-token"}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.t.Helper()
	h, err := hub.Open(context.Background(), s.db, hub.Options{}, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	srv := api.New(h, api.Options{Token: s.token, Boot: fmt.Sprint(time.Now().UnixNano())}, nil)
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		h.Close(context.Background())
		s.t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	hs := httptest.NewUnstartedServer(srv.Handler())
	hs.Listener.Close()
	hs.Listener = ln
	if s.tls {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	s.hub, s.api, s.hs = h, srv, hs
}

// stop closes every connection and the listener; safe to call twice.
func (s *server) stop() {
	if s.hs == nil {
		return
	}
	s.api.Close()
	s.hs.Close()
	s.hub.Close(context.Background())
	s.hs = nil
}

func (s *server) url() string { return s.hs.URL }

// An empty working directory and home for the test: a client of a URL
// must write and read nothing there (no daemon.json, no daemon.down). The
// directory and the environment are the process's, so a test that calls
// it cannot be parallel (t.Chdir and t.Setenv refuse).
func emptyPlace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("ALBEDO_HOME", dir)
	t.Setenv(EnvURL, "")
	t.Setenv(EnvToken, "")
	return dir
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 0 {
		t.Errorf("%s was written to: %v %v", dir, ents, err)
	}
}

// follow reads sub until it has seen n messages, and checks that events
// come once each, contiguous.
func follow(t *testing.T, ctx context.Context, sub *Subscription, last *int64, texts *[]string, n int) {
	t.Helper()
	for len(*texts) < n {
		it, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("next after %d messages: %v", len(*texts), err)
		}
		switch it.Op {
		case wire.PushReset:
			*last = it.Reset.Before
		case wire.PushEvent:
			if it.Event.Offset != *last+1 {
				t.Fatalf("event %d after %d: a gap or a duplicate", it.Event.Offset, *last)
			}
			*last = it.Event.Offset
			if it.Event.Type == wire.EventMessage {
				*texts = append(*texts, it.Event.Text)
			}
		}
	}
}

// A client of a URL calls and streams with no home; the server stops and
// starts again on the same port (the database kept), and the stream
// reattaches from its offsets: no gap, no duplicate. Nothing is read or
// written in the home or the working directory.
func TestClusterModeFollowsARestart(t *testing.T) {
	dir := emptyPlace(t)
	srv := startServer(t, false)
	c, err := New(Options{URL: srv.url(), Token: srv.token, Backoff: BackoffOptions{Cap: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	snap, err := c.Discover(ctx)
	if err != nil || snap.Version != wire.Version {
		t.Fatalf("discover: %+v, %v", snap, err)
	}
	s, err := c.CreateSession(ctx, "s", wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	states := make(chan State, 64)
	st := c.Stream(StreamOptions{Backoff: BackoffOptions{Cap: 200 * time.Millisecond}, OnState: func(s State) {
		select {
		case states <- s:
		default:
		}
	}})
	defer st.Close()
	sub := st.Subscribe("s", Cursor{Epoch: s.Epoch})
	if _, err := st.Send(ctx, "s", "00000000-0000-7000-8000-000000000001", "one"); err != nil {
		t.Fatal(err)
	}
	var last int64
	var texts []string
	follow(t, ctx, sub, &last, &texts, 2) // the input and its echo

	srv.stop()
	waitPhase(t, states, Reconnecting)
	if _, err := c.Discover(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("discover with the server down: %v, want ErrUnavailable", err)
	}
	srv.start()
	// Sent while the stream may still be reconnecting: it goes out once it
	// is back, and lands once.
	if _, err := st.Send(ctx, "s", "00000000-0000-7000-8000-000000000002", "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutInput(ctx, "s", "00000000-0000-7000-8000-000000000003", "three"); err != nil {
		t.Fatal(err)
	}
	follow(t, ctx, sub, &last, &texts, 6)
	// Each once; "three" may be committed while "two" is answered.
	got := slices.Sorted(slices.Values(texts))
	want := []string{"echo: one", "echo: three", "echo: two", "one", "three", "two"}
	if !slices.Equal(got, want) {
		t.Fatalf("messages %q, want each of %q once", texts, want)
	}
	// Back, with what the token may do as hello said it.
	if s := waitPhase(t, states, Connected); s.Role != wire.TokenOwner {
		t.Fatalf("connected as %q", s.Role)
	}
	assertEmpty(t, dir)
}

func waitPhase(t *testing.T, states <-chan State, p Phase) State {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case s := <-states:
			if s.Phase == p {
				return s
			}
		case <-deadline:
			t.Fatalf("the stream never became %s", p)
		}
	}
}

// https:// and wss://: the client's HTTP client (here the test server's,
// which trusts its certificate) carries the calls and the websocket.
func TestClusterModeOverTLS(t *testing.T) {
	dir := emptyPlace(t)
	srv := startServer(t, true)
	if !strings.HasPrefix(srv.url(), "https://") {
		t.Fatalf("not a TLS server: %s", srv.url())
	}
	c, err := New(Options{URL: srv.url(), Token: srv.token, HTTP: srv.hs.Client()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{}); err != nil {
		t.Fatal(err)
	}
	st := c.Stream(StreamOptions{})
	defer st.Close()
	sub := st.Subscribe("s", Cursor{})
	if _, err := st.Send(ctx, "s", "00000000-0000-7000-8000-000000000001", "over tls"); err != nil {
		t.Fatal(err)
	}
	var last int64
	var texts []string
	follow(t, ctx, sub, &last, &texts, 2)
	if texts[1] != "echo: over tls" {
		t.Fatalf("messages %q", texts)
	}
	assertEmpty(t, dir)
}

// A token the server refuses is final for a client of a URL: a call
// fails at once (no retry for CallRetry), a stream ends unauthorized.
func TestClusterModeRefusedToken(t *testing.T) {
	emptyPlace(t)
	srv := startServer(t, false)
	c, err := New(Options{URL: srv.url(), Token: "wrong", CallRetry: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Sessions(ctx); Code(err) != wire.CodeUnauthorized {
		t.Fatalf("sessions with a wrong token: %v", err)
	}
	st := c.Stream(StreamOptions{})
	defer st.Close()
	select {
	case <-st.Done():
	case <-ctx.Done():
		t.Fatal("the stream did not end")
	}
	if Code(st.Err()) != wire.CodeUnauthorized {
		t.Fatalf("stream ended with %v", st.Err())
	}
}

// With nothing at the URL, Discover says so at once and WaitHomeChange
// returns when a server answers there.
func TestClusterModeWaitsForTheServer(t *testing.T) {
	emptyPlace(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port with nothing behind it, for now
	c, err := New(Options{URL: "http://" + addr, Token: "owner-token", Backoff: BackoffOptions{Cap: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Discover(ctx); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("discover with nothing there: %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- c.WaitHomeChange(ctx) }()
	srv := &server{t: t, db: filepath.Join(t.TempDir(), "albedo.db"), addr: addr, token: "owner-token"}
	srv.start()
	t.Cleanup(srv.stop)
	if err := <-waited; err != nil {
		t.Fatalf("wait: %v", err)
	}
	if _, err := c.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
}
