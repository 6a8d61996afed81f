package term

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// The status bar: the connection, the focused session's state, and on
// its right the notice (or the keys of what is open). A notice too long
// for the room the bar leaves it takes rows of its own above the bar,
// wrapped, so that a sentence is read whole.

// connText is the connection part of the status bar.
func (m *Model) connText() string {
	switch m.Conn.Phase {
	case client.Connected:
		return "connected"
	case client.Reconnecting:
		left := m.Conn.Next - m.Now().Sub(m.connSince)
		return fmt.Sprintf("reconnecting in %.1f s (attempt %d)", max(left, 0).Seconds(), m.Conn.Attempt)
	case client.Unavailable:
		if m.refused() {
			return m.refusedText()
		}
		if m.Server != "" {
			return "server unavailable (" + m.Server + "): press r to retry"
		}
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

// refused says whether the daemon refused the token for good (revoked,
// expired or wrong): trying again would only be refused again.
func (m *Model) refused() bool {
	return m.Conn.Phase == client.Unavailable && client.Code(m.Conn.Err) == wire.CodeUnauthorized
}

// refusedText is the status bar's word on a refused token: a link's
// viewer has a link, a member their access.
func (m *Model) refusedText() string {
	switch {
	case strings.Contains(daemonWords(m.Conn.Err), "expired"):
		return "this link has expired: ask its owner for a new one"
	case m.ReadOnly:
		return "this link was revoked: ask its owner for a new one"
	}
	return "your access was removed: this token was revoked"
}

// statusLeft is the status bar's left part: the connection, then the
// focused session's model, watchers, meter and run.
func (m *Model) statusLeft() string {
	left := " " + m.connText()
	if m.ReadOnly {
		left = " viewer (read-only) │" + left
	}
	if s := m.Focused(); s != nil {
		if parts := m.sessionParts(s); len(parts) > 0 {
			left += " │ " + strings.Join(parts, " · ")
		}
	}
	return left
}

// sessionParts is what the status bar says of s.
func (m *Model) sessionParts(s *SessionView) []string {
	var parts []string
	if !m.ReadOnly && m.readOnlyHere() {
		parts = append(parts, "read-only")
	}
	if s.Archived {
		parts = append(parts, "archived (/unarchive)")
	}
	if o := m.forkOrigin(s); o != "" {
		parts = append(parts, o)
	}
	if mt := m.modelText(s); mt != "" {
		parts = append(parts, mt)
	}
	if s.Effort != "" {
		parts = append(parts, "effort "+s.Effort)
	}
	if p := s.participantsText(); p != "" {
		parts = append(parts, p)
	}
	// Who watches is known only while connected: a count from before
	// the connection went is stale, and the daemon may be gone.
	if m.Conn.Phase == client.Connected {
		parts = append(parts, presenceText(s))
	}
	if mt := s.meterText(); mt != "" {
		parts = append(parts, mt)
	}
	if s.Queued > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", s.Queued))
	}
	// A running turn says for how long: a provider that says nothing
	// for a while is otherwise a frozen screen.
	since := ""
	if e := m.elapsedText(s); e != "" {
		since = " " + e
	}
	switch {
	case s.Phase == wire.PhaseApproval:
		parts = append(parts, waitingText(s)+since+" (Esc interrupts)")
	case s.Phase == wire.PhaseWaiting && strings.HasPrefix(s.Provider, "bot:"):
		parts = append(parts, "waiting for bot "+strings.TrimPrefix(s.Provider, "bot:")+" to connect"+since+" (Esc interrupts)")
	case s.running():
		parts = append(parts, string(s.Phase)+since+" (Esc interrupts)")
	}
	return parts
}

// statusNotice is what the status bar says on its right: the notice, or
// the keys of what is open, and whether it is an error.
func (m *Model) statusNotice() (string, bool) {
	switch {
	case m.search != nil:
		return m.search.status(), false
	case m.pick != nil && m.pick.said != "":
		return m.pick.said, false
	case m.pick != nil:
		return m.versionHint() + "↑↓ choose · Enter/y copy · c its code · f fork · r regenerate · e edit · Esc", false
	case m.files != nil:
		return "↑↓ choose · Enter opens · s saves · Esc · Ctrl-O: long tool calls", false
	case m.asking != nil:
		return m.asking.prompt, true
	case m.quitArmed:
		return "press Ctrl-C again to quit", false
	}
	return m.notice(), m.NoticeErr
}

// maxNoticeRows is the most rows a notice too long for the status bar
// takes above it.
const maxNoticeRows = 4

// noticeRows is the notice wrapped on rows of its own above the status
// bar, when the bar has no room for it whole; nil when it fits there. A
// question is read whole in the bar, over the rest.
func (m *Model) noticeRows() []string {
	notice, _ := m.statusNotice()
	if notice == "" || m.asking != nil || m.Width < 4 {
		return nil
	}
	room := max(m.Width-width(m.statusLeft())-1, m.Width/2)
	if width(notice)+2 <= room {
		return nil
	}
	rows := wrap(notice, m.Width-2)
	if len(rows) > maxNoticeRows {
		rows = rows[:maxNoticeRows]
		rows[maxNoticeRows-1] = truncate(rows[maxNoticeRows-1]+" …", m.Width-2)
	}
	return rows
}

func drawStatus(scr tcell.Screen, m *Model, l layout) {
	y := l.statusY
	if y < 0 {
		return
	}
	fill(scr, 0, y, m.Width, stStatus)
	left := m.statusLeft()
	put(scr, 0, y, m.Width, left, stStatus)
	notice, isErr := m.statusNotice()
	if notice == "" {
		return
	}
	st := stStatus
	if isErr {
		st = stStatusErr
	}
	if rows := m.noticeRows(); rows != nil {
		for i, r := range rows[:min(len(rows), l.noticeH)] {
			fill(scr, 0, l.noticeY+i, m.Width, st)
			put(scr, 1, l.noticeY+i, m.Width-2, r, st)
		}
		return
	}
	n := " " + notice + " "
	w := min(width(n), max(m.Width-width(left)-1, m.Width/2))
	if m.asking != nil {
		w = min(width(n), m.Width) // a question is read whole
	}
	put(scr, m.Width-w, y, w, n, st)
}
