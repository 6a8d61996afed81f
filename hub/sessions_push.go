package hub

import (
	"maps"
	"slices"

	"albedo/wire"
)

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
// deleted (owner tokens; the API checks). A connection closed meanwhile
// stays out: Close has taken it from the hub's connections, and from
// their listeners.
func (c *Conn) ListenSessions() {
	h := c.hub
	h.mu.Lock()
	if _, live := h.conns[c]; live {
		h.listeners[c] = struct{}{}
	}
	h.mu.Unlock()
}

// sessionsChanged marks the sessions push due on every connection that
// listens, here: a session was made or deleted, on this node or (by its
// notice) on another. Only the listeners are looked at, however many
// other connections (a crowd of viewers) the node holds.
func (h *Hub) sessionsChanged() {
	h.mu.Lock()
	listeners := slices.Collect(maps.Keys(h.listeners))
	h.mu.Unlock()
	for _, c := range listeners {
		c.mu.Lock()
		due := !c.closed
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
