package wstest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// DialRaw connects to base's /v1/ws with token, says hello with subs,
// reads the hello reply and returns the connection without a reader: the
// caller decides when (if ever) to read. A receive buffer of rcvbuf bytes
// (if not 0) is set before the connection is made, so that the server's
// writes fill its way after a few kilobytes.
func DialRaw(t testing.TB, base, token string, rcvbuf int, subs ...wire.Sub) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{wire.Subprotocol}}
	if rcvbuf > 0 {
		d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			}); err != nil {
				return err
			}
			return serr
		}}
		tr := &http.Transport{DialContext: d.DialContext}
		t.Cleanup(tr.CloseIdleConnections)
		opts.HTTPClient = &http.Client{Transport: tr}
	}
	c, _, err := websocket.Dial(ctx, base+"/v1/ws", opts)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(-1)
	b, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Subs: subs})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// FloodPastAStalledReader puts n inputs of size bytes into a session
// (put(i, text) puts the i-th; each is echoed: more than a stalled
// reader's socket holds, for the caller to choose), and checks that fast,
// a reader of that session from its start, gets every event, in order,
// while another reader of it reads nothing.
func FloodPastAStalledReader(t testing.TB, fast *Client, n, size int, put func(i int, text string)) {
	t.Helper()
	text := strings.Repeat("p", size)
	for i := range n {
		put(i, text)
	}
	for want := int64(1); want <= int64(4*n); want++ { // each input: message and a 3-event turn
		if f := fast.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent }); f.Event.Offset != want {
			t.Fatalf("fast reader got %d, want %d", f.Event.Offset, want)
		}
	}
}
