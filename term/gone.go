package term

import (
	"errors"
	"slices"
	"strings"

	"albedo/client"
	"albedo/wire"
)

// Sessions that leave the sidebar while open elsewhere: deleted, or no
// longer this person's to see (a grant removed). The subscription's reset
// says which (reason deleted or revoked), and so does the feed, which may
// say it first (its revoked). Either way the status bar says what
// happened, and what was written there is kept.

// lose takes s out of the sidebar, as its subscription ended, and says
// why: how is wire.ResetDeleted or wire.ResetRevoked.
func (m *Model) lose(s *SessionView, how string) {
	kept := m.remove(s)
	m.sayLost(s.name(), how, kept)
}

// loseToFeed is lose for a session the feed says is gone. One unseen,
// with nothing written in it, goes quietly: its reset, if it comes (it
// was subscribed), still says why (lostWhy).
func (m *Model) loseToFeed(s *SessionView, how string) {
	focused := s == m.Focused()
	kept := m.remove(s)
	if focused || kept {
		m.sayLost(s.name(), how, kept)
		return
	}
	if m.lostNames == nil || len(m.lostNames) >= maxLostNames {
		m.lostNames = map[string]string{} // a reset that never came is forgotten
	}
	m.lostNames[s.ID] = s.name()
}

// maxLostNames bounds the names kept for resets still to come.
const maxLostNames = 64

// lostWhy says why a session the feed took away went, when its reset
// comes after: once, and only for a session the feed took away here.
func (m *Model) lostWhy(id, how string) {
	name, ok := m.lostNames[id]
	if !ok || how != wire.ResetDeleted && how != wire.ResetRevoked {
		return
	}
	delete(m.lostNames, id)
	m.sayLost(name, how, false)
}

// sayLost is the notice of a session gone (how: wire.ResetDeleted or
// wire.ResetRevoked); kept says a draft written there went to the inputs
// Up recalls.
func (m *Model) sayLost(name, how string, kept bool) {
	msg := "session “" + name + "” was deleted"
	if how == wire.ResetRevoked {
		msg = "your access to “" + name + "” was removed"
	}
	if kept {
		msg += "; what you wrote there is kept: Up in an empty composer recalls it"
	}
	m.notify(how != wire.ResetDeleted, msg)
}

// SubEnded records that a session's subscription ended (deleted, its
// access taken back, or the stream gave up).
func (m *Model) SubEnded(id string, err error) {
	if errors.Is(err, client.ErrUnavailable) || errors.Is(err, client.ErrStreamClosed) {
		return // the status bar says it
	}
	s := m.session(id)
	if s == nil {
		return
	}
	switch client.Code(err) {
	case wire.CodeNotFound:
		m.lose(s, wire.ResetDeleted) // deleted elsewhere: it leaves the sidebar
		return
	case wire.CodeForbidden:
		m.lose(s, wire.ResetRevoked) // its grant was taken back
		return
	}
	m.notify(true, "session “"+s.name()+"”: "+spoken(err))
}

// remove takes s out of the sidebar, keeping the focus on a neighbour. A
// draft written in s is not carried to the neighbour, where Enter would
// send it to other people: it goes to the inputs Up recalls. remove says
// whether there was one.
func (m *Model) remove(s *SessionView) bool {
	i := slices.Index(m.Sessions, s)
	if i < 0 {
		return false
	}
	draft := s.draft
	focused := m.Focus
	if focused == i {
		draft = m.Composer
		m.Focus = -1 // nothing to save the composer into
		m.Composer, m.Cursor = nil, 0
	}
	text := string(m.unfolded(draft))
	kept := strings.TrimSpace(text) != ""
	if kept {
		m.Sent = append(m.Sent, text)
		m.recall = len(m.Sent)
	}
	m.Sessions = slices.Delete(m.Sessions, i, i+1)
	switch {
	case focused == i:
		m.setFocus(min(i, len(m.Sessions)-1))
	case focused > i:
		m.Focus--
	}
	m.resort() // its forks, if any, go up to the top level
	return kept
}
