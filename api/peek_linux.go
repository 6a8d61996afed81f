package api

import (
	"net"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// peekSize is how much of a connection's first bytes peekRequest looks
// at: a header larger than this that has not ended counts as whole (it
// is no flood of single bytes), and net/http bounds it.
const peekSize = 8 << 10

var peekBufs = sync.Pool{New: func() any { b := make([]byte, peekSize); return &b }}

// peekRequest looks, without reading them, at the bytes waiting in c's
// socket: whether they hold a request's header whole, part of one, or
// nothing that says (none yet, or a TLS handshake's).
func peekRequest(c net.Conn) headerSeen {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return headerUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return headerUnknown
	}
	bp := peekBufs.Get().(*[]byte)
	defer peekBufs.Put(bp)
	n := 0
	rc.Control(func(fd uintptr) {
		n, _, err = unix.Recvfrom(int(fd), *bp, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	})
	if err != nil || n <= 0 {
		return headerUnknown
	}
	return classifyHeader((*bp)[:n], n == peekSize)
}
