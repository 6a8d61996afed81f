package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// An idle websocket should hold no buffer. coder/websocket keeps, for the
// life of a connection, the bufio reader and writer its Hijack returned:
// net/http's, 4 KiB each, a quarter of an idle connection's memory with
// the GC's headroom on them. Nothing is read or written most of
// the time, so the connection is handed a lean socket instead: bufio
// buffers of the smallest size bufio allows, over a leanConn that takes a
// buffer from a pool only while there is something to read or to write,
// and gives it back once that is done.

// leanBufio is the size of the bufio reader and writer coder/websocket
// gets: bufio's smallest, which holds a frame header.
const leanBufio = 16

// leanReadSize is the size of the pooled buffers a read fills.
const leanReadSize = 4096

// leanHijacker is the http.ResponseWriter given to websocket.Accept: its
// Hijack returns a leanConn (kept in lc) and lean bufio buffers.
//
// It writes the upgrade's 101 itself, on the hijacked socket, or, when
// the request carried its hello (hold), leaves it to the socket's first
// write, which is that hello's reply. net/http
// would write it through the connection's 4 KiB bufio.Writer, which it
// never gets back from a hijack: in a storm of reconnects each upgrade
// touched a fresh buffer's page only to write 200 bytes, and net/http's
// header writer (a 2.8 KiB frame) grew the handler's stack.
type leanHijacker struct {
	http.ResponseWriter
	s  *Server
	lc *leanConn // set by Hijack; nil if the socket is not the kernel's

	upgrade bool // WriteHeader(101) was called: Hijack writes it
	// hold: the request carried its hello, whose reply is written at once;
	// the 101 waits on the lean socket to leave with it, in one write.
	hold bool
}

// WriteHeader holds a 101 back for Hijack to write; anything else goes to
// net/http.
func (h *leanHijacker) WriteHeader(code int) {
	if code == http.StatusSwitchingProtocols && !h.upgrade {
		h.upgrade = true
		return
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *leanHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, err := hijackerOf(h.ResponseWriter)
	if err != nil {
		return nil, nil, err
	}
	var head []byte
	if h.upgrade {
		var ok bool
		if head, ok = switchingProtocols(h.Header()); !ok {
			h.ResponseWriter.WriteHeader(http.StatusSwitchingProtocols) // net/http writes it, as it can
			h.upgrade = false
		}
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	var raw syscall.RawConn
	if sc, ok := conn.(syscall.Conn); ok {
		raw, _ = sc.SyscallConn()
	}
	if h.upgrade && (raw == nil || !h.hold) {
		// A peer gone by now is found by the websocket's first read, as
		// under net/http, which ignores its flush of the 101 at a hijack:
		// an error here would have the library answer 500 on a response
		// that is no longer net/http's.
		_, _ = conn.Write(head)
	}
	if raw == nil {
		return conn, brw, nil // not a socket of the kernel's: as net/http made it
	}
	lowWater(raw)
	lc := &leanConn{Conn: conn, raw: raw, s: h.s}
	if h.upgrade && h.hold {
		lc.head = head
	}
	// What net/http had read past the request (a client that did not
	// wait for the upgrade's answer) is read first; its buffers are let go.
	// Then what the connection itself holds read and not yet given out
	// (api's edge, which read the request before net/http: TakeBuffered).
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		lc.pending = bytes.Clone(b)
	}
	if tb, ok := conn.(interface{ TakeBuffered() []byte }); ok {
		lc.pending = append(lc.pending, tb.TakeBuffered()...)
	}
	h.lc = lc
	return lc, bufio.NewReadWriter(bufio.NewReaderSize(lc, leanBufio), bufio.NewWriterSize(lc, leanBufio)), nil
}

// pongReceived is the library's word of a pong its reader read: the lean
// socket counts it (leanConn.pongRead).
func (h *leanHijacker) pongReceived(context.Context, []byte) {
	if h.lc != nil {
		h.lc.pongRead()
	}
}

// switchingProtocols is the 101 response with header h, in the form
// net/http writes it (canonical keys, sorted, then a Date); ok is false
// if a key or a value holds a byte that cannot go on a header line as it
// is, which net/http's writer would mend.
func switchingProtocols(h http.Header) (_ []byte, ok bool) {
	b := make([]byte, 0, 256)
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\n"...)
	for _, k := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[k] {
			if !headerSafe(k) || !headerSafe(v) {
				return nil, false
			}
			b = append(append(append(append(b, k...), ": "...), v...), "\r\n"...)
		}
	}
	if _, dated := h["Date"]; !dated {
		b = append(b, "Date: "...)
		b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...), true
}

// headerSafe says whether s holds no CR, LF or NUL.
func headerSafe(s string) bool { return !strings.ContainsAny(s, "\r\n\x00") }

// hijackerOf finds the http.Hijacker under w, following Unwrap as
// http.ResponseController does (echo's Response is one).
func hijackerOf(w http.ResponseWriter) (http.Hijacker, error) {
	for {
		switch t := w.(type) {
		case http.Hijacker:
			return t, nil
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil, errors.New("the response cannot be hijacked")
		}
	}
}

// leanConn is a websocket's socket that holds a buffer only while it has
// bytes in it.
//
// Reads: one at a time, under rmu. A read waits for the socket to be
// readable with no buffer (the runtime's poller, through
// syscall.RawConn), and only then takes one from the pool to read into;
// the buffer goes back once its bytes have been read. A read into a
// slice as large as that buffer reads straight into it. No read hands
// out a byte past the end of the peer's frame it is in (inFrames), and
// between messages the connection's reader waits here, not in the
// library (socket_await.go).
//
// Writes: see socket_write.go. In short, what the connection's writer
// sends between cork and uncork leaves in one write syscall, and a frame
// written by anyone else (a ping, a pong, a close) that waits for the
// peer lends the writers' pool a worker meanwhile.
//
// It sits under coder/websocket and reads the frames the library writes,
// so it depends on how the library writes them (checked by
// TestCoderWebsocketWritesAsTheLeanSocketReads, which an upgrade of the
// library that writes otherwise fails):
//
//   - the library writes through the bufio.Writer Hijack returned (16
//     bytes, leanBufio), so that no Write holds bytes of two frames;
//   - it writes a frame's header whole, in the Write that starts the
//     frame, and flushes at each frame's end;
//   - a message written with (*websocket.Conn).Write is one unfragmented
//     text frame;
//   - every frame is written under the library's frame lock, one at a
//     time.
//
// Anything else fails the Write with an error (errFrameHeader, a write
// past its frame's end) rather than sending bytes out of their frame.
type leanConn struct {
	net.Conn
	raw syscall.RawConn
	s   *Server

	// held by a Read (coder/websocket reads one at a time, under a lock
	// of its own, but its close handshake may read from another goroutine
	// while the reader waits in await)
	rmu     sync.Mutex
	pending []byte                // bytes read and not yet returned
	rbuf    *[]byte               // the pooled buffer pending is in, if any
	in      inFrames              // the frames of what Read has handed out
	readFn  func(fd uintptr) bool // readFD, made once: a closure per read was two allocations
	readN   int                   // readFD's outcome
	readErr error
	broken  error // the socket failed under await: every Read fails with it

	pongs  atomic.Uint32                 // pongs read, by await or the library's reader: the heartbeat's answers
	onPong atomic.Pointer[chan struct{}] // told as a pong is read (the heartbeat's ping waits for it)

	// the write side (socket_write.go)
	wmu sync.Mutex // held by whoever writes to the socket, from taking the bytes to the last written

	mu      sync.Mutex
	corked  *[]byte // the pooled buffer gathering the writer's message, while corked
	pong    []byte  // a whole pong frame to write as soon as the socket is between frames
	ping    []byte  // the same, of the heartbeat's ping (sendPing)
	closing bool    // the close frame has begun: no ping is sent after it
	onBlock func()  // set once, before the writer first runs: called once per uncork that has to wait for the peer (the writer pool's leave)

	// owned by the holder of wmu
	head     []byte                // the 101, held for the first write to carry (leanHijacker.hold)
	writeFn  func(fd uintptr) bool // writeFD, made once
	unsent   []byte                // what writeFD has left to write
	writeErr error
	block    func() // called before the first wait for the peer in this write, if not nil
	lent     bool   // this write lent the writers' pool a worker (lend)
	lendFn   func() // lend, made once
	msgErr   error  // the error of the writer's message when a frame of others sent it
	midFrame bool   // the socket has part of a frame of others: nothing else may go now

	others atomic.Int32 // frames of others in Write now, waiting or writing (tests wait on it)

	// owned by coder/websocket's frame lock (every Write holds it)
	frameLeft int64  // bytes of the frame being written still to come; 0 between frames
	gather    bool   // that frame is the writer's message: it goes to corked
	keep      []byte // that frame is a pong: its bytes so far, kept rather than written
}

var leanReadBufs = sync.Pool{New: func() any { b := make([]byte, leanReadSize); return &b }}

// Read hands out what the socket has, and never a byte past the end of
// the frame it is in (inFrames).
func (c *leanConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.broken != nil {
		return 0, c.broken
	}
	if len(c.pending) == 0 {
		if len(p) >= leanReadSize {
			p = p[:min(int64(len(p)), c.in.limit(nil))]
			n, err := c.Conn.Read(p)
			c.in.advance(p[:n])
			return n, err
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p[:min(int64(len(p)), c.in.limit(c.pending))], c.pending)
	c.in.advance(c.pending[:n])
	c.pending = c.pending[n:]
	if len(c.pending) == 0 && c.rbuf != nil {
		leanReadBufs.Put(c.rbuf)
		c.rbuf = nil
	}
	return n, nil
}

// fill waits until the socket is readable, then reads what is there into
// a pooled buffer.
func (c *leanConn) fill() error {
	if c.readFn == nil {
		c.readFn = c.readFD
	}
	err := c.raw.Read(c.readFn)
	n, rerr := c.readN, c.readErr
	c.readErr = nil
	if err == nil && rerr != nil {
		err = os.NewSyscallError("read", rerr)
	}
	if err == nil && n == 0 {
		err = io.EOF
	}
	if err != nil {
		if c.rbuf != nil {
			leanReadBufs.Put(c.rbuf)
			c.rbuf = nil
		}
		if err == io.EOF {
			return err
		}
		return &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	c.pending = (*c.rbuf)[:n]
	return nil
}

// readFD is fill's read of the socket, which the poller calls until it
// returns true.
func (c *leanConn) readFD(fd uintptr) bool {
	bp := leanReadBufs.Get().(*[]byte)
	for {
		c.readN, c.readErr = syscall.Read(int(fd), *bp)
		if c.readErr != syscall.EINTR {
			break
		}
	}
	if c.readErr == syscall.EAGAIN {
		leanReadBufs.Put(bp)
		return false // not readable yet: the poller waits, with no buffer held
	}
	c.rbuf = bp
	return true
}

// leanDrain bounds what Close discards of the peer's unread input.
const leanDrain = 64 << 10

// Close closes the socket after discarding what the peer sent, has
// arrived, and nothing will read (up to leanDrain). Closing a TCP socket
// with unread input resets the connection (RFC 2525, 2.17), and the reset
// throws away what the kernel had still to send: the last messages and
// the close frame, so that a client that sent a message over the limit
// would see its connection reset rather than the 1009. A peer that keeps
// sending (past leanDrain, or after the drain) gets its reset.
func (c *leanConn) Close() error {
	c.raw.Control(func(fd uintptr) {
		var buf [4096]byte
		for range leanDrain / len(buf) {
			n, err := syscall.Read(int(fd), buf[:])
			if err == syscall.EINTR {
				continue
			}
			if n <= 0 || err != nil {
				return // drained (EAGAIN), or the peer is gone
			}
		}
	})
	return c.Conn.Close()
}
