package hub

import (
	"context"
	"slices"

	"albedo/db"
	"albedo/hub/access"
	"albedo/wire"
)

// Read markers: the offset each person has read up to in each session,
// stored, so that their unread counts agree across their devices. A
// person is their author id (a member, a guest); a link's viewers share
// one, and have none.

// readerOf is p's key in the store, or a refusal.
func readerOf(p access.Principal) (string, error) {
	if p.Role == wire.TokenViewer || p.Role == wire.TokenBot {
		return "", wire.Errorf(wire.CodeForbidden, "a %s token has no read marker: it is no one person's", p.Role)
	}
	return p.AuthorID(), nil
}

// SetRead sets p's read marker in session to offset (at most the head),
// and tells p's other connections that follow the session at once.
func (h *Hub) SetRead(ctx context.Context, p access.Principal, session string, offset int64) error {
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
	_, unread, err := h.db.Unread(ctx, who, session)
	if err != nil {
		return wireErr(err)
	}
	h.pushRead(who, session, offset, unread)
	h.changed()
	return nil
}

// ReadOf returns p's read marker in session (0: none yet).
func (h *Hub) ReadOf(ctx context.Context, p access.Principal, session string) (int64, error) {
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

// pushRead sends a read push to the connections of who on this node
// that follow session or the sessions feed.
func (h *Hub) pushRead(who, session string, offset int64, unread int) {
	var conns []*Conn
	if ch := h.served(session); ch != nil {
		ch.mu.Lock()
		for _, s := range ch.subList() {
			if s.conn.info.AuthorID == who {
				conns = append(conns, s.conn)
			}
		}
		ch.mu.Unlock()
	}
	h.feed.mu.Lock()
	for c := range h.feed.conns {
		if c.info.AuthorID == who && !slices.Contains(conns, c) {
			conns = append(conns, c)
		}
	}
	h.feed.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	frame := wire.Encode(wire.ReadPush{Op: wire.PushRead, Session: session, Offset: offset, Unread: unread})
	for _, c := range conns {
		c.mu.Lock()
		cur := c.feed
		c.mu.Unlock()
		if cur != nil {
			cur.counts.forget(session)
		}
		c.Reply(frame)
	}
}

// readElsewhere tells this node's connections of who that they set their
// read marker in session on another node.
func (h *Hub) readElsewhere(ctx context.Context, who, session string) error {
	off, unread, err := h.db.Unread(ctx, who, session)
	if err != nil {
		return err
	}
	h.pushRead(who, session, off, unread)
	return nil
}
