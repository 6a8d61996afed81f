//go:build !linux

package ws

// unread says whether the peer has sent bytes that sit in the socket, not
// read yet. Elsewhere than on Linux it does not look: a heartbeat's
// unanswered ping cuts the connection whatever the peer sent.
func (c *leanConn) unread() bool { return false }
