package term

import (
	"fmt"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/api/wire"
	"albedo/client"
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
	composerY, compH int
	statusY          int
}

func (m *Model) layout() layout {
	w, h := max(m.Width, 0), max(m.Height, 0)
	l := layout{sepY: -1, statusY: h - 1}
	if w >= 50 {
		l.sidebarW = min(28, w/3)
		l.mainX = l.sidebarW + 1
	}
	l.mainW = max(w-l.mainX, 0)
	rows := h - 1 // above the status bar
	comp := len(wrap(string(m.Composer), max(l.mainW-2, 1)))
	l.compH = min(max(comp, 1), 5, max(rows, 0))
	l.composerY = rows - l.compH
	l.transcriptH = max(l.composerY, 0)
	if h >= 8 {
		l.sepY = l.composerY - 1
		l.transcriptH = max(l.sepY, 0)
	}
	return l
}

func (m *Model) transcriptWidth() int  { return max(m.layout().mainW-1, 1) }
func (m *Model) transcriptHeight() int { return max(m.layout().transcriptH, 1) }

// line is one screen line of a transcript.
type line struct {
	text  string
	style tcell.Style
}

func roleStyle(role wire.Role) tcell.Style {
	switch role {
	case wire.RoleUser:
		return stUser
	case wire.RoleAssistant:
		return stAssistant
	case wire.RoleBot:
		return stBot
	}
	return stSystem
}

// transcriptLines renders a session's transcript for a width: committed
// messages and notable turn and settings events, then the streaming reply.
func transcriptLines(s *SessionView, width int) []line {
	var out []line
	if s.More {
		out = append(out, line{"… earlier messages: PgUp or Home to load", stDim})
	}
	text := func(t string, st tcell.Style) {
		for _, l := range wrap(t, width) {
			out = append(out, line{l, st})
		}
	}
	header := func(role wire.Role, author, note string) {
		h := string(role)
		if author != "" && author != h {
			h += " · " + author
		}
		if note != "" {
			h += " " + note
		}
		out = append(out, line{truncate(h, width), roleStyle(role)})
	}
	for _, ev := range s.Events {
		switch ev.Type {
		case wire.EventMessage:
			note := ""
			st := stBase
			switch ev.State {
			case wire.MessageInterrupted:
				note, st = "[interrupted]", stDim
			case wire.MessageFailed:
				note = "[failed]"
			}
			header(ev.Role, ev.Author, note)
			text(ev.Text, st)
			out = append(out, line{"", stBase})
		case wire.EventTurn:
			switch ev.State {
			case wire.TurnFailed:
				text("⚠ turn failed: "+ev.Error, stError)
				out = append(out, line{"", stBase})
			case wire.TurnInterrupted:
				text("⏹ interrupted ("+strings.ReplaceAll(ev.Reason, "_", " ")+")", stDim)
				out = append(out, line{"", stBase})
			}
		case wire.EventSettings:
			var parts []string
			if ev.Title != nil {
				parts = append(parts, fmt.Sprintf("title %q", *ev.Title))
			}
			if ev.Model != nil {
				parts = append(parts, "model "+orNone(*ev.Model))
			}
			if ev.Effort != nil {
				parts = append(parts, "effort "+orNone(*ev.Effort))
			}
			text("· "+strings.Join(parts, ", ")+" (by "+ev.By+")", stDim)
		}
	}
	if s.StreamTurn != "" {
		header(wire.RoleAssistant, s.Model, "…")
		text(s.StreamText, stBase)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

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
	drawStatus(scr, m, l)
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
	put(scr, 0, 0, w, " sessions", stBold)
	if len(m.Sessions) == 0 {
		put(scr, 0, 2, w, " Ctrl-N: new session", stDim)
		return
	}
	visible := rows - 1
	first := 0
	if m.Focus >= visible {
		first = m.Focus - visible + 1
	}
	for i := first; i < len(m.Sessions) && i-first < visible; i++ {
		s := m.Sessions[i]
		y := 1 + i - first
		st := stBase
		if i == m.Focus {
			st = stSelDim
			if m.Pane == paneSidebar {
				st = stSelected
			}
			fill(scr, 0, y, w, st)
		}
		mark := " "
		switch {
		case s.running():
			mark = "●"
		case s.LastTurn == wire.TurnFailed:
			mark = "!"
		}
		right := relTime(m.Now(), s.LastActivity)
		if s.Unread > 0 {
			right = fmt.Sprintf("(%d) %s", s.Unread, right)
		}
		nameW := w - 2 - width(right) - 1
		put(scr, 0, y, 2, mark, st.Foreground(tcell.ColorGreen))
		put(scr, 2, y, nameW, s.name(), st)
		put(scr, w-width(right), y, width(right), right, st)
	}
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
	lines := transcriptLines(s, max(l.mainW-1, 1))
	h := l.transcriptH
	top := max(len(lines)-h, 0)
	if !s.Follow {
		top = min(s.Top, top)
	}
	for i := 0; i < h && top+i < len(lines); i++ {
		put(scr, l.mainX+1, i, l.mainW-1, lines[top+i].text, lines[top+i].style)
	}
	if !s.Follow && top+h < len(lines) && h > 0 {
		more := fmt.Sprintf(" ↓ %d more lines (End) ", len(lines)-top-h)
		put(scr, l.mainX+max(l.mainW-width(more), 0), h-1, l.mainW, more, stSelDim)
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
	put(scr, l.mainX, l.composerY, 2, prompt, st)
	textW := max(l.mainW-2, 1)
	lines := wrap(string(m.Composer), textW)
	// Where is the cursor? Wrap the text before it the same way.
	before := wrap(string(m.Composer[:m.Cursor]), textW)
	cy := len(before) - 1
	cx := width(before[cy])
	first := max(cy-l.compH+1, 0)
	for i := 0; i < l.compH && first+i < len(lines); i++ {
		put(scr, l.mainX+2, l.composerY+i, textW, lines[first+i], stBase)
	}
	if len(m.Composer) == 0 && m.Pane == paneComposer && m.Focused() != nil {
		put(scr, l.mainX+2, l.composerY, textW, "message · /help", stDim)
	}
	if m.Pane == paneComposer && !m.ShowHelp {
		scr.ShowCursor(l.mainX+2+min(cx, textW-1), l.composerY+cy-first)
	}
}

// connText is the connection part of the status bar.
func (m *Model) connText() string {
	switch m.Conn.Phase {
	case client.Connected:
		return "connected"
	case client.Reconnecting:
		left := m.Conn.Next - m.Now().Sub(m.connSince)
		return fmt.Sprintf("reconnecting in %.1f s (attempt %d)", max(left, 0).Seconds(), m.Conn.Attempt)
	case client.Unavailable:
		return "daemon unavailable: press r to retry"
	case client.Stopped:
		return "daemon stopped — r to start"
	case client.StartFailed:
		// The reason gives way, so that what to do stays on screen.
		head, tail := "daemon cannot start: ", " — fix it, then r"
		return head + truncate(m.Conn.Reason, max(m.Width-1-width(head+tail), 12)) + tail
	}
	return "connecting…"
}

func drawStatus(scr tcell.Screen, m *Model, l layout) {
	y := l.statusY
	if y < 0 {
		return
	}
	fill(scr, 0, y, m.Width, stStatus)
	left := " " + m.connText()
	if s := m.Focused(); s != nil {
		var parts []string
		if s.Model != "" {
			parts = append(parts, s.Model)
		}
		if s.Effort != "" {
			parts = append(parts, "effort "+s.Effort)
		}
		parts = append(parts, fmt.Sprintf("%d viewer%s", s.Viewers, map[bool]string{true: "", false: "s"}[s.Viewers == 1]))
		if s.Queued > 0 {
			parts = append(parts, fmt.Sprintf("%d queued", s.Queued))
		}
		if s.running() {
			parts = append(parts, string(s.Phase)+" (Esc interrupts)")
		}
		left += " │ " + strings.Join(parts, " · ")
	}
	put(scr, 0, y, m.Width, left, stStatus)
	if m.Notice != "" {
		st := stStatus
		if m.NoticeErr {
			st = stStatusErr
		}
		n := " " + m.Notice + " "
		w := min(width(n), max(m.Width-width(left)-1, m.Width/2))
		put(scr, m.Width-w, y, w, n, st)
	}
}

// drawHelp centres the help (keys.go) over the screen; rows that do not fit
// are cut.
func drawHelp(scr tcell.Screen, m *Model) {
	lines := helpLines()
	w := 0
	for _, h := range lines {
		w = max(w, width(h))
	}
	w = min(w+4, m.Width)
	h := min(len(lines)+2, m.Height)
	x0, y0 := (m.Width-w)/2, (m.Height-h)/2
	for y := range h {
		fill(scr, x0, y0+y, w, stSelDim)
	}
	for i, t := range lines {
		if 1+i >= h-1 {
			break
		}
		put(scr, x0+2, y0+1+i, w-4, t, stSelDim)
	}
}
