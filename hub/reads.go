package hub

import (
	"context"

	"albedo/db"
	"albedo/wire"
)

// Read markers: the offset each person has read up to in each session,
// stored, so that their unread counts agree across their devices. A
// person is their author id (a member, a guest); a link's viewers share
// one, and have none.

// readerOf is p's key in the store, or a refusal.
func readerOf(p Principal) (string, error) {
	if p.Role == wire.TokenViewer || p.Role == wire.TokenBot {
		return "", wire.Errorf(wire.CodeForbidden, "a %s token has no read marker: it is no one person's", p.Role)
	}
	return p.AuthorID(), nil
}

// SetRead sets p's read marker in session to offset (at most the head),
// and tells p's other connections that follow the session at once.
func (h *Hub) SetRead(ctx context.Context, p Principal, session string, offset int64) error {
	who, err := readerOf(p)
	if err != nil {
		return err
	}
	if offset < 0 {
		return wire.Errorf(wire.CodeBadRequest, "offset must be 0 or more")
	}
	_, err = h.db.Writer().Do(ctx, func(tx *db.Tx) error {
		head, err := tx.Head(ctx, session)
		if err != nil {
			return err
		}
		if offset > head {
			return wire.Errorf(wire.CodeBadRequest, "offset %d is past the session's head (%d)", offset, head)
		}
		return tx.SetRead(ctx, who, session, offset)
	})
	if err != nil {
		return wireErr(err)
	}
	h.pushRead(who, session, offset)
	return nil
}

// ReadOf returns p's read marker in session (0: none yet).
func (h *Hub) ReadOf(ctx context.Context, p Principal, session string) (int64, error) {
	who, err := readerOf(p)
	if err != nil {
		return 0, err
	}
	if _, err := h.db.Session(ctx, session); err != nil {
		return 0, wireErr(err)
	}
	off, err := h.db.ReadOf(ctx, who, session)
	return off, wireErr(err)
}

// pushRead sends a read push to the connections of who on this node that
// follow session.
func (h *Hub) pushRead(who, session string, offset int64) {
	ch := h.served(session)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	subs := ch.subList()
	ch.mu.Unlock()
	var frame []byte
	for _, s := range subs {
		c := s.conn
		if c.info.AuthorID != who {
			continue
		}
		if frame == nil {
			frame = wire.Encode(wire.ReadPush{Op: wire.PushRead, Session: session, Offset: offset})
		}
		c.mu.Lock()
		if c.subs[session] == s {
			c.queueReply(frame)
		}
		c.mu.Unlock()
		c.signal()
	}
}
