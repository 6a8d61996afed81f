package hub

import "albedo/wire"

// Connections that list sessions (the terminal's sidebar, the page's list)
// ask in hello to hear when that list changes: a session made or deleted
// on any node. What they get is a sessions push, `{"op":"sessions"}`,
// which says only "list again": a flag per connection, set however many
// sessions change before the writer takes it, so it costs nothing to hold
// for a connection that reads slowly, and one push covers a burst.

// sessionsFrame is the push itself.
var sessionsFrame = wire.Encode(struct {
	Op wire.Op `json:"op"`
}{wire.PushSessions})

// ListenSessions makes the connection one that hears of sessions made and
// deleted (owner tokens; the API checks).
func (c *Conn) ListenSessions() {
	c.mu.Lock()
	c.listens = true
	c.mu.Unlock()
}

// sessionsChanged marks the sessions push due on every connection that
// listens, here: a session was made or deleted, on this node or (by its
// notice) on another.
func (h *Hub) sessionsChanged() {
	for _, c := range h.Conns() {
		c.mu.Lock()
		due := c.listens && !c.closed
		c.sessionsDue = c.sessionsDue || due
		c.mu.Unlock()
		if due {
			c.signal()
		}
	}
}

// takeSessionsPush appends the sessions push to buf if one is due and fits.
func (c *Conn) takeSessionsPush(buf []byte, limit int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionsDue && fits(buf, sessionsFrame, limit) {
		c.sessionsDue = false
		buf = appendFrame(buf, sessionsFrame)
	}
	return buf
}
