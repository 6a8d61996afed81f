package ws

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"albedo/api/ws/wstest"
	"albedo/hub"
	"albedo/hub/access"
	"albedo/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "test-token"

// env is the endpoint over a real hub on a SQLite file, served on
// 127.0.0.1:0 by a handler that does what api's edge does before it hands
// a request over: it authenticates the Authorization header (the owner's
// testToken, or a stored bot's or viewer's token) and answers a refusal of
// Serve's over HTTP. Sessions and inputs go through the hub.
type env struct {
	t   *testing.T
	url string
	hub *hub.Hub
	srv *Server
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	h, err := hub.Open(context.Background(), filepath.Join(t.TempDir(), "albedo.db"), hub.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	authenticate := func(token string) (access.Principal, bool) {
		if token == testToken {
			return access.Principal{Role: wire.TokenOwner, Name: "user"}, true
		}
		return h.Authenticate(token)
	}
	opts.Boot, opts.Authenticate = "boot1", authenticate
	srv := New(h, opts, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p access.Principal
		authed := false
		if a := r.Header.Get("Authorization"); a != "" {
			if p, authed = authenticate(strings.TrimPrefix(a, "Bearer ")); !authed {
				http.Error(w, "unknown token", http.StatusUnauthorized)
				return
			}
		}
		if err := srv.Serve(w, r, p, authed); err != nil {
			status := http.StatusServiceUnavailable
			switch err.(*wire.Error).Code {
			case wire.CodeTooMany:
				status = http.StatusTooManyRequests
			case wire.CodeBadRequest:
				status = http.StatusBadRequest
			}
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(wire.ErrorBody{Error: err.(*wire.Error)})
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
		h.Close(context.Background())
	})
	return &env{t: t, url: hs.URL, hub: h, srv: srv}
}

func (e *env) create(id string) wire.Session {
	e.t.Helper()
	s, _, err := e.hub.CreateSession(context.Background(), id, wire.SessionCreate{Title: "t"})
	if err != nil {
		e.t.Fatalf("create %s: %v", id, err)
	}
	return s
}

// input puts the n-th input (of up to 2^48) into session, as the owner.
func (e *env) input(session string, n int, text string) {
	e.t.Helper()
	id := fmt.Sprintf("0190a8a0-0000-7000-8000-%012d", n)
	if _, err := e.hub.PutInput(context.Background(), session, id, text, wire.Author{Name: "user"}); err != nil {
		e.t.Fatalf("input %d to %s: %v", n, session, err)
	}
}

// botToken adds a bot and returns its token.
func (e *env) botToken(name string) string {
	e.t.Helper()
	tok, err := e.hub.AddBot(context.Background(), name, nil)
	if err != nil {
		e.t.Fatalf("add bot %s: %v", name, err)
	}
	return tok
}

// dial connects with the owner's token in the Authorization header, or
// with none if header is false.
func (e *env) dial(header bool) *wstest.Client {
	e.t.Helper()
	token := ""
	if header {
		token = testToken
	}
	return wstest.Dial(e.t, e.url, token)
}

// dialToken opens a websocket that sends its token in hello.
func (e *env) dialToken(token string) *wstest.Client {
	e.t.Helper()
	w := e.dial(false)
	w.Token = token
	return w
}

func ptr[T any](v T) *T { return &v }

// dialRaw says hello with subs as the owner and returns the connection
// without a reader (wstest.DialRaw).
func (e *env) dialRaw(subs ...wire.Sub) *websocket.Conn {
	e.t.Helper()
	return wstest.DialRaw(e.t, e.url, testToken, 0, subs...)
}

// dialRawBuf is dialRaw with a receive buffer of rcvbuf bytes.
func (e *env) dialRawBuf(rcvbuf int, subs ...wire.Sub) *websocket.Conn {
	e.t.Helper()
	return wstest.DialRaw(e.t, e.url, testToken, rcvbuf, subs...)
}

// floodPastAStalledReader is wstest.FloodPastAStalledReader into session
// "s".
func floodPastAStalledReader(e *env, fast *wstest.Client, n, size int) {
	e.t.Helper()
	wstest.FloodPastAStalledReader(e.t, fast, n, size, func(i int, text string) { e.input("s", i, text) })
}

// history returns session's events, up to 1 000.
func (e *env) history(session string) []json.RawMessage {
	e.t.Helper()
	evs, _, _, err := e.hub.History(context.Background(), session, 0, 0, 1000)
	if err != nil {
		e.t.Fatalf("history of %s: %v", session, err)
	}
	return evs
}
