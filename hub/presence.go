package hub

import (
	"time"

	"albedo/wire"
)

// Presence is kept per channel as people, not connections: each identity
// (access.Principal.AuthorID) that watches, with its number of devices, in the
// order they came. Joins and leaves change a count; the push lists the
// first wire.MaxPresencePeople people and counts the rest, so that what
// one join costs each watcher is a frame of bounded size, whatever the
// audience, and the writers' coalescing (presenceEvery) bounds how often.

// person is one identity watching a channel.
type person struct {
	wire.Person
	typedAt time.Time // when its draft last changed; zero for never
	at      int       // its index in people.list
}

// people are a channel's watchers on this node, by identity.
type people struct {
	byID map[string]*person
	list []*person // in the order they came
}

// join counts one more device of info's identity.
func (ps *people) join(info ConnInfo) {
	if p := ps.byID[info.AuthorID]; p != nil {
		p.Devices++
		return
	}
	if ps.byID == nil {
		ps.byID = map[string]*person{}
	}
	p := &person{Person: wire.Person{ID: info.AuthorID, Name: info.Name, Role: info.Role, Devices: 1}, at: len(ps.list)}
	ps.byID[info.AuthorID] = p
	ps.list = append(ps.list, p)
}

// leave counts one device fewer; the last one takes the person out.
func (ps *people) leave(info ConnInfo) {
	p := ps.byID[info.AuthorID]
	if p == nil {
		return
	}
	if p.Devices--; p.Devices > 0 {
		return
	}
	delete(ps.byID, info.AuthorID)
	copy(ps.list[p.at:], ps.list[p.at+1:])
	ps.list[len(ps.list)-1] = nil
	ps.list = ps.list[:len(ps.list)-1]
	for _, q := range ps.list[p.at:] {
		q.at--
	}
	if len(ps.list) == 0 {
		ps.list = nil
	}
}

// typed marks an identity's draft as changed now, and says whether that
// changes what presence shows (it was not typing).
func (ps *people) typed(id string, now time.Time) bool {
	p := ps.byID[id]
	if p == nil {
		return false
	}
	was := typing(p.typedAt, now)
	p.typedAt = now
	return !was
}

// sent clears an identity's typing mark, and says whether presence
// showed it.
func (ps *people) sent(id string, now time.Time) bool {
	p := ps.byID[id]
	if p == nil || !typing(p.typedAt, now) {
		return false
	}
	p.typedAt = time.Time{}
	return true
}

func typing(at, now time.Time) bool {
	return !at.IsZero() && now.Sub(at) < wire.TypingMS*time.Millisecond
}

// first lists up to n people as the push shows them, and says how many
// there are in all.
func (ps *people) first(n int, now time.Time) ([]wire.Person, int) {
	out := make([]wire.Person, 0, min(n, len(ps.list)))
	for _, p := range ps.list[:min(n, len(ps.list))] {
		q := p.Person
		q.Typing = typing(p.typedAt, now)
		out = append(out, q)
	}
	return out, len(ps.list)
}

// presencePush is the channel's presence: this node's people first, then
// those other nodes of a cluster reported, an identity on several nodes
// once with its devices added up. Caller holds ch.mu.
func (ch *channel) presencePush(now time.Time) wire.PresencePush {
	list, total := ch.people.first(wire.MaxPresencePeople, now)
	viewers := ch.watching
	index := make(map[string]int, len(list))
	for i, p := range list {
		index[p.ID] = i
	}
	for _, rv := range ch.remoteViewers {
		viewers += rv.viewers
		total += rv.total
		for _, p := range rv.people {
			if i, ok := index[p.ID]; ok {
				list[i].Devices += p.Devices
				list[i].Typing = list[i].Typing || p.Typing
				total-- // counted by both nodes
				continue
			}
			if len(list) < wire.MaxPresencePeople {
				index[p.ID] = len(list)
				list = append(list, p)
			}
		}
	}
	return wire.PresencePush{Op: wire.PushPresence, Session: ch.id, People: list, More: max(total-len(list), 0), Viewers: viewers}
}

// Typed marks the connection's identity as typing in session, which it
// watches: the session's watchers get a presence push that says so.
// Repeats while it is marked push nothing; the push that clears the mark
// comes when it lapses.
func (c *Conn) Typed(session string) {
	if ch := c.markPeople(session, (*people).typed); ch != nil {
		c.hub.typingLapse(ch, c.info.AuthorID, wire.TypingMS*time.Millisecond)
	}
}

// Sent clears the connection's identity's typing mark in session, which
// it sends a message to: the mark would otherwise linger until it lapsed.
func (c *Conn) Sent(session string) { c.markPeople(session, (*people).sent) }

// markPeople applies mark to the connection's identity among the people
// of session, which it watches; when that changes what presence shows,
// the watchers are told, and it returns the channel (else nil).
func (c *Conn) markPeople(session string, mark func(ps *people, id string, now time.Time) bool) *channel {
	c.mu.Lock()
	s := c.subs[session]
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	ch := s.ch
	ch.mu.Lock()
	changed := mark(&ch.people, c.info.AuthorID, time.Now())
	if changed {
		ch.presence = nil
	}
	ch.mu.Unlock()
	if !changed {
		return nil
	}
	c.hub.viewersChanged(ch)
	return ch
}

// typingLapse pushes presence again once id's typing mark has lapsed,
// waiting on while it is renewed.
func (h *Hub) typingLapse(ch *channel, id string, after time.Duration) {
	time.AfterFunc(after, func() {
		ch.mu.Lock()
		var left time.Duration
		if p := ch.people.byID[id]; p != nil {
			left = time.Until(p.typedAt.Add(wire.TypingMS * time.Millisecond))
		}
		if left <= 0 {
			ch.presence = nil
		}
		ch.mu.Unlock()
		if left > 0 {
			h.typingLapse(ch, id, left)
			return
		}
		h.viewersChanged(ch)
	})
}

// People lists up to wire.MaxPeoplePage of the people watching session,
// which the connection subscribes to, from the from'th on (this node's in
// the order they came, then those other nodes listed), and the index of
// the page after ("0": none). ok is false without a subscription.
func (c *Conn) People(session string, from int) (_ []wire.Person, next int, ok bool) {
	c.mu.Lock()
	s := c.subs[session]
	c.mu.Unlock()
	if s == nil {
		return nil, 0, false
	}
	ch := s.ch
	ch.mu.Lock()
	defer ch.mu.Unlock()
	now := time.Now()
	all, _ := ch.people.first(len(ch.people.list), now)
	seen := make(map[string]bool, len(all))
	for _, p := range all {
		seen[p.ID] = true
	}
	for _, rv := range ch.remoteViewers {
		for _, p := range rv.people {
			if !seen[p.ID] {
				seen[p.ID] = true
				all = append(all, p)
			}
		}
	}
	if from >= len(all) {
		return []wire.Person{}, 0, true
	}
	end := min(from+wire.MaxPeoplePage, len(all))
	if end < len(all) {
		next = end
	}
	return all[from:end], next, true
}

// presencePerCursor is how much the interval between two markings of a
// channel's presence grows with each cursor on this node past the
// first presenceEvery's worth: a marking is a write to every cursor, so
// its cost grows with the audience as the interval does, and a crowd's
// presence takes a bounded share of a core whatever its size: 2 500
// writes a second while it changes, which is most of the time while a
// crowd forms or churns. The price is freshness: N viewers see it
// change every N × presencePerCursor (0.4 s at 1 000, 7.2 s at 18 000),
// which is as fresh as a list of that many people is read.
const presencePerCursor = 400 * time.Microsecond

// presenceInterval is the shortest time between two markings of ch's
// presence on its cursors (presenceSoon). Caller holds ch.mu.
func (ch *channel) presenceInterval() time.Duration {
	return max(presenceEvery, time.Duration(len(ch.subs))*presencePerCursor)
}

// presenceSoon marks presence and status due on every cursor of ch: at
// once if it has not been done in the last presenceInterval, else once
// when that has passed, for every change meanwhile. A crowd forming on one
// session then costs each join a count, and the audience one marking per
// interval, rather than one marking of every cursor per join, which made
// the joins of N connections cost N².
func (h *Hub) presenceSoon(ch *channel) {
	ch.mu.Lock()
	if ch.presenceDue {
		ch.mu.Unlock()
		return
	}
	wait := ch.presenceInterval() - time.Since(ch.presenceAt)
	if wait <= 0 {
		ch.presenceAt = time.Now()
		ch.mu.Unlock()
		h.presenceChanged(ch)
		return
	}
	ch.presenceDue = true
	ch.mu.Unlock()
	time.AfterFunc(wait, func() {
		ch.mu.Lock()
		ch.presenceDue, ch.presenceAt = false, time.Now()
		ch.mu.Unlock()
		h.presenceChanged(ch)
	})
}
