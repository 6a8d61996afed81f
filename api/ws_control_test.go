package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"albedo/api/wire"
)

// A control frame the server cannot write to a peer that reads nothing
// holds no pool worker. The peer sends pings and never reads, so their
// pongs fill its socket. Before frames of others were queued for the
// writer, the pong's write waited for the peer under coder/websocket's
// frame lock; the peer's writer, woken by an event, waited for that lock
// on the only worker until the pong's timeout (5 s), and every other
// connection's events with it. Now the pongs wait in the queue, the peer
// that piles them beyond its limit is closed, and the other reader's event
// comes at once.
func TestWSPoolControlFrameDoesNotHoldAWorker(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	e.srv.writers.max = 1
	s := e.create("s")
	e.create("t")
	peer := e.rawPeer(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	var pc *wsConn
	e.srv.mu.Lock()
	for c := range e.srv.conns {
		pc = c // the only one
	}
	e.srv.mu.Unlock()
	fast := e.dial(true)
	fast.hello(wire.Sub{Session: "t"})
	before := e.hub.Stats().Conns - 1 // without the peer

	// Small socket buffers on the pongs' way: a few kilobytes fill it.
	peer.(*net.TCPConn).SetReadBuffer(4096)
	pc.lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)
	// Ping until the server closes the connection (the pongs went beyond
	// the queue), or reads nothing for half a second (its reader waits on
	// a pong).
	pings := make([]byte, 0, 8*131)
	for range 8 {
		pings = append(pings, maskedFrame(0x9, make([]byte, 125))...)
	}
	for sent := 0; ; sent += len(pings) {
		peer.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := peer.Write(pings); err != nil {
			break
		}
		if sent > 256<<20 {
			t.Fatal("the server read 256 MiB of pings from a peer that reads nothing")
		}
	}

	// Wake the peer's writer, and wait until it has taken its event (on
	// the worker), or the peer is gone.
	d0 := e.hub.Stats().Deliveries
	if code, _ := e.do("PUT", inputPath("s", 1), nil, `{"text":"to the silent peer"}`, nil); code != 202 {
		t.Fatalf("input to s: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st := e.hub.Stats(); st.Deliveries == d0 && st.Conns > before; st = e.hub.Stats() {
		if time.Now().After(deadline) {
			t.Fatal("the peer's writer never took its event")
		}
		time.Sleep(time.Millisecond)
	}

	start := time.Now()
	if code, _ := e.do("PUT", inputPath("t", 1), nil, `{"text":"to the reader"}`, nil); code != 202 {
		t.Fatalf("input to t: %d", code)
	}
	f := fast.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the reader's event took %v behind the silent peer", d)
	}
	if f.Event.Text != "to the reader" {
		t.Fatalf("event %+v", f.Event)
	}
	// The peer that piled pongs beyond the limit is closed.
	for e.hub.Stats().Conns > before {
		if time.Now().After(deadline) {
			t.Fatal("the peer whose pongs exceed the queue's limit is still connected")
		}
		time.Sleep(time.Millisecond)
	}
}

// A ping written while the writer waits on a full socket is queued, and
// reaches the peer between whole messages once it reads: every event in
// order, none lost, and the ping answered.
func TestWSControlFrameQueuesBehindAFullSocket(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	s := e.create("s")
	slow := e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	var wc *wsConn
	e.srv.mu.Lock()
	for c := range e.srv.conns {
		wc = c // the only one
	}
	e.srv.mu.Unlock()
	if wc == nil || wc.lean == nil {
		t.Fatal("no lean connection for the slow reader")
	}
	wc.lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)
	fast := e.dial(true)
	fast.hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	// 256 KiB of messages: far beyond what the slow reader's way holds,
	// so its writer waits for the socket.
	const n = 16
	text := strings.Repeat("p", 16<<10)
	for i := range n {
		if code, _ := e.do("PUT", inputPath16(i), nil, `{"text":"`+text+`"}`, nil); code != 202 {
			t.Fatalf("input %d: %d", i, code)
		}
	}
	for want := int64(1); want <= 4*n; want++ { // each input: message and a 3-event turn
		if f := fast.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent }); f.Event.Offset != want {
			t.Fatalf("fast reader got %d, want %d", f.Event.Offset, want)
		}
	}

	pinged := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		pinged <- wc.ws.Ping(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !wc.lean.hasQueued() {
		if time.Now().After(deadline) {
			t.Fatal("the ping was never queued behind the full socket")
		}
		time.Sleep(time.Millisecond)
	}
	// More events behind the ping.
	for i := n; i < n+4; i++ {
		if code, _ := e.do("PUT", inputPath16(i), nil, `{"text":"after"}`, nil); code != 202 {
			t.Fatalf("input %d: %d", i, code)
		}
	}

	// Read: coder/websocket answers the ping as it reads.
	want := int64(1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for want <= 4*(n+4) {
		_, msg, err := slow.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d events: %v", want-1, err)
		}
		for _, fr := range splitFrames(msg) {
			f, err := wire.DecodeFrame(fr)
			if err != nil {
				t.Fatalf("frame %q: %v", fr, err)
			}
			if f.Op != wire.PushEvent {
				continue
			}
			if f.Event.Offset != want {
				t.Fatalf("event %d, want %d", f.Event.Offset, want)
			}
			want++
		}
	}
	if err := <-pinged; err != nil {
		t.Fatalf("the queued ping: %v", err)
	}
}

// inputPath16 is the path of the i-th of up to 2^48 inputs to session s.
func inputPath16(i int) string {
	return fmt.Sprintf("/v1/sessions/s/inputs/0190a8a0-0000-7000-8000-%012d", i)
}

// rawPeer upgrades a plain TCP connection, says hello with subs, reads the
// hello's reply, and returns the connection: it reads nothing more unless
// the caller does, and writes whatever frames the caller makes.
func (e *env) rawPeer(subs ...wire.Sub) net.Conn {
	e.t.Helper()
	host := strings.TrimPrefix(e.url, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /v1/ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
		"Sec-WebSocket-Protocol: " + wire.Subprotocol + "\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"
	hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Subs: subs})
	if _, err := c.Write(append([]byte(req), maskedText(hello)...)); err != nil {
		e.t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		e.t.Fatalf("upgrade: %v %v", resp, err)
	}
	msg := readServerText(e.t, br)
	if f, err := wire.DecodeFrame(splitFrames(msg)[0]); err != nil || !f.IsReply() || !f.Reply.OK {
		e.t.Fatalf("hello's reply: %q %v", msg, err)
	}
	c.SetDeadline(time.Time{})
	return c
}
