package term

import (
	"slices"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
)

// The sidebar's order, the focus with each session's draft, and the
// go-to filter.

// resort orders the sidebar: the pinned first (pins.go), each part by
// last activity, newest first; the focus stays on the session it was
// on. Activity is the time of a session's last committed event (the
// list's updated_at until its events arrive), the same for every client,
// so two terminals show one order; ties go to the newer id.
func (m *Model) resort() {
	cur := m.Focused()
	slices.SortStableFunc(m.Sessions, func(a, b *SessionView) int {
		if c := pinsFirst(a, b); c != 0 {
			return c
		}
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if cur != nil {
		m.Focus = slices.Index(m.Sessions, cur)
	}
}

// touch records activity in s at t and moves s to its place.
func (m *Model) touch(s *SessionView, t time.Time) {
	if !t.After(s.LastActivity) {
		return
	}
	s.LastActivity = t
	m.resort()
}

// setFocus moves the focus to Sessions[i] (-1: none). The composer holds
// the focused session's draft: the one being left keeps what was typed in
// it, and the one focused gives back its own, so a draft never follows
// the focus to another session. With no session focused before, what was
// typed stays in the composer.
func (m *Model) setFocus(i int) {
	if i == m.Focus && m.Focused() != nil {
		return
	}
	if cur := m.Focused(); cur != nil {
		cur.draft, cur.draftCursor = m.Composer, m.Cursor
		m.Composer, m.Cursor = nil, 0
	}
	m.Focus = i
	m.quitArmed = false // it was about the session left
	if s := m.Focused(); s != nil {
		m.noteFocus(s.ID)
		s.Unread = 0
		if s.draft != nil || len(m.Composer) == 0 {
			m.Composer, m.Cursor = s.draft, s.draftCursor
		}
		s.draft, s.draftCursor = nil, 0
	}
	m.recall = len(m.Sent)
}

// filter is the go-to line: the sessions whose title or id hold the query
// (any case), in sidebar order, one of them selected.
type filter struct {
	query []rune
	sel   int // index into the matches
}

func (m *Model) openFilter() []Cmd {
	m.filter = &filter{}
	return nil
}

// matches is the sidebar's sessions that f selects.
func (m *Model) matches() []*SessionView {
	if m.filter == nil {
		return m.Sessions
	}
	q := strings.ToLower(string(m.filter.query))
	var out []*SessionView
	for _, s := range m.Sessions {
		if strings.Contains(strings.ToLower(s.Title), q) || strings.Contains(s.ID, q) {
			out = append(out, s)
		}
	}
	return out
}

// filterKey is a key while the go-to line is open: typing narrows, Up and
// Down choose, Enter goes, Esc (or Ctrl-G again) closes.
func (m *Model) filterKey(ev *tcell.EventKey) []Cmd {
	f := m.filter
	switch ev.Key() {
	case tcell.KeyEscape, tcell.KeyCtrlG:
		m.filter = nil
	case tcell.KeyEnter:
		found := m.matches()
		m.filter = nil
		if f.sel < len(found) {
			m.setFocus(slices.Index(m.Sessions, found[f.sel]))
			m.Pane = paneComposer
		}
	case tcell.KeyUp:
		f.sel = max(f.sel-1, 0)
	case tcell.KeyDown:
		f.sel = min(f.sel+1, max(len(m.matches())-1, 0))
	case tcell.KeyCtrlQ:
		m.Quit = true
	default:
		if edited(&f.query, ev) {
			f.sel = 0
		}
	}
	return nil
}
