package ws

import (
	"net"
	"os"
	"syscall"
	"unsafe"
)

// A connection's reader spends most of its life waiting for the peer's
// next message. Under coder/websocket's reader that wait is 16 frames
// deep, and the runtime keeps a goroutine's stack at the size its
// deepest wait needs: 4 KiB for every idle connection. await waits a few
// frames deep instead, where 2 KiB holds it, and hands over to the
// library once a frame begins to arrive. It can, because inFrames keeps
// the library's bufio.Reader from holding bytes of a frame it has not
// begun: at a boundary, whatever comes next is the socket's or pending.
//
// A heartbeat's pong would take the reader under the library's reader
// again (it reads the pong and waits on for a message there), so await
// takes whole pongs out of what it reads, counts them, and tells the
// heartbeat (conn.pingPeer). A pong not whole yet, and every other
// frame, is the library's to read.

// await returns once bytes of the peer's next frame, other than a pong,
// have been read (they wait in pending, where the library's next Read
// takes them), or the socket has failed or ended (the library's read
// then says how), or at once if the library is in a frame or bytes wait
// read. The reader calls it before each message.
func (c *leanConn) await() {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.awaitFn == nil {
		c.awaitFn = c.awaitFD
	}
	for len(c.pending) == 0 && c.in.atBoundary() && c.broken == nil {
		c.pongsRead = 0
		err := c.raw.Read(c.awaitFn)
		for ; c.pongsRead > 0; c.pongsRead-- {
			c.pongRead()
		}
		if err != nil || c.awaitDone {
			return
		}
	}
}

// pongRead counts a pong read, by await or the library's reader
// (OnPongReceived), and tells the heartbeat waiting for it. A send on a
// buffered channel goes no deeper into the reader's stack than await's
// own wait.
func (c *leanConn) pongRead() {
	c.pongs.Add(1)
	if ch := c.onPong.Load(); ch != nil {
		select {
		case *ch <- struct{}{}:
		default:
		}
	}
}

// awaitFD is await's read of the socket, which the poller calls until it
// returns true, as fill's readFD is: false while nothing has arrived;
// true once something has, with the whole pongs it begins with taken
// out and counted (pongsRead), and the rest in pending. awaitDone says
// whether await is done: not if pongs were all there was. It runs at the
// deepest point of the reader's wait and keeps to a few bytes of its
// stack.
func (c *leanConn) awaitFD(fd uintptr) bool {
	bp := leanReadBufs.Get().(*[]byte)
	var n uintptr
	var e syscall.Errno
	for {
		n, _, e = syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&(*bp)[0])), uintptr(len(*bp)))
		if e != syscall.EINTR {
			break
		}
	}
	if e == syscall.EAGAIN {
		leanReadBufs.Put(bp)
		return false // not readable yet: the poller waits, with no buffer held
	}
	c.awaitDone = true
	if e != 0 || n == 0 {
		leanReadBufs.Put(bp)
		if e != 0 {
			c.broken = &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", e)}
		}
		return true // the socket failed, or the peer is gone: the library's Read says so
	}
	b := (*bp)[:n]
	for len(b) >= 2 {
		l := pongLen(b[0], b[1])
		if l == 0 || len(b) < l {
			break
		}
		b = b[l:]
		c.pongsRead++
	}
	if len(b) == 0 {
		leanReadBufs.Put(bp)
		c.awaitDone = false // pongs only: await tells the heartbeat and reads again
		return true
	}
	c.rbuf, c.pending = bp, b
	return true
}

// pongLen is the length of the frame whose first bytes are b0 and b1 if
// it is a pong a client may send (final, masked, no extension's bits),
// else 0.
func pongLen(b0, b1 byte) int {
	if b0 != 0x80|0xa || b1&0x80 == 0 || b1&0x7f > 125 {
		return 0
	}
	return 2 + 4 + int(b1&0x7f)
}
