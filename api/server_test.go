package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"albedo/hub"
	"albedo/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	hs := httptest.NewServer(srv.Handler())
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

// ws is a test websocket client.
type ws struct {
	t  *testing.T
	c  *websocket.Conn
	in chan wire.Frame
	// err receives the read error that ended the connection.
	err chan error
	// batched counts messages that carried more than one frame.
	batched atomic.Int64
	// token, if set, is sent in hello instead of an Authorization header.
	token string
}

func (e *env) dial(header bool) *ws {
	e.t.Helper()
	h := http.Header{}
	if header {
		h.Set("Authorization", "Bearer "+testToken)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, e.url+"/v1/ws", &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{wire.Subprotocol}})
	if err != nil {
		e.t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	w := &ws{t: e.t, c: c, in: make(chan wire.Frame, 1<<16), err: make(chan error, 1)}
	go func() {
		for {
			_, msg, err := c.Read(context.Background())
			if err != nil {
				w.err <- err
				close(w.in)
				return
			}
			if bytes.Count(msg, []byte{'\n'}) > 0 {
				w.batched.Add(1)
			}
			for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
				f, err := wire.DecodeFrame(line)
				if err != nil {
					w.t.Errorf("server sent bad frame %q: %v", line, err)
				}
				w.in <- f
			}
		}
	}()
	e.t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *ws) send(v any) {
	w.t.Helper()
	b, ok := v.([]byte)
	if !ok {
		if s, isStr := v.(string); isStr {
			b = []byte(s)
		} else {
			b, _ = json.Marshal(v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// next returns the next frame for which keep is true.
func (w *ws) next(keep func(wire.Frame) bool) wire.Frame {
	w.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				w.t.Fatalf("connection closed: %v", <-w.err)
			}
			if keep(f) {
				return f
			}
		case <-deadline:
			w.t.Fatalf("no matching frame within 10s")
		}
	}
}

// until returns every frame up to and including the first for which stop
// is true.
func (w *ws) until(stop func(wire.Frame) bool) []wire.Frame {
	w.t.Helper()
	var fs []wire.Frame
	for {
		f := w.next(func(wire.Frame) bool { return true })
		fs = append(fs, f)
		if stop(f) {
			return fs
		}
	}
}

func (w *ws) reply(id int64) wire.Reply {
	w.t.Helper()
	return *w.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }).Reply
}

// closed waits for the connection to end and returns its close status.
func (w *ws) closed() websocket.StatusCode {
	w.t.Helper()
	for {
		select {
		case _, ok := <-w.in:
			if !ok {
				return websocket.CloseStatus(<-w.err)
			}
		case <-time.After(10 * time.Second):
			w.t.Fatalf("connection still open after 10s")
		}
	}
}

func (w *ws) hello(subs ...wire.Sub) wire.Reply {
	w.t.Helper()
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Client: "test/1", Subs: subs, Token: w.token})
	r := w.reply(1)
	if !r.OK {
		w.t.Fatalf("hello: %+v", r.Error)
	}
	return r
}

// settle watches a session from its start until n turns have ended and
// returns every event seen (the whole log at that point).
func (e *env) settle(id string, n int) []wire.Event {
	e.t.Helper()
	w := e.dial(true)
	zero := int64(0)
	var s wire.Session
	e.do("GET", "/v1/sessions/"+id, nil, "", &s)
	w.hello(wire.Sub{Session: id, After: &zero, Epoch: s.Epoch})
	var evs []wire.Event
	for ended := 0; ended < n; {
		f := w.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		evs = append(evs, *f.Event)
		if f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted {
			ended++
		}
	}
	w.c.Close(websocket.StatusNormalClosure, "")
	return evs
}
