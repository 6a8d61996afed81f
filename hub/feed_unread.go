package hub

import (
	"context"
	"sync"

	"albedo/wire"
)

// A person's unread count in a session is read from the store (their read
// marker, and the messages after it) the first time a connection's feed
// says the session; after that, while this node has counted every message
// committed to it since (feedEntry.msgs, in one msgsGen), it is that count
// plus the messages since, with no read of the store. A feed therefore
// costs the store nothing for the sessions a person does not open, however
// busy they are.

// maxUnreadKept bounds the counts a connection keeps: past it they are
// all forgotten, and read again as they are needed.
const maxUnreadKept = 4096

// unreadKept is one count: the marker and the unread messages after it,
// when the session's entry counted msgs messages in generation gen.
type unreadKept struct {
	gen, msgs uint64
	read      int64
	unread    int
}

// unreadCounts are a connection's counts, by session.
type unreadCounts struct {
	mu      sync.Mutex
	m       map[string]unreadKept
	forgets uint64 // counts forget: a count read from the store before one is not kept
}

// of returns reader's read marker and unread count in e's session.
func (u *unreadCounts) of(ctx context.Context, h *Hub, reader string, e *feedEntry) (read int64, unread int) {
	var forgets uint64
	if u != nil {
		u.mu.Lock()
		k, ok := u.m[e.id]
		forgets = u.forgets
		u.mu.Unlock()
		if ok && k.gen == e.msgsGen && e.msgs >= k.msgs {
			return k.read, min(k.unread+int(e.msgs-k.msgs), wire.MaxUnread)
		}
	}
	// Up to the entry's head: the messages after it are those e.msgs
	// counts once this count is kept, so none is counted twice.
	read, unread, err := h.db.UnreadUpTo(ctx, reader, e.id, e.head)
	if err != nil || u == nil {
		return read, unread
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.forgets != forgets {
		return read, unread // a marker moved meanwhile: this count may be older
	}
	if u.m == nil || len(u.m) >= maxUnreadKept {
		u.m = map[string]unreadKept{}
	}
	u.m[e.id] = unreadKept{gen: e.msgsGen, msgs: e.msgs, read: read, unread: unread}
	return read, unread
}

// forget drops the count of a session whose read marker moved.
func (u *unreadCounts) forget(session string) {
	u.mu.Lock()
	delete(u.m, session)
	u.forgets++
	u.mu.Unlock()
}
