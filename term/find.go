package term

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Two ways through the focused transcript: search (Ctrl-F), which finds
// and highlights text, and pick (Ctrl-Y), which selects a message to copy.

// search is the search line: the query, and the line of the transcript
// its current match is on (-1: none).
type search struct {
	query []rune
	at    int
	count int // lines that match
	// pages is how many pages of older history this search has asked
	// for since the user last pressed a key; loading says one is on its
	// way and the search goes on in it (searchMoved). A search past the
	// oldest loaded line reads history a page at a time, at most
	// searchPages pages a key, so that a query that matches nothing does
	// not pull a whole long session into memory.
	pages   int
	loading bool
}

// searchPages is how many older pages one key of the search may load.
const searchPages = 10

var stMatch = stBase.Background(tcell.ColorYellow).Foreground(tcell.ColorBlack)

func (m *Model) openSearch() []Cmd {
	if m.Focused() == nil {
		return nil
	}
	m.search = &search{at: -1}
	return nil
}

// searchKey is a key while the search line is open: typing narrows and
// jumps to the newest match, Up (or Enter) goes to the one before, Down
// to the one after, Esc closes and stays where it is.
func (m *Model) searchKey(ev *tcell.EventKey) []Cmd {
	f := m.search
	f.pages = 0
	switch ev.Key() {
	case tcell.KeyEscape, tcell.KeyCtrlF:
		m.search = nil
		return nil
	case tcell.KeyEnter, tcell.KeyUp:
		return m.findMatch(-1)
	case tcell.KeyDown:
		m.findMatch(+1)
	case tcell.KeyCtrlQ:
		m.Quit = true
	default:
		if edited(&f.query, ev) {
			f.at = -1
			return m.findMatch(-1)
		}
	}
	return nil
}

// edited applies ev to a one-line query (the search and go-to lines): a
// rune typed without Alt or Ctrl is added (up to maxQuery), Backspace
// takes the last one off. It says whether the query changed.
func edited(q *[]rune, ev *tcell.EventKey) bool {
	switch ev.Key() {
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		if len(*q) > 0 {
			*q = (*q)[:len(*q)-1]
			return true
		}
	case tcell.KeyRune:
		if ev.Modifiers()&(tcell.ModAlt|tcell.ModCtrl) == 0 && len(*q) < maxQuery {
			*q = append(*q, ev.Rune())
			return true
		}
	}
	return false
}

// findMatch moves the current match one matching line up (dir -1) or down
// (+1) from where it is (from the end when there is none yet), counts the
// matching lines, and scrolls the match into view. Up past the oldest
// loaded line asks for a page of older history, if there is one
// (searchMoved goes on once it is loaded).
func (m *Model) findMatch(dir int) []Cmd {
	s, f := m.Focused(), m.search
	if s == nil || f == nil {
		return nil
	}
	o := m.look()
	n := s.lineCount(o)
	q := string(f.query)
	f.count = 0
	if q == "" {
		f.at = -1
		return nil
	}
	lines := s.window(o, 0, n)
	for _, l := range lines {
		if len(findFold(l.text, q)) > 0 {
			f.count++
		}
	}
	start := f.at
	if start < 0 {
		start = n
		if dir > 0 {
			start = -1
		}
	}
	for i := start + dir; i >= 0 && i < n; i += dir {
		if len(findFold(lines[i].text, q)) > 0 {
			f.at = i
			f.loading = false // found: a page on its way only moves the lines
			m.showLine(s, i)
			return nil
		}
	}
	if dir > 0 || !s.More || len(s.Events) == 0 || f.loading || f.pages >= searchPages {
		return nil
	}
	f.loading, f.pages = true, f.pages+1
	if f.at < 0 {
		f.at = 0 // on, from the top of what is loaded now
	}
	return []Cmd{cmdLoadOlder{Session: s.ID, Before: s.Events[0].Offset}}
}

// searchMoved keeps the search's place when a page of older history
// (added lines) comes in front of the focused transcript: the line it was
// at moved down by those lines. A search that asked for the page and has
// found nothing since goes on in it.
func (m *Model) searchMoved(s *SessionView, added int) []Cmd {
	f := m.search
	if f == nil || s != m.Focused() {
		return nil
	}
	if f.at >= 0 {
		f.at += added
	}
	if !f.loading {
		return nil
	}
	f.loading = false
	return m.findMatch(-1)
}

// showLine scrolls s so that line i is in view, a few lines below the top.
func (m *Model) showLine(s *SessionView, i int) {
	h := m.transcriptHeight()
	n := s.lineCount(m.look())
	top := min(max(i-h/3, 0), max(n-h, 0))
	s.Top, s.Follow = top, top >= max(n-h, 0)
}

// findFold returns the byte offsets in s where q starts, ignoring case.
func findFold(s, q string) []int {
	var out []int
	if q == "" {
		return nil
	}
	for i := 0; i+len(q) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(q)], q) {
			out = append(out, i)
			i += len(q) - 1
		}
	}
	return out
}

// searchStatus is what the status bar says while searching.
func (f *search) status() string {
	switch {
	case len(f.query) == 0:
		return "search: type to find · ↑/Enter older · ↓ newer · Esc"
	case f.loading:
		return fmt.Sprintf("search: %s · reading older history…", string(f.query))
	case f.count == 0:
		return fmt.Sprintf("search: %s · no match", string(f.query))
	}
	return fmt.Sprintf("search: %s · %d lines · ↑/Enter older · ↓ newer · Esc", string(f.query), f.count)
}

// pick is a message (or a tool call) selected in the focused transcript,
// for copying: an index into its Events; said is a word on the last key
// pressed on it, which the status bar shows in place of the keys until
// the next.
type pick struct {
	event int
	said  string
}

// openPick selects the focused session's last message.
func (m *Model) openPick() []Cmd {
	s := m.Focused()
	if s == nil {
		return nil
	}
	m.pick = &pick{event: len(s.Events)}
	if !m.movePick(-1) {
		m.pick = nil
		m.notify(true, "no message to copy yet")
	}
	return nil
}

// movePick moves the selection to the previous (dir -1) or next message
// and scrolls to it; it says whether there was one.
func (m *Model) movePick(dir int) bool {
	s := m.Focused()
	for i := m.pick.event + dir; i >= 0 && i < len(s.Events); i += dir {
		if t := s.Events[i].Type; (t == wire.EventMessage || t == wire.EventToolCall) && !s.joined(i) {
			m.pick.event = i
			from, _ := s.eventRange(m.look(), i)
			m.showLine(s, from)
			return true
		}
	}
	return false
}

// pickKey is a key while a message is selected: Up and Down choose, Enter
// or y copies it, c copies its first code block, Esc leaves; any other key
// leaves and does what it does.
func (m *Model) pickKey(ev *tcell.EventKey) []Cmd {
	s := m.Focused()
	if s == nil || m.pick.event >= len(s.Events) {
		m.pick = nil
		return m.press(ev)
	}
	m.pick.said = ""
	switch {
	case ev.Key() == tcell.KeyUp:
		m.movePick(-1)
	case ev.Key() == tcell.KeyDown:
		m.movePick(+1)
	case ev.Key() == tcell.KeyEnter, ev.Key() == tcell.KeyRune && ev.Rune() == 'y':
		text, what := s.pickedText(m.pick.event)
		m.pick = nil
		return m.copyText(text, what)
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'c':
		text, _ := s.pickedText(m.pick.event)
		codes := codeBlocks(text)
		if len(codes) == 0 {
			m.notify(true, "that message has no code block")
			return nil
		}
		m.pick = nil
		return m.copyText(codes[0], "code 1")
	case ev.Key() == tcell.KeyLeft:
		return m.switchVersion(s, -1)
	case ev.Key() == tcell.KeyRight:
		return m.switchVersion(s, +1)
	case ev.Key() == tcell.KeyEscape:
		m.pick = nil
	default:
		if ev.Key() == tcell.KeyRune {
			if cmds, ok := m.forkPick(s, ev.Rune()); ok {
				return cmds
			}
		}
		m.pick = nil
		return m.press(ev)
	}
	return nil
}

// pickedText is what copying event i takes, and what to call it: a
// message's text; a tool call's output once it has one, else its
// arguments.
func (s *SessionView) pickedText(i int) (string, string) {
	ev := s.Events[i]
	if ev.Type != wire.EventToolCall {
		return s.replyText(i), "the message"
	}
	if c := s.calls.byID[ev.CallID]; c != nil && c.result != nil {
		return c.result.Text, "the tool's output"
	}
	return string(ev.Arguments), "the call's arguments"
}

// copyText asks the App to put text on the clipboard, through the
// terminal (OSC 52).
func (m *Model) copyText(text, what string) []Cmd {
	m.notify(false, fmt.Sprintf("copied %s (%d characters)", what, len([]rune(text))))
	return []Cmd{cmdCopy{Text: text}}
}

// eventRange returns the lines of s's transcript that event i takes, as
// [from, to).
func (s *SessionView) eventRange(o look, i int) (from, to int) {
	t := s.view(o)
	if i > 0 {
		from = t.ends[i-1]
	}
	to = t.ends[i]
	if s.More {
		from, to = from+1, to+1
	}
	return from, to
}

// lastReply is the text of the focused session's newest reply (a model's
// or a bot's message), or "".
func (s *SessionView) lastReply() string {
	for i := len(s.Events) - 1; i >= 0; i-- {
		if ev := s.Events[i]; ev.Type == wire.EventMessage && ev.Role != wire.RoleUser {
			return s.replyText(i)
		}
	}
	return ""
}
