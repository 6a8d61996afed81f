package term

import (
	"slices"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
)

// The sidebar's order, the focus with each session's draft, and the
// go-to filter.

// resort orders the sidebar as the page orders its list
// (web/static/listorder.js), so a person sees one order wherever they
// look: the pinned first (pins.go), each fork right after its parent, one
// step deeper (forks.go), and a family by its latest activity, a fork's
// included, so news in a fork brings its parent up with it. Activity is
// the time of a session's last committed event (the list's updated_at
// until its events arrive), the same for every client, so two terminals
// show one order; ties go to the newer id. The focus stays on the session
// it was on, and Up and Down go through the sessions in this order.
func (m *Model) resort() {
	cur := m.Focused()
	m.Sessions = families(m.Sessions)
	if cur != nil {
		m.Focus = slices.Index(m.Sessions, cur)
	}
}

// deepest is the deepest indentation the sidebar shows: forks of forks
// further down are indented no more, so that a title keeps room in the
// sidebar's few columns.
const deepest = 4

// families returns list in the sidebar's order, and sets each session's
// depth: how many of its ancestors it is shown under. A fork goes under
// its parent where the list holds the parent and the fork is not pinned
// (a pin puts it first, out from under its parent); else it is at the top
// level. It runs on every piece of news, so it sorts once and keeps its
// work in the sessions' own fields rather than in maps.
func families(list []*SessionView) []*SessionView {
	parents := map[string]*SessionView{} // the sessions forks in list name, once found
	for _, s := range list {
		s.forks, s.family, s.placed, s.depth = s.forks[:0], s.LastActivity, false, 0
		if p := s.Parent; p != nil && p.Session != s.ID && !s.Pinned {
			parents[p.Session] = nil
		}
	}
	if len(parents) > 0 {
		for _, s := range list {
			if _, ok := parents[s.ID]; ok {
				parents[s.ID] = s
			}
		}
	}
	under := func(s *SessionView) *SessionView { // the parent s is shown under, if any
		if p := s.Parent; p != nil && p.Session != s.ID && !s.Pinned {
			return parents[p.Session]
		}
		return nil
	}
	forks := 0
	for _, s := range list {
		if p := under(s); p != nil {
			p.forks, forks = append(p.forks, s), forks+1
		}
	}
	for _, s := range list {
		familyActivity(s)
	}
	slices.SortStableFunc(list, func(a, b *SessionView) int {
		if c := pinsFirst(a, b); c != 0 {
			return c
		}
		if c := b.family.Compare(a.family); c != 0 {
			return c
		}
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if forks == 0 {
		return list
	}
	// Each session's forks again, now in the sidebar's order.
	for _, s := range list {
		s.forks, s.placed = s.forks[:0], false
	}
	for _, s := range list {
		if p := under(s); p != nil {
			p.forks = append(p.forks, s)
		}
	}
	out := make([]*SessionView, 0, len(list))
	var walk func(s *SessionView, depth int)
	walk = func(s *SessionView, depth int) {
		if s.placed {
			return
		}
		s.placed, s.depth = true, depth
		out = append(out, s)
		for _, f := range s.forks {
			walk(f, depth+1)
		}
	}
	for _, s := range list {
		if under(s) == nil {
			walk(s, 0)
		}
	}
	// Sessions whose parents make a loop (never from the daemon, whose
	// forks are made after their parents) have no way down from the top
	// level: they come to it rather than go missing.
	for _, s := range list {
		walk(s, 0)
	}
	return out
}

// familyActivity sets s.family to the latest activity of s and the forks
// under it, at any depth. A loop of parents is cut where it is first met;
// the sessions are visited in list order, so the times come out the same
// whatever the sort asks first.
func familyActivity(s *SessionView) time.Time {
	if s.placed { // here: worked out, or being worked out up a loop
		return s.family
	}
	s.placed = true
	for _, f := range s.forks {
		if l := familyActivity(f); l.After(s.family) {
			s.family = l
		}
	}
	return s.family
}

// touch records activity in s at t and moves s to its place. News in the
// session already at the top of the sidebar (of the unpinned, or of all)
// leaves the order as it is, and spares the sort (families) most news
// is in.
func (m *Model) touch(s *SessionView, t time.Time) {
	if !t.After(s.LastActivity) {
		return
	}
	s.LastActivity = t
	if m.staysFirst(s) {
		return // the next resort works its family's time out again
	}
	m.resort()
}

// staysFirst says whether s, given news, keeps its row: it leads its
// part of the sidebar (the pinned, or the rest), at the top level.
func (m *Model) staysFirst(s *SessionView) bool {
	if s.depth != 0 {
		return false
	}
	for _, r := range m.Sessions {
		switch {
		case r == s:
			return true
		case r.depth == 0 && (r.Pinned == s.Pinned):
			return false // a family of its part above it
		}
	}
	return false
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
