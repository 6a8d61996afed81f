package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/client"
	"albedo/wire"
)

// wsClient is a bare websocket client of the daemon in snap.
type wsClient struct {
	t   *testing.T
	c   *websocket.Conn
	in  chan wire.Frame
	err chan error
}

func dialWS(t *testing.T, snap client.Snapshot) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := strings.Replace(snap.BaseURL, "http://", "ws://", 1) + "/v1/ws"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + snap.Token}},
		Subprotocols: []string{wire.Subprotocol},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	w := &wsClient{t: t, c: c, in: make(chan wire.Frame, 1<<16), err: make(chan error, 1)}
	go func() {
		for {
			_, msg, err := c.Read(context.Background())
			if err != nil {
				w.err <- err
				close(w.in)
				return
			}
			for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
				var f wire.Frame
				if json.Unmarshal(line, &f) != nil {
					t.Errorf("bad frame %q", line)
				}
				w.in <- f
			}
		}
	}()
	t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *wsClient) send(cmd wire.Command) {
	w.t.Helper()
	b, _ := json.Marshal(cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wsClient) next(keep func(wire.Frame) bool) wire.Frame {
	w.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				w.t.Fatalf("connection ended: %v", <-w.err)
			}
			if keep(f) {
				return f
			}
		case <-deadline:
			w.t.Fatalf("no matching frame within 30s")
		}
	}
}

// end collects frames until the connection closes and returns them with the
// close status.
func (w *wsClient) end() ([]wire.Frame, websocket.StatusCode) {
	w.t.Helper()
	var fs []wire.Frame
	deadline := time.After(30 * time.Second)
	for {
		select {
		case f, ok := <-w.in:
			if !ok {
				return fs, websocket.CloseStatus(<-w.err)
			}
			fs = append(fs, f)
		case <-deadline:
			w.t.Fatalf("connection did not end within 30s")
		}
	}
}
