package term

// Pins: the sessions a person keeps at the top of the sidebar, on every
// device (docs/protocol.md, "Pinned and archived sessions"). /pin and
// /unpin pin and unpin the session in front; the feed marks what is
// pinned (FeedItem.Pinned) and says a session again when it is pinned or
// unpinned anywhere, so each of the person's terminals shows the pinned
// first, marked ★. A link's viewer pins nothing.

// pinMark is a pinned session's mark in the sidebar, before its name.
const pinMark = "★"

// The Cmd and result of a pin.
type (
	cmdPin struct {
		Session string
		Pin     bool // false: unpin
	}
	resPinned struct {
		Session string
		Pin     bool
		Err     error
	}
)

func (cmdPin) isCmd() {}

// pinCommands are /pin and /unpin.
var pinCommands = []slashCommand{
	{"/pin", "keep this session first in the sidebar, ★, on every device", func(m *Model, _ string) []Cmd {
		return m.pinFocused(true)
	}},
	{"/unpin", "let it take its place by activity again", func(m *Model, _ string) []Cmd {
		return m.pinFocused(false)
	}},
}

// mayPin: a person (not a link's viewer) with a session in front.
func mayPin(m *Model) bool { return !m.ReadOnly && m.Focused() != nil }

// pinFocused pins or unpins the focused session.
func (m *Model) pinFocused(pin bool) []Cmd {
	s := m.Focused()
	switch {
	case pin && s.Pinned:
		m.notify(false, "“"+s.name()+"” is pinned already: /unpin lets it go")
		return nil
	case !pin && !s.Pinned:
		m.notify(false, "“"+s.name()+"” is not pinned")
		return nil
	}
	return []Cmd{cmdPin{Session: s.ID, Pin: pin}}
}

// pinned takes a pin's result: the session moves to its place at once,
// before the feed says it again.
func (m *Model) pinned(r resPinned) {
	s := m.session(r.Session)
	name := r.Session
	if s != nil {
		name = s.name()
	}
	if r.Err != nil {
		what := "not pinned: "
		if !r.Pin {
			what = "not unpinned: "
		}
		m.notify(true, what+spoken(r.Err))
		return
	}
	if s != nil {
		s.Pinned = r.Pin
		m.resort()
	}
	if r.Pin {
		m.notify(false, "“"+name+"” pinned: first in the sidebar, on your every device")
	} else {
		m.notify(false, "“"+name+"” unpinned")
	}
}

// pinsFirst orders pinned sessions before the others.
func pinsFirst(a, b *SessionView) int {
	switch {
	case a.Pinned == b.Pinned:
		return 0
	case a.Pinned:
		return -1
	}
	return 1
}
