package ws

import "io"

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
// read. The reader calls it before each message. It reads as Read does
// (fill), then takes out and counts the whole pongs what it read begins
// with: the deepest point of its wait is fill's, a few frames under it.
func (c *leanConn) await() {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for len(c.pending) == 0 && c.in.atBoundary() && c.broken == nil {
		if err := c.fill(); err != nil {
			if err != io.EOF {
				c.broken = err // a socket's error comes once: every Read says it
			}
			return
		}
		for len(c.pending) >= 2 {
			l := pongLen(c.pending[0], c.pending[1])
			if l == 0 || len(c.pending) < l {
				break
			}
			c.pending = c.pending[l:]
			c.pongRead()
		}
		if len(c.pending) == 0 {
			leanReadBufs.Put(c.rbuf) // pongs only: await reads again
			c.rbuf = nil
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

// pongLen is the length of the frame whose first bytes are b0 and b1 if
// it is a pong a client may send (final, masked, no extension's bits),
// else 0.
func pongLen(b0, b1 byte) int {
	if b0 != 0x80|0xa || b1&0x80 == 0 || b1&0x7f > 125 {
		return 0
	}
	return 2 + 4 + int(b1&0x7f)
}
