package hub

import "albedo/wire"

// cutAccess ends the subscriptions to session of a member's connections
// once the member has no access to it (now ""): each gets a reset push
// with reason revoked. An access narrowed to read cuts nothing: every
// command is checked against the access of the moment (access.Principal.Access).
func (h *Hub) cutAccess(member, session string, now wire.Access) {
	if now != "" {
		return
	}
	ch := h.served(session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	subs := ch.subList()
	epoch := ch.epoch
	ch.mu.Unlock()
	var frame []byte
	for _, s := range subs {
		c := s.conn
		if c.info.AuthorID != member || c.info.Role != wire.TokenMember {
			continue
		}
		if frame == nil {
			frame = wire.Encode(wire.ResetPush{Op: wire.PushReset, Session: session, Epoch: epoch, Reason: wire.ResetRevoked})
		}
		c.mu.Lock()
		if c.subs[session] == s {
			c.dropLocked(s)
			c.queueReply(frame)
		}
		c.mu.Unlock()
		c.signal()
	}
	h.viewersChanged(ch)
}

// online counts this node's connections of author id, from their set:
// however many others (a crowd of viewers) are connected.
func (h *Hub) online(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.byAuthor[id])
}
