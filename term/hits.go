package term

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Search across sessions (/search TEXT): the daemon's full-text search
// (GET /v1/search), its hits in a box over the screen, newest first, one
// chosen with ↑↓; Enter opens the hit's session at the hit, which stays
// selected as Ctrl-Y selects a message (Enter copies it, Esc leaves).
// A hit older than what is loaded reads history a page at a time until
// it is there, at most jumpPages pages.

// hits is the box of a search's results.
type hits struct {
	query   string
	results []wire.SearchResult
	sel     int
	loading bool
	// archived, for /archived, are the sessions listed (archive.go):
	// Enter puts the one chosen in the sidebar and in front.
	archived []wire.Session
}

// jump is a hit being opened whose message is not loaded yet.
type jump struct {
	session string
	offset  int64
	after   bool // the first message after offset, not the event at it (versions.go)
	pages   int
}

// jumpPages is how many pages of older history opening a hit may read.
const jumpPages = 50

func (m *Model) searchAll(q string) []Cmd {
	if q == "" {
		m.notify(true, "usage: /search TEXT")
		return nil
	}
	m.hits = &hits{query: q, loading: true}
	return []Cmd{cmdSearch{Query: q}}
}

// found shows a search's results, if the box still waits for them.
func (m *Model) found(r resSearch) {
	h := m.hits
	if h == nil || h.query != r.Query {
		return
	}
	if r.Err != nil {
		m.hits = nil
		m.notify(true, "search: "+spoken(r.Err))
		return
	}
	h.results, h.loading = r.Results.Results, false
	if len(h.results) == 0 {
		m.hits = nil
		m.notify(false, "search: nothing found for "+r.Query)
	}
}

// hitsKey is a key while the box shows: ↑↓ choose, Enter opens, Esc
// closes; any other key closes it and does what it does.
func (m *Model) hitsKey(ev *tcell.EventKey) []Cmd {
	h := m.hits
	switch ev.Key() {
	case tcell.KeyUp:
		h.sel = max(h.sel-1, 0)
	case tcell.KeyDown:
		h.sel = min(h.sel+1, max(len(h.results)-1, 0))
	case tcell.KeyEnter:
		if h.loading || len(h.results) == 0 {
			return nil
		}
		m.hits = nil
		if h.archived != nil {
			return m.openArchived(h.archived[h.sel])
		}
		return m.open(h.results[h.sel])
	case tcell.KeyEscape:
		m.hits = nil
	default:
		m.hits = nil
		return m.press(ev)
	}
	return nil
}

// open focuses the hit's session and selects its message, reading older
// history first if it is not loaded.
func (m *Model) open(r wire.SearchResult) []Cmd {
	i := -1
	for j, s := range m.Sessions {
		if s.ID == r.Session {
			i = j
		}
	}
	if i < 0 {
		m.notify(true, "session "+r.Session+" is not in the sidebar")
		return nil
	}
	m.setFocus(i)
	m.Pane = paneComposer
	m.jump = &jump{session: r.Session, offset: r.Offset}
	return m.land()
}

// land selects the jump's message if it is loaded, or asks for the page
// before what is; a session whose history has not all come yet (opened
// just after the client started) is landed in as it comes.
func (m *Model) land() []Cmd {
	j, s := m.jump, m.Focused()
	if j == nil || s == nil || s.ID != j.session {
		m.jump = nil
		return nil
	}
	if i, ok := j.target(s); ok {
		m.jump = nil
		i = callOf(s.Events, i)
		m.pick = &pick{event: i}
		from, _ := s.eventRange(m.look(), i)
		m.showLine(s, from)
		return nil
	}
	if !s.caughtUp() {
		m.notify(false, "opening…") // its history is on its way: landed as it comes (event)
		return nil
	}
	if j.after && j.covered(s) {
		m.jump = nil
		m.notify(false, "no message after the fork point yet")
		return nil
	}
	if !j.after && j.offset > s.Events[0].Offset || !s.More {
		m.jump = nil
		m.notify(true, fmt.Sprintf("message %d is not in what this session holds now", j.offset))
		return nil
	}
	if j.pages >= jumpPages {
		m.jump = nil
		m.notify(true, fmt.Sprintf("message %d is more than %d pages back: PgUp reads on", j.offset, jumpPages))
		return nil
	}
	j.pages++
	m.notify(false, "reading older history…")
	return []Cmd{cmdLoadOlder{Session: s.ID, Before: s.Events[0].Offset}}
}

// target is the index of the event the jump lands on, when s's events
// hold it: the one at its offset, or the first message after it once
// what is loaded reaches back to it.
func (j *jump) target(s *SessionView) (int, bool) {
	for i, ev := range s.Events {
		switch {
		case !j.after && ev.Offset == j.offset:
			return i, true
		case j.after && ev.Offset > j.offset && ev.Type == wire.EventMessage:
			return i, j.covered(s)
		}
	}
	return 0, false
}

// covered says whether s's events loaded reach back to just after the
// jump's offset, so the first message after it among them is its first.
func (j *jump) covered(s *SessionView) bool {
	return !s.More || len(s.Events) > 0 && s.Events[0].Offset <= j.offset+1
}

// callOf is the event that draws event i: a tool's result is drawn in
// its call's block, so a hit on it lands on the call.
func callOf(evs []wire.Event, i int) int {
	if evs[i].Type != wire.EventToolResult {
		return i
	}
	for j := i - 1; j >= 0; j-- {
		if evs[j].Type == wire.EventToolCall && evs[j].CallID == evs[i].CallID {
			return j
		}
	}
	return i
}

// drawHits draws the box of results over the screen: each hit's session,
// author and time, and the words around the match, the match marked.
func drawHits(scr tcell.Screen, m *Model) {
	h := m.hits
	w, rows := min(m.Width, 120), min(max(len(h.results), 1), m.Height-4)
	if w < 20 || rows < 1 {
		return
	}
	x0, y0 := (m.Width-w)/2, 1
	box(scr, x0, y0, w, rows+2, stBase)
	title := fmt.Sprintf(" search: %s · %d · ↑↓ Enter opens · Esc ", h.query, len(h.results))
	switch {
	case h.archived != nil && h.loading:
		title = " archived sessions · reading… "
	case h.archived != nil:
		title = fmt.Sprintf(" archived sessions · %d · ↑↓ Enter opens · Esc ", len(h.results))
	case h.loading:
		title = " search: " + h.query + " · searching… "
	}
	put(scr, x0+2, y0, w-4, title, stBold)
	first := max(h.sel-rows+1, 0)
	for i := 0; i < rows && first+i < len(h.results); i++ {
		r := h.results[first+i]
		st := stBase
		if first+i == h.sel {
			st = stSelected
		}
		y := y0 + 1 + i
		fill(scr, x0+1, y, w-2, st)
		head := fmt.Sprintf("%s · %s · %s  ", cut(r.Title, r.Session, 24), r.Author, r.At.Local().Format("Jan 2 15:04"))
		put(scr, x0+2, y, w-4, head, st.Bold(true))
		drawSnippet(scr, x0+2+width(head), y, w-4-width(head), r.Text, st)
	}
}

// cut is title, else id, in at most n cells.
func cut(title, id string, n int) string {
	if title == "" {
		title = id
	}
	return truncate(title, n)
}

// drawSnippet draws a snippet on one line, each match («…») in the
// search's highlight.
func drawSnippet(scr tcell.Screen, x, y, w int, text string, st tcell.Style) {
	text = strings.Join(strings.Fields(displayable(strings.ReplaceAll(text, "\n", " "))), " ")
	for text != "" && w > 0 {
		plain, rest, _ := strings.Cut(text, "«")
		put(scr, x, y, w, plain, st)
		x, w = x+width(plain), w-width(plain)
		match, after, _ := strings.Cut(rest, "»")
		put(scr, x, y, w, match, stMatch)
		x, w = x+width(match), w-width(match)
		text = after
	}
}
