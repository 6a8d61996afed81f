package ws

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/wire"
)

// An idle connection keeps no writer goroutine: it ends once the hello's
// reply is written, and one starts again when there is something to
// write: its stack is not part of an idle connection's memory.
func TestIdleWriterEndsAndComesBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	idle := make(chan struct{}, 16)
	e.srv.writerIdle = func() { idle <- struct{}{} }
	e.create("s")
	v := e.dial(true)
	v.Hello(wire.Sub{Session: "s"})
	wc := e.onlyConn()
	waitIdle := func() {
		t.Helper()
		for {
			select {
			case <-idle:
			case <-time.After(10 * time.Second):
				t.Fatal("the viewer's writer did not end")
			}
			w := wc.writer()
			w.mu.Lock()
			running := w.running
			w.mu.Unlock()
			if !running {
				return
			}
		}
	}
	waitIdle()

	b := e.dialToken(e.botToken("poster"))
	b.Hello()
	b.Send(wire.Command{ID: 2, Op: wire.OpPost, Session: "s", InputID: uuid.Must(uuid.NewV7()).String(), Text: "wake up"})
	if r := b.Reply(2); !r.OK {
		t.Fatalf("post: %+v", r.Error)
	}
	f := v.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
	if f.Event.Text != "wake up" {
		t.Fatalf("event %+v", f.Event)
	}
	waitIdle()
}

// A client may send its hello in the same packet as its upgrade request,
// before the upgrade's answer: what net/http read past the request reaches
// the websocket, though the connection lets go of net/http's buffers.
func TestHelloBeforeTheUpgradeAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	host := strings.TrimPrefix(e.url, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /v1/ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
		"Sec-WebSocket-Protocol: " + wire.Subprotocol + "\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"
	hello, _ := json.Marshal(wire.Command{ID: 1, Op: wire.OpHello, Client: "test/1"})
	if _, err := c.Write(append([]byte(req), maskedText(hello)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	msg := readServerText(t, br)
	f, err := wire.DecodeFrame(msg)
	if err != nil || !f.IsReply() || f.Reply.ID != 1 || !f.Reply.OK {
		t.Fatalf("hello's reply: %q %v", msg, err)
	}
}

// maskedText is a client's text frame (clients mask theirs).
func maskedText(p []byte) []byte { return maskedFrame(0x1, p) }

// maskedFrame is a client's frame of opcode op with payload p, in one
// fragment.
func maskedFrame(op byte, p []byte) []byte {
	key := [4]byte{1, 2, 3, 4}
	var f []byte
	if len(p) < 126 {
		f = []byte{0x80 | op, 0x80 | byte(len(p))}
	} else {
		f = []byte{0x80 | op, 0x80 | 126, byte(len(p) >> 8), byte(len(p))}
	}
	f = append(f, key[:]...)
	for i, b := range p {
		f = append(f, b^key[i%4])
	}
	return f
}

// readServerText reads one unfragmented text frame the server sent.
func readServerText(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[0] != 0x81 {
		t.Fatalf("frame header %x: not one text frame", h[0])
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(r, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		io.ReadFull(r, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	return p
}
