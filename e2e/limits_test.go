//go:build !e2e_only || e2e_core

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A flood of connections that prove no token — idle sockets, /healthz
// keep-alives, websockets that never say hello — cannot take the file
// descriptors the owner needs: with 128 of them, 300 such connections
// held open leave the owner's calls and stream served.
func TestTokenlessFloodLeavesTheOwnerServed(t *testing.T) {
	parallel(t)
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit (util-linux)")
	}
	home := t.TempDir()
	startDaemonUnder(t, home, []string{"prlimit", "--nofile=128:128", "--"})
	c := newClient(t, home)
	ctx := ctxT(t)
	snap, err := c.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", snap.Port)
	hogs := make([]net.Conn, 0, 300)
	t.Cleanup(func() {
		for _, h := range hogs {
			h.Close()
		}
	})
	for i := range 300 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("hog %d: %v", i, err)
		}
		hogs = append(hogs, conn)
		switch i % 3 {
		case 1: // a request without a token, then keep-alive
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		case 2: // a websocket that will never say hello
			fmt.Fprintf(conn, "GET /v1/ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
				"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: albedo.v1\r\n\r\n", addr)
		} // 0: connect and say nothing
	}
	// The owner is served: calls, each on a connection of its own, and a
	// stream that attaches.
	c, err = client.New(client.Options{Home: home, HTTP: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for i := range 5 {
		if _, err := c.Sessions(octx); err != nil {
			t.Fatalf("owner call %d while 300 tokenless connections are held: %v", i, err)
		}
	}
	s, err := c.CreateSession(octx, "owner", wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stream(client.StreamOptions{})
	defer st.Close()
	sub := st.Subscribe(s.ID, client.Cursor{})
	if _, err := sub.Next(octx); err != nil {
		t.Fatalf("owner stream while 300 tokenless connections are held: %v", err)
	}
}

// A stream whose token the daemon refuses — revoked while connected, or
// wrong from the start — ends with unauthorized instead of reconnecting
// for ever.
func TestRefusedTokenEndsTheStream(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	tok, err := fx.c.AddBot(fx.ctx, "b1", nil)
	if err != nil {
		t.Fatal(err)
	}
	ended := func(name, token string, revoke func()) {
		t.Helper()
		bc, err := client.New(client.Options{Home: fx.home, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		connected := make(chan struct{}, 1)
		st := bc.Stream(client.StreamOptions{OnTurn: func(wire.TurnPush) {}, OnState: func(s client.State) {
			if s.Phase == client.Connected {
				select {
				case connected <- struct{}{}:
				default:
				}
			}
		}})
		defer st.Close()
		if revoke != nil {
			select {
			case <-connected:
			case <-fx.ctx.Done():
				t.Fatalf("%s: never connected", name)
			}
			revoke()
		}
		select {
		case <-st.Done():
		case <-time.After(15 * time.Second):
			t.Fatalf("%s: the stream still runs 15 s after its token was refused (%+v)", name, st.State())
		}
		if client.Code(st.Err()) != wire.CodeUnauthorized {
			t.Fatalf("%s: the stream ended with %v, want unauthorized", name, st.Err())
		}
	}
	ended("revoked", tok.Token, func() {
		if err := fx.c.RemoveBot(fx.ctx, "b1"); err != nil {
			t.Fatal(err)
		}
	})
	ended("wrong", "albot_0123456789", nil)
}

// Connections with a token, more than the daemon has file descriptors:
// it holds at most its bound open (here 192 of 256 files), keeping
// descriptors of its own, so that a turn still reaches its provider; the
// rest wait, and come in as others close.
func TestOpenConnectionsLeaveTheDaemonItsFiles(t *testing.T) {
	parallel(t)
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("needs prlimit (util-linux)")
	}
	home := t.TempDir()
	fake := withFake(t, home)
	// The hogs read nothing, so answer no ping: a heartbeat would cut
	// them, and let waiting ones in, on a slow run.
	d := startDaemonUnder(t, home, []string{"prlimit", "--nofile=256:256", "--"}, "--metrics-addr", "127.0.0.1:0", "--heartbeat", "1h")
	metric := metricOf(t, d)
	c := newClient(t, home)
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, "s", wire.SessionCreate{Provider: "fake"}); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	owner := dialWS(t, snap)
	zero := int64(0)
	owner.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: "s", After: &zero}}})
	owner.next(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == 1 })

	const hogs = 300
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan *websocket.Conn, hogs)
	url := strings.Replace(snap.BaseURL, "http://", "ws://", 1) + "/v1/ws"
	hello := wire.Encode(wire.Command{ID: 1, Op: wire.OpHello})
	for range hogs {
		go func() {
			ws, _, err := websocket.Dial(dctx, url, &websocket.DialOptions{
				HTTPHeader: http.Header{"Authorization": {"Bearer " + snap.Token}}, Subprotocols: []string{wire.Subprotocol}})
			if err != nil {
				return // the test is over
			}
			if ws.Write(dctx, websocket.MessageText, hello) != nil {
				ws.CloseNow()
				return
			}
			in <- ws
		}()
	}
	var held []*websocket.Conn
	defer func() {
		for _, ws := range held {
			ws.CloseNow()
		}
	}()
	take := func(n int) {
		t.Helper()
		for range n {
			select {
			case ws := <-in:
				held = append(held, ws)
			case <-time.After(20 * time.Second):
				t.Fatalf("%d websockets in, %d more expected; open %v of %v", len(held), n, metric("albedo_open_connections"), metric("albedo_open_connections_max"))
			}
		}
	}
	// The daemon reaches its bound (192: the owner's websocket, the
	// client's keep-alive, the websockets that came in) and goes no
	// further.
	bound := metric("albedo_open_connections_max")
	if bound != 192 {
		t.Fatalf("bound %v under 256 files, want 192", bound)
	}
	for metric("albedo_open_connections") < bound {
		take(1)
	}
	for quiet := false; !quiet; { // those accepted that were still upgrading
		select {
		case ws := <-in:
			held = append(held, ws)
		case <-time.After(time.Second):
			quiet = true
		}
	}
	if open := metric("albedo_open_connections"); open != bound || len(held) >= int(bound) {
		t.Fatalf("%d websockets in, %v connections open: want the bound of %v, and no more", len(held), open, bound)
	}

	// A turn still reaches its provider.
	owner.send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: uuid.Must(uuid.NewV7()).String(), Text: "hi"})
	for {
		f := owner.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn })
		if f.Event.State == wire.TurnStarted {
			continue
		}
		if f.Event.State != wire.TurnCompleted {
			t.Fatalf("turn at the bound: %+v", f.Event)
		}
		break
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d provider requests, want 1", n)
	}

	// Ten leave, ten of those waiting come in.
	for _, ws := range held[:10] {
		ws.Close(websocket.StatusNormalClosure, "")
	}
	held = held[10:]
	take(10)
	if strings.Contains(d.logText(), "too many open files") {
		t.Fatalf("the daemon ran out of files:\n%s", d.logText())
	}
}

// metricOf returns a reader of the daemon's gauges, from its
// --metrics-addr (which its log names).
func metricOf(t *testing.T, d *daemon) func(name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`msg="metrics listening" .*addr=(\S+)`).FindStringSubmatch(d.logText())
	if m == nil {
		t.Fatalf("no metrics address in the log:\n%s", d.logText())
	}
	return func(name string) float64 {
		t.Helper()
		resp, err := http.Get("http://" + m[1] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		v := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b)
		if v == nil {
			t.Fatalf("no %s in /metrics", name)
		}
		f, _ := strconv.ParseFloat(string(v[1]), 64)
		return f
	}
}
