//go:build !linux

package ws

import (
	"net"
	"syscall"
)

// Unread says whether c has bytes in its socket that nobody has read.
// Elsewhere than on Linux it does not look: a fresh connection past the
// accept gate's grace is closed to make room whatever it sent, and a
// heartbeat's unanswered ping cuts a websocket whose reader waits.
func Unread(net.Conn) bool { return false }

// lowWater leaves the kernel's send queue as it is elsewhere than on
// Linux.
func lowWater(syscall.RawConn) {}
