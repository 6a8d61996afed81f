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
