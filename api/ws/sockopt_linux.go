package ws

import (
	"crypto/tls"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// Unread says whether c has bytes in its socket that nobody has read
// (TIOCINQ; FIONREAD elsewhere): the peer sent them, the process has not
// got to them. The accept gate keeps such a fresh connection; the
// heartbeat spares such a websocket.
func Unread(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n > 0
}

// unsentLowWater is how many bytes a websocket's socket holds that TCP
// has not sent yet before a write waits (TCP_NOTSENT_LOWAT). Left to
// itself the kernel queues megabytes for a peer that reads slowly, and a
// pong written behind them reaches the peer seconds after its ping; at
// this mark a pong waits behind about one batch. Bytes sent and not yet
// acknowledged are not counted: it does not hold back a fast peer.
const unsentLowWater = 128 << 10

// lowWater sets the socket's unsentLowWater. A socket that refuses keeps
// the kernel's queue.
func lowWater(raw syscall.RawConn) {
	raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, unsentLowWater)
	})
}
