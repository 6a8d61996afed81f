package ws

import "golang.org/x/sys/unix"

// unread says whether the peer has sent bytes that sit in the socket,
// not read yet (TIOCINQ).
func (c *leanConn) unread() bool {
	n := 0
	c.raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n > 0
}
