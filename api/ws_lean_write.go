package api

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/coder/websocket"
)

// The write side of a leanConn.
//
// The connection's writer sends its messages between cork and uncork:
// what coder/websocket writes meanwhile (the frame header, then the
// payload) is gathered in a pooled buffer and leaves in one write syscall
// at uncork, as it did through net/http's 4 KiB bufio writer. A send that
// finds the socket full calls onBlock before it waits, so that a writer on
// the server's pool leaves it rather than hold a worker while the peer is
// slow (ws_pool.go).
//
// Everyone else's frames — a heartbeat ping, the pong coder/websocket's
// reader answers a ping with, a close — are written under coder/websocket's
// frame lock, which the writer's next message needs too. Were such a frame
// to wait for a full socket, the writer would wait for the lock with it,
// on a pool worker, without onBlock ever firing: a few peers that stop
// reading could so hold every worker for a control frame's timeout (5 s).
// So while the connection has a writer (wake is set), a frame written by
// anyone else never waits: what the socket takes at once is written, the
// rest is queued, and the writer is woken to send it, ahead of its next
// message, as any of its sends (onBlock included). The queue holds at
// most maxQueued bytes: a peer that sends pings faster than it reads their
// pongs fills it, and the next frame fails, which ends the connection
// (coder/websocket's reader fails with its pong).
//
// Before the writer exists, and once it has left for a close handshake
// (hold), frames are written at once and wait, after anything queued.
//
// Byte order on the socket is the order of coder/websocket's frame lock:
// a frame written while corked joins the writer's message; one written
// after uncork took the message waits behind it (wmu, or the queue); the
// queue is sent before the message taken after it.

// maxQueued bounds a connection's queue of frames written by others: 32
// control frames of the largest size (2 + 125 bytes).
const maxQueued = 32 * 127

// errQueueFull fails a frame written by others when the queue is full.
var errQueueFull = errors.New("websocket: the peer reads nothing and control frames wait beyond the limit")

// attach makes the connection's writer the one that sends queued frames:
// wake wakes it, and onBlock is called once per send of its that has to
// wait for the peer.
func (c *leanConn) attach(wake, onBlock func()) {
	c.mu.Lock()
	c.wake, c.onBlock = wake, onBlock
	c.mu.Unlock()
}

// hold has frames written by others wait for the socket again, as before
// attach: the writer is leaving for a close handshake and will send
// nothing more from the queue.
func (c *leanConn) hold() {
	c.mu.Lock()
	c.wake = nil
	c.mu.Unlock()
}

// Write is coder/websocket's write of a frame's bytes, under its frame
// lock.
func (c *leanConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.corked != nil {
		*c.corked = append(*c.corked, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	wake := c.wake
	if wake == nil {
		c.mu.Unlock()
		if err := c.writeNow(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if len(c.queued) == 0 && c.wmu.TryLock() {
		// Nothing waits ahead and no send is under way: what the socket
		// takes now goes, the rest waits for the writer.
		c.mu.Unlock()
		rest, err := c.try(p)
		if err == nil && len(rest) > 0 {
			c.mu.Lock()
			c.queued = append(c.queued, rest...) // under wmu still: nothing is written before it
			c.mu.Unlock()
		}
		c.wmu.Unlock()
		if err != nil {
			return 0, err
		}
		if len(rest) > 0 {
			wake()
		}
		return len(p), nil
	}
	if len(c.queued)+len(p) > maxQueued {
		c.mu.Unlock()
		return 0, errQueueFull
	}
	c.queued = append(c.queued, p...)
	c.mu.Unlock()
	wake()
	return len(p), nil
}

// writeNow writes what is queued, then p, waiting for the peer as long as
// it takes (or until the connection is closed).
func (c *leanConn) writeNow(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	q := c.queued
	c.queued = nil
	c.mu.Unlock()
	c.block = nil
	if err := c.writeAll(q); err != nil {
		return err
	}
	return c.writeAll(p)
}

// cork starts gathering the writer's message.
func (c *leanConn) cork() {
	bp := c.s.bufs.Get().(*[]byte)
	*bp = (*bp)[:0]
	c.mu.Lock()
	c.corked = bp
	c.mu.Unlock()
}

// uncork sends what was queued, then what was gathered since cork.
func (c *leanConn) uncork() error {
	c.wmu.Lock() // waits at most for one frame's try (Write) by another
	defer c.wmu.Unlock()
	c.mu.Lock()
	bp, q := c.corked, c.queued
	c.corked, c.queued = nil, nil
	c.block = c.onBlock
	c.mu.Unlock()
	defer c.s.bufs.Put(bp)
	err := c.writeAll(q)
	if err == nil {
		err = c.writeAll(*bp)
	}
	*bp = (*bp)[:0]
	return err
}

// hasQueued says whether frames written by others wait for the writer.
func (c *leanConn) hasQueued() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queued) > 0
}

// sendQueued sends the frames written by others that wait: the writer's
// send when it has no message of its own.
func (c *leanConn) sendQueued() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	q := c.queued
	c.queued = nil
	c.block = c.onBlock
	c.mu.Unlock()
	return c.writeAll(q)
}

// writeAll writes b through the poller, as net.Conn's Write does, but
// calls block (if set) before the first wait for a full socket. The
// caller holds wmu.
func (c *leanConn) writeAll(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if c.writeFn == nil {
		c.writeFn = c.writeFD
	}
	c.unsent, c.writeErr = b, nil
	err := c.raw.Write(c.writeFn) // the poller's own errors come as a net.OpError already
	c.unsent = nil
	return c.opError(err)
}

// try writes what the socket takes of p without waiting, and returns the
// rest. The caller holds wmu.
func (c *leanConn) try(p []byte) ([]byte, error) {
	if c.tryFn == nil {
		c.tryFn = c.tryFD
	}
	c.unsent, c.writeErr = p, nil
	err := c.raw.Write(c.tryFn)
	rest := c.unsent
	c.unsent = nil
	return rest, c.opError(err)
}

// opError wraps write(2)'s own error, if the poller had none.
func (c *leanConn) opError(err error) error {
	if err == nil && c.writeErr != nil {
		err = &net.OpError{Op: "write", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: c.writeErr}
	}
	return err
}

// writeFD is writeAll's write of the socket, which the poller calls until
// it returns true.
func (c *leanConn) writeFD(fd uintptr) bool {
	full := c.writeSome(fd)
	if full && c.block != nil {
		c.block() // once per send
		c.block = nil
	}
	return !full // full: the poller waits until the peer reads
}

// tryFD is try's write of the socket: it never asks the poller to wait.
func (c *leanConn) tryFD(fd uintptr) bool {
	c.writeSome(fd)
	return true
}

// writeSome writes unsent until it is all written, the socket is full
// (it says so), or write(2) fails (writeErr).
func (c *leanConn) writeSome(fd uintptr) (full bool) {
	for len(c.unsent) > 0 {
		n, err := syscall.Write(int(fd), c.unsent)
		if n > 0 {
			c.unsent = c.unsent[n:]
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return true
		case err != nil:
			c.writeErr = os.NewSyscallError("write", err)
			return false
		}
	}
	return false
}

// write sends buf as one text message: on a leanConn in one write syscall
// (after the frames of others that wait, if any).
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
