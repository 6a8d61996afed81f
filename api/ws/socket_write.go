package ws

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/coder/websocket"
)

// The write side of a leanConn.
//
// The connection's writer sends its messages between cork and uncork:
// the text frame coder/websocket writes meanwhile (its header, then the
// payload, in several Writes through a 16-byte bufio.Writer) is gathered
// in a pooled buffer and leaves in one write syscall at uncork, as it did
// through net/http's 4 KiB bufio writer. A send that finds the socket full
// calls onBlock before it waits, so that a writer on the server's pool
// leaves it rather than hold a worker while the peer is slow
// (pool.go).
//
// Everyone else's frames — a heartbeat ping, the pong or close echo
// coder/websocket's reader answers with, a close — are written at once.
// Write tells the frames apart by reading each frame's header as it
// starts (every frame starts a Write: coder/websocket flushes at each
// frame's end), so that only the writer's own frame is gathered: a close
// written while the writer waits to start its message must reach the
// socket before the connection is closed, not wait in the writer's
// buffer. A frame of others that starts after the writer's message was
// gathered, and before uncork, writes that message first: the frame lock
// put it first.
//
// A frame of others holds coder/websocket's frame lock while it waits for
// the peer (as long as its own timeout allows), and the writer's next
// message needs that lock: a writer woken meanwhile waits for it on a pool
// worker, where onBlock cannot fire. So a frame of others that finds the
// socket full lends the pool a worker (writerPool.lend) for as long as it
// waits: the worker it may hold is replaced, and a few peers that stop
// reading cannot hold every worker.
//
// Every write to the socket holds wmu, from taking its bytes to the last
// written, so bytes reach the socket in the frame lock's order, with one
// exception: a pong. coder/websocket's reader answers a ping under a
// timeout of 5 s and closes the connection when the pong's write takes
// longer; behind a message that waits for a peer which reads slowly, or
// pauses for less than the write timeout, it would. So a pong is never
// written behind the writer's message: it is kept (the latest only, as RFC
// 6455 §5.5.3 allows) and its Write returns, and it leaves as soon as the
// socket is between frames: at once if wmu is free, else written by the
// holder of wmu as it lets go, ahead of a message gathered and not yet
// sent.

// errFrameHeader fails a Write that does not begin with a whole frame
// header where a frame starts: coder/websocket's bufio.Writer (16 bytes,
// leanBufio) always flushes a header whole.
var errFrameHeader = errors.New("websocket: a frame's header split across writes")

// cork starts gathering the writer's message.
func (c *leanConn) cork() {
	bp := c.s.bufs.Get().(*[]byte)
	*bp = (*bp)[:0]
	c.mu.Lock()
	c.corked = bp
	c.mu.Unlock()
}

// uncork sends what was gathered since cork (unless a frame of others sent
// it first), in one write.
func (c *leanConn) uncork() error {
	c.wmu.Lock()
	defer c.unlockW()
	c.mu.Lock()
	bp := c.corked
	c.corked = nil
	c.mu.Unlock()
	defer c.s.bufs.Put(bp)
	c.block, c.lent = c.onBlock, false
	err := c.writeAll(*bp)
	*bp = (*bp)[:0]
	if err == nil {
		err = c.msgErr // a frame of others sent the message, and failed
	}
	c.msgErr = nil
	return err
}

// Write is coder/websocket's write of a frame's bytes, under its frame
// lock: the writer's message is gathered while corked, any other frame
// written at once.
func (c *leanConn) Write(p []byte) (int, error) {
	if c.frameLeft == 0 {
		n, ok := frameLen(p)
		if !ok {
			return 0, errFrameHeader
		}
		c.frameLeft = n
		c.mu.Lock()
		c.gather = c.corked != nil && len(*c.corked) == 0 && p[0]&0x0f == 0x1 // a text frame: the writer's message
		if p[0]&0x0f == 0x8 {
			// The close frame: nothing follows it, as the library sends
			// nothing after it; a ping kept and not yet sent is dropped.
			c.closing, c.ping = true, nil
		}
		c.mu.Unlock()
		if p[0]&0x0f == 0xa && n <= maxPongFrame {
			c.keep = make([]byte, 0, n)
		}
	}
	if int64(len(p)) > c.frameLeft {
		return 0, errors.New("websocket: a write past its frame's end")
	}
	c.frameLeft -= int64(len(p))
	if c.keep != nil {
		c.keep = append(c.keep, p...)
		if c.frameLeft == 0 {
			c.mu.Lock()
			c.pong = c.keep // an older pong not sent yet is answered by this one
			c.mu.Unlock()
			c.keep = nil
			return len(p), c.sendPong()
		}
		return len(p), nil
	}
	if c.gather {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.corked == nil {
			// Only the writer writes text frames while corked, and it
			// uncorks after its frame; never here.
			return 0, errors.New("websocket: a gathered frame outlived its cork")
		}
		*c.corked = append(*c.corked, p...)
		return len(p), nil
	}
	c.others.Add(1)
	defer c.others.Add(-1)
	c.wmu.Lock()
	defer c.unlockW()
	if c.lendFn == nil {
		c.lendFn = c.lend
	}
	c.block, c.lent = c.lendFn, false
	var err error
	c.mu.Lock()
	if c.corked != nil && len(*c.corked) > 0 {
		// The writer's whole message, gathered before this frame began
		// and not sent yet: it goes first, and uncork finds nothing.
		m := *c.corked
		*c.corked = m[:0]
		c.mu.Unlock()
		err = c.writeAll(m)
		c.msgErr = err // the writer's too: uncork reports it
	} else {
		c.mu.Unlock()
	}
	if err == nil {
		err = c.writeAll(p)
	}
	c.midFrame = c.frameLeft > 0
	if c.lent {
		c.s.writers.giveBack()
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// maxPongFrame is the largest pong a server writes: a 2-byte header and
// a control frame's 125 bytes of payload.
const maxPongFrame = 2 + 125

// sendPong writes the pong kept, now if wmu is free; if not, its holder
// does as it lets go (unlockW).
func (c *leanConn) sendPong() error {
	if !c.wmu.TryLock() {
		return nil
	}
	err := c.writeKept() // between frames: this frame's lock is held
	c.unlockW()
	return err
}

// heartbeatPing is the ping the heartbeat sends (sendPing): any pong
// answers it.
var heartbeatPing = []byte{0x80 | 0x9, 0}

// sendPing writes a ping as a pong is written: kept, and sent as soon as
// the socket is between frames, outside coder/websocket's frame lock, so
// that its pong, which the library's Ping would wait for, can be read
// outside the library's reader (leanConn.await). An error is the
// socket's: the pong does not come, and the next write reports it. It
// sends nothing, and says so, once the close frame has begun.
func (c *leanConn) sendPing() bool {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return false
	}
	c.ping = heartbeatPing
	c.mu.Unlock()
	if c.wmu.TryLock() {
		c.unlockW()
	}
	return true
}

// unlockW lets go of wmu; then, if the socket is between frames and a
// frame is kept, takes wmu again, unless someone else did (it then does
// this in turn), and writes it. Mid-frame, the frame's last Write does.
func (c *leanConn) unlockW() {
	mid := c.midFrame
	c.wmu.Unlock()
	if mid {
		return
	}
	for {
		c.mu.Lock()
		kept := c.pong != nil || c.ping != nil
		c.mu.Unlock()
		if !kept || !c.wmu.TryLock() {
			return
		}
		mid = c.midFrame
		if !mid {
			_ = c.writeKept() // an error is the socket's: the next write reports it
		}
		c.wmu.Unlock()
		if mid {
			return
		}
	}
}

// writeKept writes the frames kept, the pong and then the ping, lending
// the writers' pool a worker while it waits for the peer, as any frame of
// others does. The caller holds wmu, between frames.
func (c *leanConn) writeKept() error {
	c.mu.Lock()
	pong, ping := c.pong, c.ping
	c.pong, c.ping = nil, nil
	c.mu.Unlock()
	if pong == nil && ping == nil {
		return nil
	}
	if c.lendFn == nil {
		c.lendFn = c.lend
	}
	c.block, c.lent = c.lendFn, false
	err := c.writeAll(pong)
	if err == nil {
		err = c.writeAll(ping)
	}
	if c.lent {
		c.s.writers.giveBack()
	}
	return err
}

// frameLen returns the length (header and payload) of the websocket frame
// whose header p begins with, or false if p does not hold the whole
// header.
func frameLen(p []byte) (int64, bool) {
	if len(p) < 2 {
		return 0, false
	}
	h, n := 2, uint64(p[1]&0x7f)
	switch n {
	case 126:
		if len(p) < 4 {
			return 0, false
		}
		h, n = 4, uint64(binary.BigEndian.Uint16(p[2:]))
	case 127:
		if len(p) < 10 {
			return 0, false
		}
		h, n = 10, binary.BigEndian.Uint64(p[2:])
	}
	if p[1]&0x80 != 0 {
		h += 4 // a mask (a client's frame)
	}
	if n > 1<<62 {
		return 0, false
	}
	return int64(h) + int64(n), true
}

// lend is a frame of others' block: it is about to wait for the peer
// while holding coder/websocket's frame lock.
func (c *leanConn) lend() {
	c.s.writers.lend()
	c.lent = true
}

// writeAll writes b through the poller, as net.Conn's Write does, but
// calls block (if set) once, before the first wait for a full socket. The
// caller holds wmu.
func (c *leanConn) writeAll(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if c.head != nil {
		// The first write: the 101 held back goes first, in the same
		// syscall, from a pooled buffer (a storm's worth of fresh ones
		// would be garbage at once).
		bp := c.s.bufs.Get().(*[]byte)
		buf := append(append((*bp)[:0], c.head...), b...)
		c.head = nil
		err := c.writeAll(buf)
		if cap(buf) <= maxPooledMessage {
			*bp = buf[:0]
			c.s.bufs.Put(bp)
		}
		return err
	}
	if c.writeFn == nil {
		c.writeFn = c.writeFD
	}
	c.unsent, c.writeErr = b, nil
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
			if c.block != nil {
				c.block()
				c.block = nil
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
func (wc *conn) write(buf []byte) error {
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
