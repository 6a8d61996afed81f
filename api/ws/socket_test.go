package ws

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// serverFrame is a server's (unmasked, unfragmented) frame of opcode op.
func serverFrame(op byte, p []byte) []byte {
	var f []byte
	switch {
	case len(p) < 126:
		f = []byte{0x80 | op, byte(len(p))}
	case len(p) <= 0xffff:
		f = []byte{0x80 | op, 126, byte(len(p) >> 8), byte(len(p))}
	default:
		f = binary.BigEndian.AppendUint64([]byte{0x80 | op, 127}, uint64(len(p)))
	}
	return append(f, p...)
}

func TestFrameLen(t *testing.T) {
	t.Parallel()
	big := binary.BigEndian.AppendUint64([]byte{0x82, 127}, 1<<20)
	for _, tc := range []struct {
		name string
		p    []byte
		n    int64
		ok   bool
	}{
		{"nothing", nil, 0, false},
		{"one byte", []byte{0x81}, 0, false},
		{"empty text", []byte{0x81, 0}, 2, true},
		{"7-bit length", []byte{0x81, 125}, 127, true},
		{"16-bit length", []byte{0x81, 126, 0x01, 0x00}, 4 + 256, true},
		{"16-bit length cut", []byte{0x81, 126, 0x01}, 0, false},
		{"64-bit length", big, 10 + 1<<20, true},
		{"64-bit length cut", big[:9], 0, false},
		{"masked (a client's)", []byte{0x81, 0x80 | 5, 1, 2, 3, 4}, 2 + 4 + 5, true},
		{"masked 16-bit", []byte{0x81, 0x80 | 126, 0, 200}, 4 + 4 + 200, true},
		{"absurd length", binary.BigEndian.AppendUint64([]byte{0x82, 127}, 1<<63), 0, false},
		{"payload after the header", append([]byte{0x89, 3}, "abc"...), 5, true},
	} {
		n, ok := frameLen(tc.p)
		if n != tc.n || ok != tc.ok {
			t.Errorf("%s: frameLen(%x) = %d, %v; want %d, %v", tc.name, tc.p, n, ok, tc.n, tc.ok)
		}
	}
}

// leanPair is a leanConn over the server's side of a loopback TCP
// connection, made as leanHijacker makes one, and the peer's side.
func leanPair(t *testing.T) (*leanConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if sc == nil {
		t.Fatal("accept failed")
	}
	raw, err := sc.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	lc := &leanConn{Conn: sc, raw: raw, s: New(nil, Options{}, nil)}
	t.Cleanup(func() { lc.Close(); peer.Close() })
	return lc, peer
}

// readN reads n bytes from the peer within 10 s.
func readN(t *testing.T, peer net.Conn, n int) []byte {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(peer, b); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return b
}

// nothingArrives checks that the peer has nothing to read within d.
func nothingArrives(t *testing.T, peer net.Conn, d time.Duration) {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	var ne net.Error
	if n, err := peer.Read(b[:]); n > 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("the peer read %d bytes (%v) that should still be gathered", n, err)
	}
}

// Write reads each frame's header where the frame starts, and takes the
// frame's bytes in as many writes as coder/websocket makes of them; a
// header split across writes, or a write past its frame's end, is an
// error rather than bytes sent out of their frame.
func TestLeanWriteFollowsFrames(t *testing.T) {
	t.Parallel()
	lc, peer := leanPair(t)
	ping := serverFrame(0x9, []byte("abc"))
	long := serverFrame(0x2, bytes.Repeat([]byte("x"), 300))

	// Whole, then a header and its payload in pieces.
	for _, parts := range [][][]byte{{ping}, {long[:4], long[4:100], long[100:]}} {
		for _, p := range parts {
			if n, err := lc.Write(p); err != nil || n != len(p) {
				t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
			}
		}
		if lc.frameLeft != 0 {
			t.Fatalf("%d bytes of a frame still expected after the whole frame", lc.frameLeft)
		}
	}
	want := append(append([]byte{}, ping...), long...)
	if got := readN(t, peer, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("the peer read %x, want %x", got, want)
	}

	// A header cut short where a frame starts.
	if _, err := lc.Write(long[:3]); err != errFrameHeader {
		t.Fatalf("a split 16-bit header: %v, want errFrameHeader", err)
	}
	if _, err := lc.Write(ping[:1]); err != errFrameHeader {
		t.Fatalf("a one-byte header: %v, want errFrameHeader", err)
	}
	// Two frames in one write.
	if _, err := lc.Write(append(append([]byte{}, ping...), ping...)); err == nil || !strings.Contains(err.Error(), "past its frame's end") {
		t.Fatalf("two frames in one write: %v", err)
	}
}

// While the writer is corked its text frame is gathered and leaves whole
// at uncork; a frame of others written before it goes at once, and one
// written after it sends the gathered message first, in the frame lock's
// order.
func TestLeanCorkGathersOnlyTheWritersFrame(t *testing.T) {
	t.Parallel()
	lc, peer := leanPair(t)
	text := serverFrame(0x1, []byte(`{"op":"event"}`))
	ping := serverFrame(0x9, []byte("p1"))
	pong := serverFrame(0xA, []byte("p2"))

	lc.cork()
	if _, err := lc.Write(ping); err != nil { // before the writer's frame: at once
		t.Fatal(err)
	}
	if got := readN(t, peer, len(ping)); !bytes.Equal(got, ping) {
		t.Fatalf("the ping: %x", got)
	}
	if _, err := lc.Write(text[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Write(text[2:]); err != nil {
		t.Fatal(err)
	}
	nothingArrives(t, peer, 50*time.Millisecond)
	if len(*lc.corked) != len(text) {
		t.Fatalf("%d bytes gathered, want the text frame's %d", len(*lc.corked), len(text))
	}
	if err := lc.uncork(); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, len(text)); !bytes.Equal(got, text) {
		t.Fatalf("the text frame: %x", got)
	}

	// A frame of others after the gathered message: the message first.
	lc.cork()
	lc.Write(text)
	if _, err := lc.Write(ping); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, text...), ping...)
	if got := readN(t, peer, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("read %x, want the message, then the ping: %x", got, want)
	}
	if err := lc.uncork(); err != nil {
		t.Fatal(err)
	}
	nothingArrives(t, peer, 50*time.Millisecond) // uncork found nothing left to send

	// But a pong goes ahead of a message not sent yet: the socket is
	// between frames.
	lc.cork()
	lc.Write(text)
	if _, err := lc.Write(pong); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, len(pong)); !bytes.Equal(got, pong) {
		t.Fatalf("read %x, want the pong: %x", got, pong)
	}
	if err := lc.uncork(); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, peer, len(text)); !bytes.Equal(got, text) {
		t.Fatalf("the text frame after the pong: %x", got)
	}
}

// A pong written while someone writes to the socket is kept, and its
// Write returns at once (coder/websocket gives it 5 s): it leaves as the
// writer lets go of the socket, or, if that writer is part way through a
// frame, once the frame is whole. Of two pongs kept, the later goes.
func TestLeanPongWaitsForNoOne(t *testing.T) {
	t.Parallel()
	lc, peer := leanPair(t)
	pong1 := serverFrame(0xA, []byte("p1"))
	pong2 := serverFrame(0xA, []byte("p2"))
	closing := serverFrame(0x8, []byte{0x03, 0xe8, 'b', 'y', 'e'})

	lc.wmu.Lock() // a writer waits for the peer
	for _, p := range [][]byte{pong1[:3], pong1[3:], pong2} {
		if _, err := lc.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	nothingArrives(t, peer, 50*time.Millisecond)
	lc.unlockW()
	if got := readN(t, peer, len(pong2)); !bytes.Equal(got, pong2) {
		t.Fatalf("read %x, want the later pong: %x", got, pong2)
	}
	nothingArrives(t, peer, 50*time.Millisecond)

	// A close frame's header is out, its payload not yet: a pong kept
	// meanwhile waits for the frame's end.
	if _, err := lc.Write(closing[:2]); err != nil {
		t.Fatal(err)
	}
	lc.wmu.Lock()
	lc.mu.Lock()
	lc.pong = pong1
	lc.mu.Unlock()
	lc.unlockW()
	if _, err := lc.Write(closing[2:]); err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte{}, closing...), pong1...)
	if got := readN(t, peer, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("read %x, want the close frame whole, then the pong: %x", got, want)
	}
}

// The lean socket relies on how coder/websocket writes, under it:
//
//   - it writes through the bufio.Writer that Hijack returned (16 bytes,
//     leanBufio), so that every Write holds at most one frame's bytes;
//   - it writes a frame's header whole, in one Write, at the frame's start;
//   - it flushes at each frame's end, so that every frame starts a Write;
//   - a message written with Write is one unfragmented frame.
//
// This test upgrades a real connection through leanHijacker and has the
// library write messages of every header size, control frames and a
// close; leanConn.Write refuses anything else with an error, and the
// gathered bytes at uncork must be exactly one whole text frame. An
// upgrade of coder/websocket that writes differently fails here, not in
// production.
func TestCoderWebsocketWritesAsTheLeanSocketReads(t *testing.T) {
	t.Parallel()
	s := New(nil, Options{}, nil)
	type accepted struct {
		c  *websocket.Conn
		lc *leanConn
	}
	got := make(chan accepted, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lh := &leanHijacker{ResponseWriter: w, s: s}
		c, err := websocket.Accept(lh, r, &websocket.AcceptOptions{Subprotocols: []string{wire.Subprotocol}, CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			t.Error(err)
			return
		}
		got <- accepted{c, lh.lc}
	}))
	defer hs.Close()
	peer := askUpgrade(t, hs.URL)
	br := bufio.NewReader(peer)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	a := <-got
	if a.lc == nil {
		t.Fatal("the upgrade did not make a lean socket")
	}
	defer a.c.CloseNow()
	a.c.CloseRead(context.Background()) // the library reads the pong and the close's echo

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sizes := []int{0, 1, 125, 126, 127, 4096, 65535, 65536, 1 << 20}
	sent := make(chan error, 1)
	go func() {
		for _, n := range sizes {
			a.lc.cork()
			err := a.c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte{'a' + byte(n%26)}, n))
			if err == nil {
				if g := *a.lc.corked; len(g) == 0 {
					err = errors.New("nothing gathered")
				} else if fl, ok := frameLen(g); !ok || fl != int64(len(g)) || g[0] != 0x81 {
					err = errors.New("the gathered bytes are not one whole text frame")
				}
			}
			if uerr := a.lc.uncork(); err == nil {
				err = uerr
			}
			if err != nil {
				sent <- err
				return
			}
		}
		if err := a.c.Ping(ctx); err != nil {
			sent <- err
			return
		}
		sent <- a.c.Close(websocket.StatusNormalClosure, "done")
	}()
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	failed := func(what string, err error) {
		t.Helper()
		select {
		case serr := <-sent:
			t.Fatalf("the library's writes over the lean socket: %v (then %s: %v)", serr, what, err)
		default:
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, n := range sizes {
		op, p, err := readServerFrame(br)
		if err != nil {
			failed(fmt.Sprintf("reading the %d-byte message", n), err)
		}
		if op != 0x1 || len(p) != n || (n > 0 && p[n-1] != 'a'+byte(n%26)) {
			t.Fatalf("frame %x of %d bytes, want text of %d", op, len(p), n)
		}
	}
	// A ping and the close, from the library's own code paths, each whole.
	op, p, err := readServerFrame(br)
	if err != nil || op != 0x9 {
		failed(fmt.Sprintf("the ping (frame %x)", op), err)
	}
	peer.Write(maskedFrame(0xA, p))
	op, p, err = readServerFrame(br)
	if err != nil || op != 0x8 || binary.BigEndian.Uint16(p) != uint16(websocket.StatusNormalClosure) {
		t.Fatalf("the close: %x %q %v", op, p, err)
	}
	peer.Write(maskedFrame(0x8, p)) // the close's echo
	if err := <-sent; err != nil {
		t.Fatalf("the library's writes over the lean socket: %v", err)
	}
}

// The lean hijacker writes the upgrade's 101 itself, byte for byte as
// net/http writes it for the same request, and a header it cannot write
// as it is leaves the 101 to net/http.
func TestLeanUpgradeAnswersAsNetHTTP(t *testing.T) {
	t.Parallel()
	s := New(nil, Options{}, nil)
	answer := func(t *testing.T, lean bool, extra string) string {
		t.Helper()
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if extra != "" {
				w.Header().Set("X-Extra", extra)
			}
			var rw http.ResponseWriter = w
			if lean {
				rw = &leanHijacker{ResponseWriter: w, s: s}
			}
			c, err := websocket.Accept(rw, r, &websocket.AcceptOptions{Subprotocols: []string{wire.Subprotocol}, CompressionMode: websocket.CompressionDisabled})
			if err != nil {
				t.Error(err)
				return
			}
			c.CloseNow()
		}))
		defer hs.Close()
		peer := askUpgrade(t, hs.URL)
		peer.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got []byte
		buf := make([]byte, 1)
		for !bytes.HasSuffix(got, []byte("\r\n\r\n")) {
			if _, err := peer.Read(buf); err != nil {
				t.Fatalf("read the answer: %v (so far %q)", err, got)
			}
			got = append(got, buf[0])
		}
		// The Date line, at the end as net/http writes it, may fall in
		// another second: only its place and form are compared.
		i := bytes.Index(got, []byte("Date: "))
		if i < 0 || !bytes.HasSuffix(got, []byte(" GMT\r\n\r\n")) || len(got)-i != len("Date: Thu, 03 Dec 2026 08:50:43 GMT\r\n\r\n") {
			t.Fatalf("no Date line at the end: %q", got)
		}
		return string(got[:i])
	}
	want := answer(t, false, "")
	if !strings.HasPrefix(want, "HTTP/1.1 101 ") || !strings.Contains(want, "Sec-Websocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") {
		t.Fatalf("net/http's answer: %q", want)
	}
	if got := answer(t, true, ""); got != want {
		t.Fatalf("the lean hijacker answered\n%q\nnet/http\n%q", got, want)
	}
	if got, want := answer(t, true, "a\nb"), answer(t, false, "a\nb"); got != want {
		t.Fatalf("with a header net/http mends, the lean hijacker answered\n%q\nnet/http\n%q", got, want)
	}
}

// askUpgrade dials the server at url and sends a websocket upgrade
// request for albedo's subprotocol, with RFC 6455's sample key and the
// extra header lines; the connection closes with the test.
func askUpgrade(t *testing.T, url string, header ...string) net.Conn {
	t.Helper()
	host := strings.TrimPrefix(url, "http://")
	peer, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	req := "GET / HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
		"Sec-WebSocket-Protocol: " + wire.Subprotocol + "\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	if _, err := peer.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	return peer
}

// hijackRW is a ResponseWriter whose Hijack hands over conn.
type hijackRW struct {
	http.ResponseWriter
	conn net.Conn
}

func (h hijackRW) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, bufio.NewReadWriter(bufio.NewReader(h.conn), bufio.NewWriter(h.conn)), nil
}

// A peer that left before its 101 was written fails the websocket's
// first read, not the hijack: the library would answer an error on the
// hijacked response (net/http logs "response.WriteHeader on hijacked
// connection").
func TestLeanUpgradeToAGonePeerHijacks(t *testing.T) {
	t.Parallel()
	conn, peer := net.Pipe()
	peer.Close()
	h := &leanHijacker{ResponseWriter: hijackRW{httptest.NewRecorder(), conn}}
	h.WriteHeader(http.StatusSwitchingProtocols)
	got, _, err := h.Hijack()
	if err != nil {
		t.Fatalf("hijack of a connection whose peer has gone: %v", err)
	}
	if _, err := got.Read(make([]byte, 1)); err == nil {
		t.Fatal("a read from a gone peer succeeded")
	}
}

// A hijacker told to hold the 101 (the request carried its hello) writes
// nothing at the hijack: the 101 leaves with the socket's first write, in
// the same syscall — the peer's first read holds both — from a pooled
// buffer, and the writes after it go alone.
func TestAHeldUpgradeLeavesWithTheFirstWrite(t *testing.T) {
	t.Parallel()
	s := New(nil, Options{}, nil)
	got := make(chan *leanConn, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lh := &leanHijacker{ResponseWriter: w, s: s, hold: true}
		if _, err := websocket.Accept(lh, r, &websocket.AcceptOptions{Subprotocols: []string{wire.Subprotocol}, CompressionMode: websocket.CompressionDisabled}); err != nil {
			t.Error(err)
		}
		got <- lh.lc
	}))
	defer hs.Close()
	peer := askUpgrade(t, hs.URL)
	lc := <-got
	if lc == nil {
		t.Fatal("the upgrade did not make a lean socket")
	}
	defer lc.Close()
	nothingArrives(t, peer, 50*time.Millisecond) // the 101 is held
	lc.wmu.Lock()
	err := lc.writeAll([]byte("first"))
	lc.wmu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	n, err := peer.Read(buf)
	if err != nil || !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 101 ")) || !bytes.HasSuffix(buf[:n], []byte("\r\n\r\nfirst")) {
		t.Fatalf("the first read: %q, %v; want the 101 and the first write's bytes", buf[:n], err)
	}
	lc.wmu.Lock()
	err = lc.writeAll([]byte("second"))
	lc.wmu.Unlock()
	if n, rerr := io.ReadAtLeast(peer, buf, len("second")); err != nil || rerr != nil || string(buf[:n]) != "second" {
		t.Fatalf("the second write: %q, %v %v", buf[:n], err, rerr)
	}
}

// pingKept says whether the heartbeat's ping waits to be written.
func (c *leanConn) pingKept() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ping != nil
}
