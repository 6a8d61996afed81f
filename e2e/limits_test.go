package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

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
