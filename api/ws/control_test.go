package ws

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// A control frame the server cannot write to a peer that reads nothing
// holds no pool worker while it waits. The peer pings and never reads, so
// the pong waits for its socket, holding coder/websocket's frame lock; the
// peer's writer, woken by an event, waits for that lock on the only
// worker. Before the pong lent the pool a worker while it waits, every
// other connection's events waited with it, until the pong's timeout
// (5 s).
//
// The socket stays full for as long as the test says (fullSocket): a real
// one drains in steps as the peer's kernel makes room, so that the pong
// may finish, and the writer take the lock, at any moment. The writer may
// find the lock held while it writes the event, or while it writes
// something it took before (a presence push, another event: "busy") with
// the event still to come; in both it holds the worker until the pong is
// written, and the other connection's event must not wait for it.
func TestWSPoolControlFrameDoesNotHoldAWorker(t *testing.T) {
	for _, busy := range []bool{false, true} {
		t.Run(fmt.Sprintf("busy=%v", busy), func(t *testing.T) {
			testControlFrameDoesNotHoldAWorker(t, busy)
		})
	}
}

func testControlFrameDoesNotHoldAWorker(t *testing.T, busy bool) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	e.srv.writers.max = 1
	s := e.create("s")
	e.create("t")
	peer := e.rawPeer(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	pc := e.onlyConn()
	w := pc.writer()
	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "t"})

	full := fullSocket(t, pc.lean, 0xA)
	if _, err := peer.Write(maskedFrame(0x9, []byte("ping"))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-full.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the pong never came to the socket")
	}

	// Wake the peer's writer, and wait until it is on the worker and in
	// its write, which needs the lock the pong holds.
	e.input("s", 1, "to the silent peer")
	waitWriterHeld(t, w)
	if busy {
		// A second event waits for the held writer: the schedule in which
		// the writer never takes the event it was woken for.
		d0 := e.hub.Stats().Deliveries
		e.input("s", 2, "to the silent peer, again")
		w.mu.Lock()
		again := w.running && w.again
		w.mu.Unlock()
		if !again || e.hub.Stats().Deliveries != d0 {
			t.Fatalf("the held writer took the second event (again %v)", again)
		}
	}

	start := time.Now()
	e.input("t", 1, "to the reader")
	f := fast.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the reader's event took %v behind the silent peer", d)
	}
	if f.Event.Text != "to the reader" {
		t.Fatalf("event %+v", f.Event)
	}
}

// socketGate holds the first frame of the given opcode that c writes as
// if its socket were full, from before its first byte until release.
type socketGate struct {
	held    chan struct{} // closed when the frame waits
	release func()
}

// fullSocket arms a socketGate on c. The frame waits as it would for a
// full socket (writeFD): it calls the write's block first, which lends
// the writers' pool a worker for a frame of others. The test's cleanup
// releases it.
func fullSocket(t *testing.T, c *leanConn, opcode byte) *socketGate {
	g := &socketGate{held: make(chan struct{})}
	released := make(chan struct{})
	g.release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(g.release) // before the server's Close, which waits for the reader
	armed := true
	c.wmu.Lock()
	defer c.wmu.Unlock()
	write := c.writeFD
	c.writeFn = func(fd uintptr) bool { // called under wmu, as writeFD is
		if armed && len(c.unsent) > 0 && c.unsent[0]&0x0f == opcode {
			armed = false
			if c.block != nil {
				c.block()
				c.block = nil
			}
			close(g.held)
			<-released
		}
		return write(fd)
	}
	return g
}

// waitWriterHeld waits until w, on a pool worker (a lean socket's writer
// runs nowhere else), is in its write: it holds its worker until the
// write is done.
func waitWriterHeld(t *testing.T, w *writer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		running := w.running
		w.mu.Unlock()
		if running && w.writing.Load() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the peer's writer never began its write (running %v)", running)
		}
		time.Sleep(time.Millisecond)
	}
}

// A heartbeat's ping sent while the writer waits on a full socket waits
// its turn, and reaches the peer between whole messages once it reads:
// every event in order, none lost, and the ping answered.
func TestWSPingWaitsItsTurnBehindAFullSocket(t *testing.T) {
	e := newEnv(t, Options{WriteTimeout: time.Minute})
	s := e.create("s")
	slow := e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	wc := e.onlyConn()
	wc.lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)
	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	// 256 KiB of messages: far beyond what the slow reader's way holds,
	// so its writer waits for the socket.
	const n = 16
	floodPastAStalledReader(e, fast, n, 16<<10)

	pinged := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		pinged <- wc.pingPeer(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !wc.lean.pingKept() {
		if time.Now().After(deadline) {
			t.Fatal("the ping never waited behind the full socket")
		}
		time.Sleep(time.Millisecond)
	}
	// More events behind the ping.
	for i := n; i < n+4; i++ {
		e.input("s", i, "after")
	}

	// Read: coder/websocket answers the ping as it reads.
	readEventsInOrder(t, slow, 4*(n+4))
	if err := <-pinged; err != nil {
		t.Fatalf("the queued ping: %v", err)
	}
}

// A close the server writes while its socket is full (the echo of a
// client's close, or its own 1009 for a message over the limit) reaches
// the client whole and last, after every event written before it: it
// waits its turn behind the writer's message, as the contract says.
func TestWSCloseBehindAFullSocketComesLastAndWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  Options
		frame []byte // what the client sends
		code  uint16 // the close code it must read last
	}{
		{"echo of the client's close", Options{}, maskedFrame(0x8, []byte{0x03, 0xe8}), 1000},
		{"1009 for a message over the limit", Options{MaxFrame: 1024}, maskedText([]byte(strings.Repeat("x", 60000))), 1009},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.WriteTimeout = time.Minute
			e := newEnv(t, tc.opts)
			s := e.create("s")
			peer := e.rawPeer(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
			pc := e.onlyConn()
			peer.(*net.TCPConn).SetReadBuffer(4096)
			pc.lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)
			fast := e.dial(true)
			fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
			floodPastAStalledReader(e, fast, 16, 16<<10) // 256 KiB of messages: the peer's way is full
			if _, err := peer.Write(tc.frame); err != nil {
				t.Fatal(err)
			}

			peer.SetReadDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(peer)
			var last byte
			var lastPayload []byte
			want := int64(1)
			for {
				op, payload, err := readServerFrame(br)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("after %d events and a frame %x: %v", want-1, last, err)
				}
				if last == 0x8 {
					t.Fatalf("a frame %x after the close", op)
				}
				last, lastPayload = op, payload
				if op != 0x1 {
					continue
				}
				want = eventsInOrder(t, payload, want)
			}
			if last != 0x8 || len(lastPayload) < 2 || binary.BigEndian.Uint16(lastPayload) != tc.code {
				t.Fatalf("the last frame: opcode %x payload %q; want a close %d (after %d events)", last, lastPayload, tc.code, want-1)
			}
		})
	}
}

// readEventsInOrder reads c until it has had the events 1 … n of its one
// subscription, each once and in order (eventsInOrder), within 30 s.
func readEventsInOrder(t *testing.T, c *websocket.Conn, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for want := int64(1); want <= n; {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d events: %v", want-1, err)
		}
		want = eventsInOrder(t, msg, want)
	}
}

// eventsInOrder checks the event pushes of one message from the daemon:
// each is the offset want, then the next. It returns the offset due next.
func eventsInOrder(t *testing.T, msg []byte, want int64) int64 {
	t.Helper()
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
	return want
}

// readServerFrame reads one unfragmented frame the server sent (servers
// do not mask theirs): its opcode and payload, or io.EOF at the end of a
// connection between frames.
func readServerFrame(r io.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	if h[0]&0x80 == 0 {
		return 0, nil, fmt.Errorf("frame header %x: fragmented", h[0])
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, io.ErrUnexpectedEOF
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, io.ErrUnexpectedEOF
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	if n > 16<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return h[0] & 0x0f, p, nil
}

// onlyConn returns the server's one connection, with a lean socket.
func (e *env) onlyConn() *conn {
	e.t.Helper()
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	if len(e.srv.conns) != 1 {
		e.t.Fatalf("%d connections, want 1", len(e.srv.conns))
	}
	for c := range e.srv.conns {
		if c.lean == nil {
			e.t.Fatal("the connection's socket is not a lean one")
		}
		return c
	}
	return nil
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

// A heartbeat that comes while a write to a slow peer is in progress sends
// no ping: the ping would wait behind the write, and its pong's deadline,
// the heartbeat, would cut a peer that is taking the write, however long
// the write timeout allows. Here the peer reads nothing for several
// heartbeats (200 ms) while the write waits (timeout a minute), then reads
// every event, and the connection is still up. (A ping sent before the
// flood's first write, which this peer does not answer either, cuts
// nothing once a write has begun.)
func TestWSHeartbeatLeavesAWriteInProgressToItsTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{WriteTimeout: time.Minute, Heartbeat: 200 * time.Millisecond})
	s := e.create("s")
	slow := e.dialRawBuf(4096, wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	wc := e.onlyConn()
	wc.lean.Conn.(*net.TCPConn).SetWriteBuffer(4096)
	w := wc.writer()
	fast := e.dial(true)
	fast.Hello(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	const n = 16
	floodPastAStalledReader(e, fast, n, 16<<10) // 256 KiB: the slow peer's writer waits

	deadline := time.Now().Add(10 * time.Second)
	for w.idleBeats.Load() < 4 {
		if wc.ctx.Err() != nil {
			t.Fatalf("the connection was cut while its write waited, after %d heartbeats", w.idleBeats.Load())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats found the write in progress, want 4", w.idleBeats.Load())
		}
		time.Sleep(time.Millisecond)
	}

	readEventsInOrder(t, slow, 4*n)
	// Still up: the daemon answers a ping (coder/websocket sees the pong,
	// and answers the daemon's pings, while the goroutine reads).
	answerPings(slow)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := slow.Ping(ctx); err != nil {
		t.Fatalf("the connection after the slow write: %v", err)
	}
}

// A heartbeat's ping that goes unanswered while the peer's bytes wait
// unread in the socket cuts nothing: the daemon is behind (here its
// reader is held before its next message), not the peer gone, and the
// pong may be among those bytes. Once the daemon reads again the
// connection goes on. A peer that answers nothing is still cut.
func TestWSHeartbeatSparesAPeerTheDaemonHasNotRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{WriteTimeout: time.Minute, Heartbeat: 200 * time.Millisecond})
	st := newStall(t)
	e.srv.beforeRead = st.hook
	s := e.create("s")
	c := e.dialRaw(wire.Sub{Session: "s", After: ptr(int64(0)), Epoch: s.Epoch})
	wc := e.onlyConn()
	w := wc.writer()
	gone := answerPings(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st.holdNext(t, ctx, c)
	for w.sparedBeats.Load() < 3 {
		select {
		case <-gone:
			t.Fatalf("the connection was cut while its pongs waited unread, after %d heartbeats", w.sparedBeats.Load())
		default:
		}
		if ctx.Err() != nil {
			t.Fatalf("%d unanswered pings found the peer's bytes unread, want 3", w.sparedBeats.Load())
		}
		time.Sleep(time.Millisecond)
	}
	st.release()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("the connection once the daemon reads again: %v", err)
	}

	// A peer that reads nothing answers no ping, and sends nothing.
	silent := e.dialRaw()
	defer silent.CloseNow()
	waitCut(t, e, ctx, wc)
	select {
	case <-gone:
		t.Fatal("the first connection was cut")
	default:
	}
}

// waitCut waits until keep is the server's only connection: the other
// one has been cut.
func waitCut(t *testing.T, e *env, ctx context.Context, keep *conn) {
	t.Helper()
	for {
		e.srv.mu.Lock()
		_, kept := e.srv.conns[keep]
		n := len(e.srv.conns)
		e.srv.mu.Unlock()
		if !kept {
			t.Fatal("the connection that answers was cut")
		}
		if n == 1 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("a peer that answered no ping is still connected")
		}
		time.Sleep(time.Millisecond)
	}
}

// A peer whose commands the daemon is still running is not cut for a
// missing pong: its pong may have come with them, into the daemon's own
// buffers, where the socket's count does not see it. Here the peer
// answers nothing at all; once the daemon is done with its command, the
// next unanswered ping cuts it.
func TestWSHeartbeatSparesAPeerWhoseCommandRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{WriteTimeout: time.Minute, Heartbeat: 200 * time.Millisecond})
	st := newStall(t)
	e.srv.beforeHandle = st.hook
	keep := e.dialRaw() // answers the daemon's pings
	kc := e.onlyConn()
	answerPings(keep)
	silent := e.dialRaw() // reads nothing, answers nothing
	defer silent.CloseNow()
	var sc *conn
	e.srv.mu.Lock()
	for c := range e.srv.conns {
		if c != kc {
			sc = c
		}
	}
	e.srv.mu.Unlock()
	w := sc.writer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st.holdNext(t, ctx, silent)
	for w.sparedBeats.Load() < 3 {
		if sc.ctx.Err() != nil || ctx.Err() != nil {
			t.Fatalf("the connection was cut while its command ran, after %d spared heartbeats", w.sparedBeats.Load())
		}
		time.Sleep(time.Millisecond)
	}
	st.release()
	waitCut(t, e, ctx, kc)
	if heartbeat, slow := e.srv.Cuts(); heartbeat != 1 || slow != 0 {
		t.Fatalf("cuts: heartbeat %d, slow %d; want 1 and 0", heartbeat, slow)
	}
}

// stall is a test hook that, once armed, holds the goroutine that calls
// it next until released.
type stall struct {
	armed   atomic.Bool
	stalled chan struct{} // told when the hook holds its caller
	release func()
	held    chan struct{}
}

func newStall(t *testing.T) *stall {
	st := &stall{stalled: make(chan struct{}, 1), held: make(chan struct{})}
	st.release = sync.OnceFunc(func() { close(st.held) })
	t.Cleanup(st.release) // before the server's Close, which waits for the reader
	return st
}

// holdNext arms st, sends a command on c and waits until the hook holds
// the daemon's goroutine that comes to it.
func (st *stall) holdNext(t *testing.T, ctx context.Context, c *websocket.Conn) {
	t.Helper()
	st.armed.Store(true)
	if err := c.Write(ctx, websocket.MessageText, wire.Encode(wire.Command{ID: 2, Op: wire.OpPing})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.stalled:
	case <-ctx.Done():
		t.Fatal("the daemon's goroutine did not come to the hook")
	}
}

// answerPings reads c until it ends, which answers the daemon's pings;
// the channel is closed when it has ended.
func answerPings(c *websocket.Conn) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	return gone
}

func (st *stall) hook() {
	if st.armed.CompareAndSwap(true, false) {
		st.stalled <- struct{}{}
		<-st.held
	}
}
