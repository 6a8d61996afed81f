package term

import (
	"slices"

	"albedo/client"
	"albedo/wire"
)

// The sidebar comes from the sessions feed: a line for every session the
// person may see, kept live by the daemon, without a subscription for
// each. Only the session in front of the person, and the few they looked
// at last, are subscribed (App.syncSubs); the feed's unread counts are
// the store's, so they agree with the person's other devices.

// Feed applies what the feed says: a first page (the sidebar starts
// again, but for the session in front of the person), sessions changed or
// gone, or a read marker set elsewhere. It returns the notifications
// that sessions' changes call for.
func (m *Model) Feed(u client.FeedUpdate) []Cmd {
	if u.Read != nil {
		if s := m.session(u.Read.Session); s != nil {
			s.readSent = max(s.readSent, u.Read.Offset)
			if s != m.Focused() {
				s.Unread = u.Read.Unread
			}
		}
		return nil
	}
	if u.Start {
		keep := m.Focused()
		m.Sessions = slices.DeleteFunc(m.Sessions, func(s *SessionView) bool { return s != keep })
		m.Focus = slices.Index(m.Sessions, keep)
		m.feedNext = u.Next
	}
	cmds := m.feedItems(u.Sessions)
	for _, id := range u.Gone {
		if s := m.session(id); s != nil {
			how := wire.ResetDeleted
			if slices.Contains(u.Revoked, id) {
				how = wire.ResetRevoked
			}
			m.loseToFeed(s, how)
		}
	}
	return append(cmds, m.versionsFeed(u.Sessions, u.Gone)...)
}

// feedItems puts the feed's items into the sidebar; an archived one
// leaves it (archive.go). A session the feed
// alone follows (no subscription brings its events) that comes to wait
// for a decision is news to notify of: its tool_call is not seen here.
func (m *Model) feedItems(items []wire.FeedItem) []Cmd {
	var cmds []Cmd
	for _, it := range items {
		s := m.session(it.ID)
		if it.Archived {
			m.archivedElsewhere(s)
			continue
		}
		known := s != nil
		if s == nil {
			s = &SessionView{ID: it.ID, Follow: true}
			m.Sessions = append(m.Sessions, s)
		}
		s.Title, s.Provider, s.LastTurn, s.Parent, s.Access = it.Title, it.Provider, it.LastTurn, it.Parent, it.Access
		s.Pinned, s.Archived = it.Pinned, false
		if !s.subscribed {
			if known && s.Phase != wire.PhaseApproval && it.Phase == wire.PhaseApproval {
				cmds = append(cmds, m.decisionNeeded(s, "a tool call waits for your decision")...)
			}
			s.Phase, s.Queued = it.Phase, it.Queued
		}
		s.Last = it.Last
		s.readSent = max(s.readSent, it.Read)
		if s != m.Focused() {
			s.Unread = it.Unread
		}
		if it.At.After(s.LastActivity) {
			s.LastActivity = it.At
		}
	}
	m.resort()
	if m.Focus < 0 && len(m.Sessions) > 0 {
		m.setFocus(0)
	}
	return cmds
}

// FeedPage adds a later page of the feed to the sidebar.
func (m *Model) FeedPage(r wire.FeedReply) {
	m.feedNext, m.feedPaging = r.Next, false
	m.feedItems(r.Sessions)
}

// WantMore says whether the sidebar should read the feed's next page: the
// focus is near the end of what it holds, and there is more. It returns
// the page's cursor, once until the page comes.
func (m *Model) WantMore() (cursor string, ok bool) {
	if m.feedNext == "" || m.feedPaging || m.Focus < len(m.Sessions)-feedAhead {
		return "", false
	}
	m.feedPaging = true
	return m.feedNext, true
}

// feedAhead is how close to the end of the sidebar the focus comes before
// the next page is read.
const feedAhead = 20

// Recent returns the ids of the sessions to keep subscribed: the focused
// one first, then the last ones focused before it, at most keepSubs in
// all.
func (m *Model) Recent() []string {
	var out []string
	if s := m.Focused(); s != nil {
		out = append(out, s.ID)
	}
	for i := len(m.focused) - 1; i >= 0 && len(out) < keepSubs; i-- {
		if id := m.focused[i]; !slices.Contains(out, id) && m.session(id) != nil {
			out = append(out, id)
		}
	}
	return out
}

// keepSubs is how many sessions stay subscribed: the one in front of the
// person and those they looked at just before, for instant switching.
const keepSubs = 4

// noteFocus records that id was focused, for Recent.
func (m *Model) noteFocus(id string) {
	m.focused = slices.DeleteFunc(m.focused, func(s string) bool { return s == id })
	m.focused = append(m.focused, id)
	if len(m.focused) > 2*keepSubs {
		m.focused = slices.Delete(m.focused, 0, len(m.focused)-keepSubs)
	}
}

// Unsubscribed drops what the view held of a session no longer
// subscribed: its events come again with the next subscription's reset.
func (m *Model) Unsubscribed(id string) {
	if s := m.session(id); s != nil {
		s.subscribed = false
		s.Events, s.More, s.history = nil, false, 0
		s.calls, s.fetched, s.fetchedFor = toolIndex{}, nil, ""
		s.StreamTurn, s.StreamText = "", ""
		s.rerender()
	}
}

// Subscribed marks a session as subscribed: its run comes from its own
// status pushes, not the feed.
func (m *Model) Subscribed(id string) {
	if s := m.session(id); s != nil {
		s.subscribed = true
	}
}
