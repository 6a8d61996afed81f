package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"

	"github.com/coder/websocket"
)

// An idle websocket should hold no buffer. coder/websocket keeps, for the
// life of a connection, the bufio reader and writer its Hijack returned:
// net/http's, 4 KiB each, a quarter of an idle connection's memory with
// the GC's headroom on them (issue 16). Nothing is read or written most of
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
// Hijack returns a leanConn (kept in conn) and lean bufio buffers.
type leanHijacker struct {
	http.ResponseWriter
	s    *Server
	conn *leanConn // set by Hijack; nil if the socket is not the kernel's
}

func (h *leanHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, err := hijackerOf(h.ResponseWriter)
	if err != nil {
		return nil, nil, err
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn, brw, nil // not a socket of the kernel's: as net/http made it
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return conn, brw, nil
	}
	lc := &leanConn{Conn: conn, raw: raw, s: h.s}
	// What net/http had read past the request (a client that did not
	// wait for the upgrade's answer) is read first; its buffers are let go.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		lc.pending = bytes.Clone(b)
	}
	h.conn = lc
	return lc, bufio.NewReadWriter(bufio.NewReaderSize(lc, leanBufio), bufio.NewWriterSize(lc, leanBufio)), nil
}

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
// Reads: one at a time (coder/websocket reads under a lock of its own).
// A read waits for the socket to be readable with no buffer (the
// runtime's poller, through syscall.RawConn), and only then takes one
// from the pool to read into; the buffer goes back once its bytes have
// been read. A read into a slice as large as that buffer reads straight
// into it.
//
// Writes: between cork and uncork (the connection's writer, around one
// message) what the websocket writes — the frame header, then the
// payload — is gathered in a pooled buffer and leaves in one write
// syscall at uncork, as it did through net/http's 4 KiB bufio writer.
// Outside them (a ping, a close) a write goes straight to the socket.
// Writes are serialised by coder/websocket's frame lock; mu guards the
// cork against a ping written beside the writer's uncork.
type leanConn struct {
	net.Conn
	raw syscall.RawConn
	s   *Server

	// owned by the one read at a time
	pending []byte                // bytes read and not yet returned
	rbuf    *[]byte               // the pooled buffer pending is in, if any
	readFn  func(fd uintptr) bool // readFD, made once: a closure per read was two allocations
	readN   int                   // readFD's outcome
	readErr error

	mu     sync.Mutex
	corked *[]byte // the pooled buffer gathering the message, while corked

	// owned by the one uncork at a time
	onBlock  func()                // called once per uncork that has to wait for the peer (the writer pool's leave)
	writeFn  func(fd uintptr) bool // writeFD, made once
	unsent   []byte                // what writeFD has left to write
	writeErr error
	waited   bool // writeFD found the socket full during this uncork
}

var leanReadBufs = sync.Pool{New: func() any { b := make([]byte, leanReadSize); return &b }}

func (c *leanConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		if len(p) >= leanReadSize {
			return c.Conn.Read(p)
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pending)
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

func (c *leanConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.corked != nil {
		*c.corked = append(*c.corked, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// cork starts gathering writes.
func (c *leanConn) cork() {
	bp := c.s.bufs.Get().(*[]byte)
	*bp = (*bp)[:0]
	c.mu.Lock()
	c.corked = bp
	c.mu.Unlock()
}

// uncork writes what was gathered since cork, in one write.
func (c *leanConn) uncork() error {
	c.mu.Lock()
	bp := c.corked
	c.corked = nil
	c.mu.Unlock()
	defer c.s.bufs.Put(bp)
	if len(*bp) == 0 {
		return nil
	}
	err := c.writeAll(*bp)
	*bp = (*bp)[:0]
	return err
}

// writeAll writes b through the poller, as net.Conn's Write does, but
// calls onBlock before the first wait for a full socket: a pooled writer
// then leaves the pool rather than hold it while the peer is slow.
func (c *leanConn) writeAll(b []byte) error {
	if c.writeFn == nil {
		c.writeFn = c.writeFD
	}
	c.unsent, c.writeErr, c.waited = b, nil, false
	err := c.raw.Write(c.writeFn) // the poller's own errors come as a net.OpError already
	c.unsent = nil
	if err == nil && c.writeErr != nil {
		err = &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: c.writeErr}
	}
	return err
}

// writeFD is writeAll's write of the socket, which the poller calls until
// it returns true.
func (c *leanConn) writeFD(fd uintptr) bool {
	for len(c.unsent) > 0 {
		n, err := syscall.Write(int(fd), c.unsent)
		if n > 0 {
			c.unsent = c.unsent[n:]
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if !c.waited {
				c.waited = true
				if c.onBlock != nil {
					c.onBlock()
				}
			}
			return false // full: the poller waits until the peer reads
		case err != nil:
			c.writeErr = os.NewSyscallError("write", err)
			return true
		}
	}
	return true
}

// write sends buf as one text message: on a leanConn in one write syscall.
func (wc *wsConn) write(buf []byte) error {
	if wc.lean == nil {
		return wc.ws.Write(context.Background(), websocket.MessageText, buf)
	}
	wc.lean.cork()
	err := wc.ws.Write(context.Background(), websocket.MessageText, buf)
	if uerr := wc.lean.uncork(); err == nil {
		err = uerr
	}
	return err
}
