package hub

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"albedo/db"
	"albedo/wire"
)

// The sessions feed (docs/protocol.md, "The sessions feed") tells a
// client what its sidebar shows of every session, without a subscription
// to each. The hub keeps an index of every session in memory, read from
// the store when a connection first asks for the feed: what a sidebar
// shows of it, and a number (seq) that grows with every change. It is
// kept up to date by this node's commits, and on a cluster by a look at
// the store every feedPollEvery for what other nodes changed. Each
// connection that follows the feed is a cursor over those numbers
// (feed_conn.go), never a queue: a change made while a connection is
// behind replaces the one before it, and what it is sent is the session
// as it is when it is sent.

// feedRingSize is how many changes the index remembers in order: a cursor
// further behind finds its changes by a walk of the whole index.
const feedRingSize = 4096

// maxLastJSON is the largest newest message the index keeps as it was
// committed, to be shortened when a feed first shows it; a larger one is
// read again from the store then.
const maxLastJSON = 4 << 10

// feedEntry is one session in the index. Guarded by feed.mu.
type feedEntry struct {
	id       string
	title    string
	provider string // the session's own ("" for the default)
	head     int64
	at       time.Time // last activity
	lastTurn string
	parent   *wire.ForkPoint // a fork's (nil for a session that is no fork)
	archived bool            // out of the feed's pages; a push says so once
	seq      uint64          // the change that made it what it is
	gone     bool            // deleted (a tombstone)
	// msgs counts the messages this node committed to it since msgsGen
	// began, which a new generation starts whenever messages may have
	// come that it did not count (another node's): a connection's unread
	// count known at one count goes up by the messages since (unread.go).
	msgs, msgsGen uint64

	last      *wire.FeedLast // the newest message, shortened; nil for none
	lastJSON  []byte         // or the newest message as committed, not yet shortened
	lastKnown bool           // last (or lastJSON) is the newest message as of head
}

// feedChange is one change in the ring: the session it changed, and its
// number.
type feedChange struct {
	seq uint64
	id  string
}

// feed is the hub's index of sessions for the feed.
type feed struct {
	h *Hub

	load sync.Mutex // held while the index is read from the store

	mu      sync.Mutex
	ready   bool
	boot    string // numbers are this index's own: a resume by number needs the same boot
	seq     uint64
	entries map[string]*feedEntry
	ring    []feedChange // the newest changes, in order
	conns   map[*Conn]struct{}
	// polled is the time of the store up to which other nodes' changes
	// are in the index (a cluster's; zero on SQLite, which has no other
	// node).
	polled time.Time
	// pending are the sessions this node changed while the index was
	// being read: they are read again once it is.
	pending map[string]bool
}

// ensure reads the index from the store if it has not been read yet.
func (f *feed) ensure(ctx context.Context) error {
	f.mu.Lock()
	ready := f.ready
	f.mu.Unlock()
	if ready {
		return nil
	}
	f.load.Lock()
	defer f.load.Unlock()
	f.mu.Lock()
	if f.ready {
		f.mu.Unlock()
		return nil
	}
	f.pending = map[string]bool{}
	f.mu.Unlock()
	started := time.Now()
	ss, err := f.h.db.AllSessions(ctx)
	if err != nil {
		return err
	}
	ts, err := f.h.db.Tombstones(ctx, started.Add(-db.KeepTombstones))
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.entries = make(map[string]*feedEntry, len(ss)+len(ts))
	for _, t := range ts {
		f.entries[t.ID] = &feedEntry{id: t.ID, at: t.At, gone: true}
	}
	for _, s := range ss {
		f.entries[s.ID] = entryOf(s)
	}
	// Every entry gets a number of its own, oldest activity first: a
	// cursor from before this index (a resume by time) finds them all
	// past it.
	all := slices.SortedFunc(maps.Values(f.entries), func(a, b *feedEntry) int { return a.at.Compare(b.at) })
	for _, e := range all {
		f.seq++
		e.seq = f.seq
	}
	pending := f.pending
	f.pending = nil
	f.ready = true
	f.boot = randomID(6)
	if f.h.db.Shared() {
		f.polled = started.Add(-feedOverlap)
		f.h.goTracked(f.poll)
	}
	f.mu.Unlock()
	for id := range pending {
		f.reread(ctx, id)
	}
	return nil
}

// entryOf is a stored session as the index holds it; its newest message
// is read when a feed first shows it.
func entryOf(s db.Session) *feedEntry {
	at, _ := time.Parse(time.RFC3339Nano, s.UpdatedAt)
	return &feedEntry{id: s.ID, title: s.Title, provider: s.Provider, head: s.Head, at: at, lastTurn: s.LastTurn, parent: s.ForkPoint(), archived: s.Archived}
}

// changed applies f to the session's entry (made if it is new) and
// numbers the change, waking the connections that follow the feed. Before
// the index is read it notes the session, to be read again after.
func (f *feed) changed(id string, apply func(e *feedEntry)) {
	f.mu.Lock()
	if !f.ready {
		if f.pending != nil {
			f.pending[id] = true
		}
		f.mu.Unlock()
		return
	}
	e := f.entries[id]
	if e == nil {
		e = &feedEntry{id: id}
		f.entries[id] = e
	}
	apply(e)
	f.seq++
	e.seq = f.seq
	f.ring = append(f.ring, feedChange{seq: f.seq, id: id})
	if len(f.ring) >= 2*feedRingSize {
		f.ring = append(f.ring[:0], f.ring[len(f.ring)-feedRingSize:]...)
	}
	conns := make([]*Conn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.feedDue()
	}
}

// committed takes this node's commit of events into a session.
func (f *feed) committed(c db.Committed, at time.Time) {
	if len(c.Events) == 0 {
		return
	}
	f.changed(c.Session, func(e *feedEntry) {
		e.gone = false
		e.head = c.Events[len(c.Events)-1].Offset
		e.at = at
		for _, ev := range c.Events {
			switch ev.Type {
			case wire.EventTurn:
				e.lastTurn = metaOf(ev).State
			case wire.EventMessage:
				e.msgs++
				e.last, e.lastJSON, e.lastKnown = nil, nil, false
				if len(ev.JSON) <= maxLastJSON {
					e.lastJSON, e.lastKnown = ev.JSON, true
				}
			}
		}
	})
}

// session takes a session's settings (made, or patched) as stored.
func (f *feed) session(s db.Session) {
	f.changed(s.ID, func(e *feedEntry) {
		n := entryOf(s)
		e.gone, e.title, e.provider, e.parent, e.archived = false, n.title, n.provider, n.parent, n.archived
		if n.head > e.head {
			e.head, e.lastKnown = n.head, false
			e.msgsGen++
		}
		if n.at.After(e.at) {
			e.at = n.at
		}
	})
}

// gone marks a deleted session.
func (f *feed) gone(id string) {
	f.changed(id, func(e *feedEntry) {
		*e = feedEntry{id: id, at: time.Now(), gone: true, msgsGen: e.msgsGen + 1}
	})
}

// touch numbers a change to what only the hub knows of a session (its
// run state, who may see it), so that the feed says it again.
func (f *feed) touch(id string) {
	f.mu.Lock()
	e := f.entries[id]
	known := f.ready && e != nil && !e.gone
	f.mu.Unlock()
	if known {
		f.changed(id, func(*feedEntry) {})
	}
}

// reread reads a session from the store into the index: it is there or
// it is gone.
func (f *feed) reread(ctx context.Context, id string) {
	s, err := f.h.db.Session(ctx, id)
	switch {
	case err == nil:
		f.session(s)
	case errors.Is(err, db.ErrNotFound):
		f.gone(id)
	}
}

// accessChanged follows a member's access to a session: a feed of theirs
// says it gone when they lose it, and says it again when it changes.
func (f *feed) accessChanged(member, session string, now wire.Access) {
	if now != "" {
		f.touch(session)
		return
	}
	f.mu.Lock()
	var conns []*Conn
	for c := range f.conns {
		if c.info.AuthorID == member && c.info.Role == wire.TokenMember {
			conns = append(conns, c)
		}
	}
	f.mu.Unlock()
	for _, c := range conns {
		c.feedLost(session)
	}
}

// listen makes c one of the connections the feed wakes.
func (f *feed) listen(c *Conn) {
	f.mu.Lock()
	if f.conns == nil {
		f.conns = map[*Conn]struct{}{}
	}
	f.conns[c] = struct{}{}
	f.mu.Unlock()
}

// forget stops waking c (it closed).
func (f *feed) forget(c *Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
}
