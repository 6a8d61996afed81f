package hub

import (
	"context"

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
// that follow session or the sessions feed: theirs alone, found by
// author, whatever the number of others.
func (h *Hub) pushRead(who, session string, offset int64, unread int) {
	var frame []byte
	for _, c := range h.authorConns(who) {
		c.mu.Lock()
		cur, follows := c.feed, c.subs[session] != nil
		c.mu.Unlock()
		if cur == nil && !follows {
			continue
		}
		if cur != nil {
			cur.counts.forget(session)
		}
		if frame == nil {
			frame = wire.Encode(wire.ReadPush{Op: wire.PushRead, Session: session, Offset: offset, Unread: unread})
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
