package ws

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"albedo/wire"
)

// peerLoop reads what the server sends a raw peer: it answers each ping
// with a pong, as a client's websocket library does, and hands on the
// text messages. Its writes and the test's go through send, one at a time.
type peerLoop struct {
	c      net.Conn
	mu     sync.Mutex
	text   chan []byte
	frames [][]byte // read from text, not yet looked at (reply)
}

func newPeerLoop(t *testing.T, c net.Conn) *peerLoop {
	p := &peerLoop{c: c, text: make(chan []byte, 16)}
	go func() {
		br := bufio.NewReader(c)
		for {
			op, payload, err := readServerFrame(br)
			if err != nil {
				return
			}
			switch op {
			case 0x9:
				p.send(t, maskedFrame(0xa, payload))
			case 0x1:
				p.text <- payload
			}
		}
	}()
	return p
}

func (p *peerLoop) send(t *testing.T, b ...[]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []byte
	for _, f := range b {
		all = append(all, f...)
	}
	if _, err := p.c.Write(all); err != nil {
		t.Error(err)
	}
}

// reply waits for the reply to command id. A message may hold several
// replies: those after it wait in p.frames for the next call.
func (p *peerLoop) reply(t *testing.T, id int64) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		for len(p.frames) > 0 {
			fr := p.frames[0]
			p.frames = p.frames[1:]
			if f, err := wire.DecodeFrame(fr); err == nil && f.IsReply() && f.Reply.ID == id {
				if !f.Reply.OK {
					t.Fatalf("command %d: %s", id, fr)
				}
				return
			}
		}
		select {
		case msg := <-p.text:
			p.frames = splitFrames(msg)
		case <-timeout:
			t.Fatalf("no reply to command %d", id)
		}
	}
}

func pingCmd(id int64) []byte { return maskedText(fmt.Appendf(nil, `{"id":%d,"op":"ping"}`, id)) }

// waitPongs waits until the connection's socket has counted n pongs.
func waitPongs(t *testing.T, lc *leanConn, n uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for lc.pongs.Load() < n {
		if ctx.Err() != nil {
			t.Fatalf("%d pongs counted, want %d", lc.pongs.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// readerStack is the stack of the connection's reader goroutine.
func readerStack() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "albedo/api/ws.(*conn).read(") {
			return g
		}
	}
	return ""
}

// An idle connection's reader waits in its lean socket (await), a few
// frames deep, not under coder/websocket's reader: after its hello, after
// a command, and after heartbeats, whose pongs the socket reads itself.
// The runtime keeps a goroutine's stack at what its deepest wait needs,
// and an idle connection waits all its life.
func TestWSAnIdleReaderWaitsInItsSocket(t *testing.T) {
	e := newEnv(t, Options{Heartbeat: 50 * time.Millisecond, WriteTimeout: time.Minute})
	p := newPeerLoop(t, e.rawPeer())
	wc := e.onlyConn()
	p.send(t, pingCmd(2))
	p.reply(t, 2)
	waitPongs(t, wc.lean, 3)

	deadline := time.Now().Add(10 * time.Second)
	for {
		g := readerStack()
		if strings.Contains(g, "(*leanConn).await(") && !strings.Contains(g, "coder/websocket") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle reader waits elsewhere:\n%s", g)
		}
		time.Sleep(time.Millisecond)
	}
	if heartbeat, _ := e.srv.Cuts(); heartbeat != 0 {
		t.Fatalf("%d connections cut by the heartbeat, want none", heartbeat)
	}
	p.send(t, pingCmd(3))
	p.reply(t, 3)
}

// Pongs among a client's messages, in one write or split across two, are
// read and counted, and every message around them is read and answered
// in order: the socket reads a whole pong itself only at a frame's
// boundary, and leaves a pong not whole yet to the library's reader.
func TestWSPongsAmongMessagesAreReadWhereverTheyFall(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	p := newPeerLoop(t, e.rawPeer())
	lc := e.onlyConn().lean

	p.send(t, pingCmd(2), maskedFrame(0xa, []byte("a")), pingCmd(3), maskedFrame(0xa, nil))
	p.reply(t, 2)
	p.reply(t, 3)
	waitPongs(t, lc, 2)

	pong := maskedFrame(0xa, []byte("split"))
	p.send(t, pong[:3])
	p.send(t, pong[3:], pingCmd(4))
	p.reply(t, 4)
	waitPongs(t, lc, 3)
	if n := lc.pongs.Load(); n != 3 {
		t.Fatalf("%d pongs counted, want 3", n)
	}
}

// A heartbeat's ping that the socket does not take within
// pingWriteTimeout closes the connection, as coder/websocket's own ping
// did: a peer that has stopped reading is cut even when no write of the
// daemon's waits for it.
func TestWSAPingTheSocketDoesNotTakeCutsThePeer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Heartbeat: 100 * time.Millisecond, WriteTimeout: time.Minute})
	e.rawPeer()
	wc := e.onlyConn()
	full := fullSocket(t, wc.lean, 0x9)
	select {
	case <-full.held:
	case <-time.After(10 * time.Second):
		t.Fatal("no ping came to the socket")
	}
	held := time.Now()
	select {
	case <-wc.ctx.Done():
	case <-time.After(pingWriteTimeout + 10*time.Second):
		t.Fatal("the connection outlived its ping's write")
	}
	if d := time.Since(held); d < pingWriteTimeout-time.Second {
		t.Fatalf("cut %v after the ping began, before its write's time was up", d)
	}
	full.release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		heartbeat, slow := e.srv.Cuts()
		if heartbeat == 1 && slow == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cuts: heartbeat %d, slow %d; want 1 and 0", heartbeat, slow)
		}
		time.Sleep(time.Millisecond)
	}
}

// Nothing follows the close frame: a heartbeat's ping that comes during
// the close handshake (here the daemon's 1007 for a text message that is
// not UTF-8, whose handshake waits for the peer's close) is not sent, as
// coder/websocket sends nothing after its close frame.
func TestWSNoPingFollowsTheCloseFrame(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{Heartbeat: 30 * time.Millisecond, WriteTimeout: time.Minute})
	c := e.rawPeer()
	if _, err := c.Write(maskedText([]byte{0xff, 0xfe})); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	var ops []byte
	for {
		op, _, err := readServerFrame(br)
		if err != nil {
			break
		}
		ops = append(ops, op)
	}
	i := strings.IndexByte(string(ops), 0x8)
	if i < 0 || i != len(ops)-1 {
		t.Fatalf("frames' opcodes %x: want the close frame (8) last", ops)
	}
}
