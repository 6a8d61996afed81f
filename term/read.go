package term

import (
	"time"

	"albedo/wire"
)

// Read markers: the daemon stores how far each person has read each
// session, so that their devices agree. The terminal sets its person's
// marker to the end of the session in front of them, at most every
// readEvery while news comes in (and only while the window has the focus
// and the transcript follows its end); a read push says they read it
// elsewhere, and its unread count starts after that.

// readEvery is how often at most the terminal sets a marker.
const readEvery = time.Second

// MarkRead returns the Cmd that sets the read marker of the session in
// front of the person, when it has moved on since the last; the App asks
// on every tick.
func (m *Model) MarkRead() []Cmd {
	s := m.Focused()
	if s == nil || m.ReadOnly || !m.TermFocused || !s.Follow || !s.caughtUp() {
		return nil
	}
	last := s.Events[len(s.Events)-1].Offset
	if last <= s.readSent || m.Now().Sub(s.readAt) < readEvery {
		return nil
	}
	s.readSent, s.readAt = last, m.Now()
	return []Cmd{cmdRead{Session: s.ID, Offset: last}}
}

// readElsewhere applies a read push: the person read s up to offset (on
// this device or another), so its unread messages are those after it.
func (m *Model) readElsewhere(s *SessionView, offset int64) {
	s.readSent = max(s.readSent, offset)
	if s == m.Focused() {
		return
	}
	n := 0
	for _, ev := range s.Events {
		if ev.Type == wire.EventMessage && ev.Offset > offset && s.news(ev) {
			n++
		}
	}
	s.Unread = min(s.Unread, n)
}
