package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"albedo/api/ws/wstest"
	"albedo/hub"
	"albedo/hub/acphost/fakeagent"
	"albedo/wire"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeagent.Env) != "" { // the test binary run again as a coding agent (agents_test.go)
		fakeagent.Main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

const testToken = "test-token"

type env struct {
	t    *testing.T
	url  string
	hub  *hub.Hub
	srv  *Server
	path string // the SQLite file
}

// testFoldRows folds the event log every few events, and every event goes
// through it (db/fold.go): a test's batches are small, and would write
// straight into events, and its sessions short, and the daemon's fold at
// 1024 would leave all they logged in the log; this way reads meet both
// tables.
const testFoldRows = 3

// newEnv runs the real stack (SQLite file, hub, echo) on 127.0.0.1:0.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	return newEnvWith(t, opts, hub.Options{})
}

// newEnvWith is newEnv with hub options (providers, limits).
func newEnvWith(t *testing.T, opts Options, hopts hub.Options) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "albedo.db")
	if hopts.DB.FoldRows == 0 {
		hopts.DB.FoldRows, hopts.DB.AlwaysLog = testFoldRows, true
	}
	h, err := hub.Open(context.Background(), path, hopts, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Token, opts.Boot = testToken, "boot1"
	srv := New(h, opts, nil)
	// Served as the daemon serves it: the edge's listener and http.Server.
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = srv.HTTPServer()
	hs.Listener = srv.Listener(hs.Listener, nil)
	hs.Start()
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
		h.Close(context.Background())
	})
	return &env{t: t, url: hs.URL, hub: h, srv: srv, path: path}
}

// do makes an HTTP request with the test token and decodes the reply.
func (e *env) do(method, path string, hdr map[string]string, body string, out any) (int, http.Header) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, resp.Header
}

func (e *env) create(id string) wire.Session {
	e.t.Helper()
	var s wire.Session
	code, _ := e.do("PUT", "/v1/sessions/"+id, map[string]string{"If-None-Match": "*"}, `{"title":"t"}`, &s)
	if code != http.StatusCreated && code != http.StatusOK {
		e.t.Fatalf("create %s: %d", id, code)
	}
	return s
}

func (e *env) history(id string) []json.RawMessage {
	e.t.Helper()
	var p struct {
		Events []json.RawMessage `json:"events"`
	}
	if code, _ := e.do("GET", "/v1/sessions/"+id+"/events?limit=1000", nil, "", &p); code != 200 {
		e.t.Fatalf("history %s: %d", id, code)
	}
	return p.Events
}

// wsClient is a test websocket client.
type wsClient = wstest.Client

// dial connects to /v1/ws, with the test token in the Authorization header
// if header is set.
func (e *env) dial(header bool) *wsClient {
	e.t.Helper()
	token := ""
	if header {
		token = testToken
	}
	return wstest.Dial(e.t, e.url, token)
}

// watchFromStart dials as the owner and subscribes to a session from its
// first event.
func (e *env) watchFromStart(id string) *wsClient {
	e.t.Helper()
	w := e.dial(true)
	zero := int64(0)
	var s wire.Session
	e.do("GET", "/v1/sessions/"+id, nil, "", &s)
	w.Hello(wire.Sub{Session: id, After: &zero, Epoch: s.Epoch})
	return w
}

// settle watches a session from its start until n turns have ended and
// returns every event seen (the whole log at that point).
func (e *env) settle(id string, n int) []wire.Event {
	e.t.Helper()
	w := e.watchFromStart(id)
	var evs []wire.Event
	for ended := 0; ended < n; {
		f := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		evs = append(evs, *f.Event)
		if f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted {
			ended++
		}
	}
	w.Conn.Close(websocket.StatusNormalClosure, "")
	return evs
}
