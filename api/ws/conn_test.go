package ws

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// TestByeDuringUpgrade: a connection upgraded while Bye begins is not in
// Bye's list; it must close itself rather than keep Bye waiting for ever.
func TestByeDuringUpgrade(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	accepted, release := make(chan struct{}), make(chan struct{})
	e.srv.afterAccept = func() { close(accepted); <-release }

	dialed := make(chan error, 1)
	var conn *websocket.Conn
	go func() {
		var err error
		conn, _, err = websocket.Dial(context.Background(), "ws"+e.url[4:]+"/v1/ws", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + testToken}}, Subprotocols: []string{wire.Subprotocol}})
		dialed <- err
	}()
	<-accepted // upgraded, not yet registered
	byeDone := make(chan struct{})
	go func() {
		e.srv.Bye(context.Background(), wire.ByeShutdown, 0)
		close(byeDone)
	}()
	// Bye has closed the doors once a new upgrade is refused.
	for {
		resp, err := http.Get(e.url + "/v1/ws")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	close(release)
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() { // reading answers the close, so that its handshake ends at once
		_, _, err := conn.Read(context.Background())
		read <- err
	}()
	select {
	case <-byeDone:
	case <-time.After(30 * time.Second):
		t.Fatal("Bye is still waiting for a connection it never saw")
	}
	if err := <-read; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("the late connection ended with %v, want 1001", err)
	}
}

// hello's client is a device label of at most wire.MaxClientBytes: presence
// repeats names to every watcher, so a longer one is refused, and a
// connection is named by its token whatever its client says.
func TestHelloClientIsABoundedLabel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	w := e.dial(true)
	w.Send(wire.Command{ID: 1, Op: wire.OpHello, Client: strings.Repeat("x", wire.MaxClientBytes+1)})
	if r := w.Reply(1); r.OK || r.Error == nil || r.Error.Code != wire.CodeBadRequest {
		t.Fatalf("a %d-byte client: %+v", wire.MaxClientBytes+1, r)
	}
	if code := w.Closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %d", code)
	}
	ok := e.dial(true)
	ok.Send(wire.Command{ID: 1, Op: wire.OpHello, Client: strings.Repeat("y", wire.MaxClientBytes), Subs: []wire.Sub{{Session: "s"}}})
	if r := ok.Reply(1); !r.OK {
		t.Fatalf("a %d-byte client: %+v", wire.MaxClientBytes, r.Error)
	}
	p := ok.Next(func(f wire.Frame) bool { return f.Op == wire.PushPresence })
	if len(p.Presence.People) != 1 || p.Presence.People[0].Name != "user" || p.Presence.People[0].Role != wire.TokenOwner {
		t.Fatalf("presence names the client, not the token: %+v", p.Presence.People)
	}
}

// A peer that leaves after its upgrade, before hello, has its socket
// closed: the daemon kept it open, with no goroutine, for ever.
func TestPeerGoneBeforeHelloIsClosed(t *testing.T) {
	e := newEnv(t, Options{})
	c, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+
		"Sec-WebSocket-Protocol: "+wire.Subprotocol+"\r\nAuthorization: Bearer "+testToken+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	c.(*net.TCPConn).CloseWrite() // gone, as far as the daemon can tell
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the daemon did not close the socket of a peer gone before hello: %v", err)
	}
}
