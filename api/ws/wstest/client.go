// Package wstest is a websocket client for the tests of api and api/ws: it
// dials /v1/ws, reads every frame into a queue on a goroutine of its own,
// and waits on that queue with deadlines. Nothing outside tests imports it.
package wstest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// Client is one test connection.
type Client struct {
	T    testing.TB
	Conn *websocket.Conn
	in   chan wire.Frame
	err  chan error // the read error that ended the connection
	// Batched counts messages that carried more than one frame.
	Batched atomic.Int64
	// Token, if set, is sent in Hello instead of an Authorization header.
	Token string
	// Wait bounds Next's wait for a frame (0: 10 s): longer for a test
	// whose frames are slow to come by nature (megabytes through -race).
	Wait time.Duration
}

// Dial connects to base's /v1/ws (base is an http:// URL), with an
// Authorization header carrying token unless it is "".
func Dial(t testing.TB, base, token string) *Client {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, base+"/v1/ws", &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{wire.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	w := &Client{T: t, Conn: c, in: make(chan wire.Frame, 1<<16), err: make(chan error, 1)}
	go w.read()
	t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *Client) read() {
	for {
		_, msg, err := w.Conn.Read(context.Background())
		if err != nil {
			w.err <- err
			close(w.in)
			return
		}
		if bytes.Count(msg, []byte{'\n'}) > 0 {
			w.Batched.Add(1)
		}
		for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
			f, err := wire.DecodeFrame(line)
			if err != nil {
				w.T.Errorf("server sent bad frame %q: %v", line, err)
			}
			w.in <- f
		}
	}
}

// Send writes v as one message: []byte and string as they are, anything
// else as JSON.
func (w *Client) Send(v any) {
	w.T.Helper()
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
	if err := w.Conn.Write(ctx, websocket.MessageText, b); err != nil {
		w.T.Fatalf("write: %v", err)
	}
}

// Next returns the next frame for which keep is true, within Wait.
func (w *Client) Next(keep func(wire.Frame) bool) wire.Frame {
	w.T.Helper()
	wait := cmp.Or(w.Wait, 10*time.Second)
	deadline := time.After(wait)
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				w.T.Fatalf("connection closed: %v", <-w.err)
			}
			if keep(f) {
				return f
			}
		case <-deadline:
			w.T.Fatalf("no matching frame within %s", wait)
		}
	}
}

// Until returns every frame up to and including the first for which stop
// is true.
func (w *Client) Until(stop func(wire.Frame) bool) []wire.Frame {
	w.T.Helper()
	var fs []wire.Frame
	for {
		f := w.Next(func(wire.Frame) bool { return true })
		fs = append(fs, f)
		if stop(f) {
			return fs
		}
	}
}

// Reply returns the reply to the command id.
func (w *Client) Reply(id int64) wire.Reply {
	w.T.Helper()
	return *w.Next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }).Reply
}

// Closed waits for the connection to end and returns its close status.
func (w *Client) Closed() websocket.StatusCode {
	w.T.Helper()
	return w.ClosedWith().Code
}

// ClosedWith waits for the connection's close, reading past any pending
// frames, and returns its code and reason.
func (w *Client) ClosedWith() websocket.CloseError {
	w.T.Helper()
	for {
		select {
		case _, ok := <-w.in:
			if !ok {
				var ce websocket.CloseError
				if !errors.As(<-w.err, &ce) {
					return websocket.CloseError{Code: -1}
				}
				return ce
			}
		case <-time.After(10 * time.Second):
			w.T.Fatalf("connection still open after 10s")
		}
	}
}

// Hello says hello with subs (and Token, if set) and fails the test unless
// the reply is ok.
func (w *Client) Hello(subs ...wire.Sub) wire.Reply {
	w.T.Helper()
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Client: "test/1", Subs: subs, Token: w.Token})
	r := w.Reply(1)
	if !r.OK {
		w.T.Fatalf("hello: %+v", r.Error)
	}
	return r
}

// HelloFromStart says hello subscribed to s from its first event, and
// returns w.
func (w *Client) HelloFromStart(s wire.Session) *Client {
	w.T.Helper()
	zero := int64(0)
	w.Hello(wire.Sub{Session: s.ID, After: &zero, Epoch: s.Epoch})
	return w
}
