package term

import (
	"fmt"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Styles.
var (
	stBase      = tcell.StyleDefault
	stDim       = stBase.Dim(true)
	stBold      = stBase.Bold(true)
	stUser      = stBase.Foreground(tcell.ColorGreen).Bold(true)
	stAssistant = stBase.Foreground(tcell.ColorTeal).Bold(true)
	stBot       = stBase.Foreground(tcell.ColorPurple).Bold(true)
	stSystem    = stBase.Foreground(tcell.ColorOlive).Bold(true)
	stError     = stBase.Foreground(tcell.ColorRed)
	stStatus    = stBase.Reverse(true)
	stStatusErr = stBase.Background(tcell.ColorMaroon).Foreground(tcell.ColorWhite)
	stSelected  = stBase.Reverse(true)
	stSelDim    = stBase.Background(tcell.ColorGray).Foreground(tcell.ColorBlack)
)

// layout is where each pane goes, derived from the size alone.
type layout struct {
	sidebarW         int // 0: no sidebar
	mainX, mainW     int
	transcriptH      int
	sepY             int // -1: no separator line
	barY, barH       int // the decision bar (tools.go): its first row and rows, 0 for none
	composerY, compH int
	chipH            int // the composer's first rows: the files attached (attach.go)
	noticeY, noticeH int // a notice too long for the status bar, on rows above it (status.go)
	statusY          int
}

// The sidebar needs minSidebarWidth columns to fit beside a transcript
// at all, and is shown at first only from sidebarFrom: narrower, the
// transcript needs every column, and Ctrl-S, Tab or Ctrl-G bring it.
const (
	minSidebarWidth = 50
	sidebarFrom     = 70
)

// sidebarShown says whether the sidebar is drawn now: as the person set
// it with Ctrl-S, else as the width has it; and while it has the keys
// (Tab to it, or the go-to line), whatever was set.
func (m *Model) sidebarShown() bool {
	if m.Width < minSidebarWidth {
		return false
	}
	if m.Pane == paneSidebar || m.filter != nil {
		return true
	}
	switch m.sidebar {
	case sidebarOn:
		return true
	case sidebarOff:
		return false
	}
	return m.Width >= sidebarFrom
}

func (m *Model) layout() layout {
	w, h := max(m.Width, 0), max(m.Height, 0)
	l := layout{sepY: -1, statusY: h - 1}
	if m.sidebarShown() {
		l.sidebarW = min(28, w/3)
		l.mainX = l.sidebarW + 1
	}
	l.mainW = max(w-l.mainX, 0)
	l.noticeH = min(len(m.noticeRows()), max(h-2, 0))
	l.noticeY = l.statusY - l.noticeH
	rows := h - 1 - l.noticeH // above the status bar and a long notice
	comp := len(wrap(m.shown(m.Composer), max(l.mainW-2, 1)))
	chips := len(m.chipRows(max(l.mainW-2, 1)))
	l.compH = min(min(max(comp, 1), 5)+chips, max(rows, 0))
	l.chipH = min(chips, max(l.compH-1, 0)) // the text keeps a row
	l.composerY = rows - l.compH
	l.transcriptH = max(l.composerY, 0)
	if h >= 8 {
		l.sepY = l.composerY - 1
		l.transcriptH = max(l.sepY, 0)
	}
	if l.barH = m.barRows(l.transcriptH); l.barH > 0 {
		l.transcriptH -= l.barH
		l.barY = l.transcriptH
	}
	return l
}

func (m *Model) transcriptWidth() int  { return max(m.layout().mainW-1, 1) }
func (m *Model) look() look            { return look{m.transcriptWidth(), m.Times, m.wholeTools} }
func (m *Model) transcriptHeight() int { return max(m.layout().transcriptH, 1) }

// Draw renders the model on scr. It only reads the model.
func Draw(scr tcell.Screen, m *Model) {
	scr.Clear()
	scr.HideCursor()
	if m.Width <= 0 || m.Height <= 0 {
		return
	}
	l := m.layout()
	if l.sidebarW > 0 {
		drawSidebar(scr, m, l)
	}
	drawTranscript(scr, m, l)
	drawComposer(scr, m, l)
	drawDecision(scr, m, l)
	drawMenu(scr, m, l)
	drawMentions(scr, m, l)
	drawModels(scr, m, l)
	drawStatus(scr, m, l)
	if m.hits != nil {
		drawHits(scr, m)
	}
	if m.files != nil {
		drawFiles(scr, m)
	}
	if m.ShowHelp {
		drawHelp(scr, m)
	}
}

// put writes s at (x, y), clipped to w cells.
func put(scr tcell.Screen, x, y, w int, s string, st tcell.Style) {
	if w <= 0 || y < 0 {
		return
	}
	scr.PutStrStyled(x, y, truncate(s, w), st)
}

func fill(scr tcell.Screen, x, y, w int, st tcell.Style) {
	for i := range max(w, 0) {
		scr.SetContent(x+i, y, ' ', nil, st)
	}
}

func drawSidebar(scr tcell.Screen, m *Model, l layout) {
	w := l.sidebarW
	rows := l.statusY
	for y := range rows {
		scr.SetContent(w, y, '│', nil, stDim)
	}
	list, sel := m.Sessions, m.Focus
	if f := m.filter; f != nil {
		list, sel = m.matches(), f.sel
		put(scr, 0, 0, w, " go to: "+string(f.query), stBold)
		scr.ShowCursor(min(8+width(string(f.query)), w-1), 0)
		if len(list) == 0 {
			put(scr, 0, 2, w, " no session matches", stDim)
			return
		}
	} else {
		put(scr, 0, 0, w, " sessions", stBold)
	}
	if len(list) == 0 {
		put(scr, 0, 2, w, " Ctrl-N: new session", stDim)
		return
	}
	visible := rows - 1
	first := 0
	if sel >= visible {
		first = sel - visible + 1
	}
	for i := first; i < len(list) && i-first < visible; i++ {
		st := stBase
		if i == sel {
			st = stSelDim
			if m.Pane == paneSidebar || m.filter != nil {
				st = stSelected
			}
			fill(scr, 0, 1+i-first, w, st)
		}
		// The go-to line's matches are a list, not a tree: a match's
		// parent need not be one, so none is indented.
		indent := 0
		if m.filter == nil {
			indent = min(list[i].depth, deepest)
		}
		drawSidebarRow(scr, m, list[i], 1+i-first, w, indent, st)
	}
}

// drawSidebarRow is one session: its mark (● running, ? a tool call
// waits for a decision, ! last turn failed), its name, bold while it has
// unread messages, with ★ before it when it is pinned (pins.go), a
// fork's ⑂ before it and its parent's name after it (forks.go), all of
// it indented two columns a level under its parent (sidebar.go), and on
// the right their count and the time of its last activity.
func drawSidebarRow(scr tcell.Screen, m *Model, s *SessionView, y, w, indent int, st tcell.Style) {
	mark, markSt := " ", st.Foreground(tcell.ColorGreen)
	switch {
	case s.Phase == wire.PhaseApproval:
		mark, markSt = "?", st.Foreground(tcell.ColorOlive).Bold(true)
	case s.running():
		mark = "●"
	case s.LastTurn == wire.TurnFailed:
		mark = "!"
	}
	right := relTime(m.Now(), s.LastActivity)
	name := st
	if s.Unread > 0 {
		n := fmt.Sprint(s.Unread)
		if s.Unread >= wire.MaxUnread {
			n = fmt.Sprintf("%d+", wire.MaxUnread-1) // the feed counts no further
		}
		right = fmt.Sprintf("(%s) %s", n, right)
		name = st.Bold(true)
	}
	nameW := w - 2 - width(right) - 1
	put(scr, 0, y, 2, mark, markSt)
	text, from := m.sidebarName(s)
	if s.Pinned {
		text = pinMark + " " + text
	}
	text = strings.Repeat("  ", indent) + text
	put(scr, 2, y, nameW, text, name)
	if tw := width(text); from != "" && tw < nameW {
		put(scr, 2+tw, y, nameW-tw, from, st.Dim(true))
	}
	put(scr, w-width(right), y, width(right), right, st)
}

func relTime(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func drawTranscript(scr tcell.Screen, m *Model, l layout) {
	s := m.Focused()
	if s == nil {
		if l.transcriptH > 0 {
			put(scr, l.mainX+1, 0, l.mainW-1, "No session yet. Ctrl-N starts one; /help lists the keys.", stDim)
		}
		return
	}
	w, h := max(l.mainW-1, 1), l.transcriptH
	o := look{w, m.Times, m.wholeTools}
	n := s.lineCount(o)
	top := max(n-h, 0)
	if !s.Follow {
		top = min(s.Top, top)
	}
	pickFrom, pickTo := -1, -1
	if m.pick != nil && m.pick.event < len(s.Events) {
		pickFrom, pickTo = s.eventRange(o, m.pick.event)
	}
	for i, ln := range s.window(o, top, h) {
		x, w := l.mainX+1, l.mainW-1
		if gi := top + i; gi >= pickFrom && gi < pickTo {
			fill(scr, x, i, w, stSelected)
			put(scr, x, i, w, ln.text, stSelected)
			continue
		}
		drawLine(scr, x, i, w, ln)
		if m.search != nil && len(m.search.query) > 0 {
			highlight(scr, x, i, w, ln.text, string(m.search.query), top+i == m.search.at)
		}
	}
	if !s.Follow && top+h < n && h > 0 {
		more := fmt.Sprintf(" ↓ %d more lines (End) ", n-top-h)
		put(scr, l.mainX+max(l.mainW-width(more), 0), h-1, l.mainW, more, stSelDim)
	}
}

// highlight paints the matches of q in text, drawn at (x, y); those of the
// current match's line stand out more.
func highlight(scr tcell.Screen, x, y, w int, text, q string, current bool) {
	st := stMatch
	if current {
		st = st.Bold(true).Underline(true)
	}
	for _, i := range findFold(text, q) {
		if dx := width(text[:i]); dx < w {
			put(scr, x+dx, y, w-dx, text[i:i+len(q)], st)
		}
	}
}

// drawLine draws one transcript line at (x, y), clipped to w cells.
func drawLine(scr tcell.Screen, x, y, w int, ln line) {
	if ln.spans == nil {
		put(scr, x, y, w, ln.text, ln.style)
		return
	}
	for _, sp := range ln.spans {
		put(scr, x, y, w, sp.text, sp.style)
		sw := width(sp.text)
		x, w = x+sw, w-sw
	}
}

func drawComposer(scr tcell.Screen, m *Model, l layout) {
	if l.sepY >= 0 {
		for x := l.mainX; x < l.mainX+l.mainW; x++ {
			scr.SetContent(x, l.sepY, '─', nil, stDim)
		}
	}
	if l.compH <= 0 || l.mainW <= 0 {
		return
	}
	prompt := "❯ "
	st := stBold
	if m.Pane != paneComposer {
		st = stDim
	}
	textW := max(l.mainW-2, 1)
	for i, row := range m.chipRows(textW)[:l.chipH] {
		drawLine(scr, l.mainX+2, l.composerY+i, textW, spanLine(row, stBase))
	}
	y, h := l.composerY+l.chipH, l.compH-l.chipH
	put(scr, l.mainX, y, 2, prompt, st)
	lines := wrap(m.shown(m.Composer), textW)
	// Where is the cursor? Wrap the text before it the same way.
	before := wrap(m.shown(m.Composer[:m.Cursor]), textW)
	cy := len(before) - 1
	cx := width(before[cy])
	first := max(cy-h+1, 0)
	for i := 0; i < h && first+i < len(lines); i++ {
		put(scr, l.mainX+2, y+i, textW, lines[first+i], stBase)
	}
	// A read-only session says so in the composer's place, focused or
	// not, as the page does.
	if len(m.Composer) == 0 && m.Focused() != nil && (m.Pane == paneComposer || m.readOnlyHere()) {
		hint := "message · /help"
		switch {
		case m.ReadOnly:
			hint = "read-only view · /copy, Ctrl-F, /help"
		case m.readOnlyHere():
			hint = m.readOnlyWords() + " · /copy, Ctrl-F, /help"
		case l.chipH > 0:
			hint = "message, or Enter sends the files · Backspace drops one"
		}
		put(scr, l.mainX+2, y, textW, hint, stDim)
	}
	if m.Pane == paneComposer && !m.ShowHelp && m.filter == nil {
		scr.ShowCursor(l.mainX+2+min(cx, textW-1), y+cy-first)
	}
}

// drawHelp draws the help (keys.go) in a box over the screen, from row
// m.helpTop when it is taller than the box can be.
func drawHelp(scr tcell.Screen, m *Model) {
	lines := helpLines()
	w := 0
	for _, h := range lines {
		w = max(w, width(h))
	}
	w = min(w+4, m.Width)
	h := min(len(lines)+2, m.Height)
	x0, y0 := (m.Width-w)/2, (m.Height-h)/2
	if w < 4 || h < 3 {
		return
	}
	box(scr, x0, y0, w, h, stBase)
	title := " albedo: keys and commands (any other key closes) "
	if len(lines) > h-2 {
		title = " albedo: keys and commands (↑↓ scroll, any other key closes) "
	}
	put(scr, x0+2, y0, w-4, title, stBold)
	for i := 0; i < h-2 && m.helpTop+i < len(lines); i++ {
		put(scr, x0+2, y0+1+i, w-4, lines[m.helpTop+i], stBase)
	}
}

// box clears a w×h rectangle at (x0, y0) and frames it.
func box(scr tcell.Screen, x0, y0, w, h int, st tcell.Style) {
	for y := y0; y < y0+h; y++ {
		fill(scr, x0, y, w, st)
		scr.SetContent(x0, y, '│', nil, st)
		scr.SetContent(x0+w-1, y, '│', nil, st)
	}
	for x := x0; x < x0+w; x++ {
		scr.SetContent(x, y0, '─', nil, st)
		scr.SetContent(x, y0+h-1, '─', nil, st)
	}
	scr.SetContent(x0, y0, '┌', nil, st)
	scr.SetContent(x0+w-1, y0, '┐', nil, st)
	scr.SetContent(x0, y0+h-1, '└', nil, st)
	scr.SetContent(x0+w-1, y0+h-1, '┘', nil, st)
}
