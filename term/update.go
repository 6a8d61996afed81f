package term

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

// How long the status bar keeps a notice: news for a moment, an error
// long enough to read it twice. Esc clears either sooner.
const (
	noticeFor      = 5 * time.Second
	errorNoticeFor = 20 * time.Second
)

// notify sets the status bar's notice, for a while (noticeFor).
func (m *Model) notify(isErr bool, msg string) {
	d := noticeFor
	if isErr {
		d = errorNoticeFor
	}
	m.Notice, m.NoticeErr, m.noticeUntil, m.noticeConn, m.noticeAt = msg, isErr, m.Now().Add(d), false, m.Now()
}

// notifyConn sets a notice about the connection, which lasts until its
// state next changes.
func (m *Model) notifyConn(msg string) {
	m.Notice, m.NoticeErr, m.noticeUntil, m.noticeConn = msg, false, time.Time{}, true
}

// Tick is the clock's beat (every 200 ms); it says whether the frame
// changed: the reconnect countdown runs, or a notice has just expired.
func (m *Model) Tick() bool {
	if m.Notice != "" && m.notice() == "" {
		m.Notice = ""
		return true
	}
	if s := m.Focused(); s != nil && s.running() {
		if e := m.elapsedText(s); e != m.elapsed {
			m.elapsed = e
			return true
		}
	}
	return m.Conn.Phase == client.Reconnecting
}

// elapsedText is how long s's turn has run, in whole seconds: "5 s",
// "2 m 05 s".
func (m *Model) elapsedText(s *SessionView) string {
	if s.turnSince.IsZero() {
		return ""
	}
	d := max(m.Now().Sub(s.turnSince), 0) / time.Second
	if d < 60 {
		return fmt.Sprintf("%d s", d)
	}
	return fmt.Sprintf("%d m %02d s", d/60, d%60)
}

// notice is the notice to show now, if any.
func (m *Model) notice() string {
	if m.Notice == "" || !m.noticeUntil.IsZero() && m.Now().After(m.noticeUntil) {
		return ""
	}
	return m.Notice
}

// Resize records the terminal's new size.
func (m *Model) Resize(w, h int) {
	m.Width, m.Height = w, h
}

// Key applies a key press and returns the side effects it asks for. The key
// table (keys.go) answers first; what it leaves is typing and line editing.
func (m *Model) Key(ev *tcell.EventKey) []Cmd {
	if m.pasting {
		m.pasteKey(ev)
		return nil
	}
	ev = canonical(ev)
	if r, ok := m.escThenRune(ev); ok {
		return m.escThen(r)
	}
	if m.ShowHelp {
		m.helpKey(ev)
		return nil
	}
	if m.asking != nil {
		return m.answer(ev)
	}
	if m.filter != nil {
		return m.filterKey(ev)
	}
	if m.search != nil {
		return m.searchKey(ev)
	}
	if m.pick != nil {
		return m.pickKey(ev)
	}
	if m.hits != nil {
		return m.hitsKey(ev)
	}
	if m.files != nil {
		return m.filesKey(ev)
	}
	armed := m.quitArmed
	cmds := m.press(ev)
	if armed {
		m.quitArmed = false // any press after the one that armed quitting disarms it
	}
	return cmds
}

// press runs the key table's binding for ev, or else the pane's fallback.
func (m *Model) press(ev *tcell.EventKey) []Cmd {
	if b := m.binding(ev); b != nil {
		return b.run(m)
	}
	if m.Pane == paneSidebar {
		return m.sidebarKey(ev)
	}
	return m.composerKey(ev)
}

// sidebarKey leaves the sidebar for the composer on Enter, Right or typing.
func (m *Model) sidebarKey(ev *tcell.EventKey) []Cmd {
	switch ev.Key() {
	case tcell.KeyEnter, tcell.KeyRight:
		m.Pane = paneComposer
	case tcell.KeyRune:
		// Typing goes to the composer, so nothing typed is lost.
		m.Pane = paneComposer
		return m.composerKey(ev)
	}
	return nil
}

// composerKey is typing and line editing in the composer. A notice
// about what the person did before (an unknown command, a refusal) goes
// once they write on: it is about the last thing they typed, not this.
func (m *Model) composerKey(ev *tcell.EventKey) []Cmd {
	if m.readOnlyHere() && ev.Key() == tcell.KeyRune && !m.commandAt(ev.Rune()) {
		m.refuseWriting()
		return nil
	}
	before := len(m.Composer)
	m.editComposer(ev)
	if len(m.Composer) != before || ev.Key() == tcell.KeyRune {
		m.menuFrom = "" // the slash menu filters by what is typed now
		m.mention = nil // and a mention's names by what is typed now
		m.dropStaleNotice()
		return m.typed()
	}
	return nil
}

// commandAt says whether r, typed at the cursor, is part of a /command:
// the only writing a read-only view takes (/copy, /help, …).
func (m *Model) commandAt(r rune) bool {
	if len(m.Composer) == 0 || m.Cursor == 0 {
		return r == '/'
	}
	return m.Composer[0] == '/'
}

// refuseWriting says, at the first key, that a read-only session sends
// nothing: the key is not taken, so no text piles up that could never go.
func (m *Model) refuseWriting() {
	m.notify(true, m.readOnlyWords()+" (/help lists what you can do)")
}

// staleAfter is how long a notice stays up however the person writes on:
// long enough to be seen.
const staleAfter = time.Second

// dropStaleNotice clears a notice shown for staleAfter or more, but one
// about the connection (it lasts while the state it tells of does).
func (m *Model) dropStaleNotice() {
	if m.Notice != "" && !m.noticeConn && m.Now().Sub(m.noticeAt) >= staleAfter {
		m.Notice = ""
	}
}

// typedEvery is how often the composer says "typing" while its draft
// changes: often enough that the mark (wire.TypingMS) does not lapse
// while someone types on.
const typedEvery = 2 * time.Second

// typed says the focused session's draft changed, at most every
// typedEvery; a /command is not a message being written.
func (m *Model) typed() []Cmd {
	s := m.Focused()
	if s == nil || m.readOnlyHere() || isCommand(m.Composer) {
		return nil
	}
	now := m.Now()
	if s.ID == m.typedIn && now.Sub(m.typedAt) < typedEvery {
		return nil
	}
	m.typedAt, m.typedIn = now, s.ID
	return []Cmd{cmdTyped{Session: s.ID}}
}

// isCommand says whether text is a /command, not a message: it starts
// with a slash, and not two (// sends a line starting with one).
func isCommand(text []rune) bool {
	return len(text) > 0 && text[0] == '/' && (len(text) == 1 || text[1] != '/')
}

// editComposer applies one key of line editing to the composer.
func (m *Model) editComposer(ev *tcell.EventKey) {
	switch ev.Key() {
	case tcell.KeyRune:
		// A rune with Alt or Ctrl is a key no binding took, not text.
		if ev.Modifiers()&(tcell.ModAlt|tcell.ModCtrl) == 0 {
			m.insert(ev.Rune())
		}
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		if m.Cursor > 0 {
			m.Composer = append(m.Composer[:m.Cursor-1], m.Composer[m.Cursor:]...)
			m.Cursor--
		} else {
			m.dropChip() // at the start: the last file attached (attach.go)
		}
	case tcell.KeyDelete:
		if m.Cursor < len(m.Composer) {
			m.Composer = append(m.Composer[:m.Cursor], m.Composer[m.Cursor+1:]...)
		}
	case tcell.KeyLeft:
		m.Cursor = max(m.Cursor-1, 0)
	case tcell.KeyRight:
		m.Cursor = min(m.Cursor+1, len(m.Composer))
	case tcell.KeyCtrlA, tcell.KeyHome:
		m.Cursor = 0
	case tcell.KeyCtrlE, tcell.KeyEnd:
		m.Cursor = len(m.Composer)
	case tcell.KeyCtrlU:
		m.Composer, m.Cursor = nil, 0
	}
}

func (m *Model) insert(r rune) { m.insertText([]rune{r}) }

// insertText puts text at the cursor as one edit. The composer holds at
// most wire.MaxInputBytes, the most the daemon takes: what would go past
// it is cut, and the status bar says so. Text never brings a fold's
// placeholder in (fold.go).
func (m *Model) insertText(text []rune) {
	if m.hasFolds(text) {
		text = slices.DeleteFunc(slices.Clone(text), isFold)
	}
	room := wire.MaxInputBytes - m.composerBytes()
	if n := runesBytes(text); n > room {
		keep := 0
		for used := 0; keep < len(text); keep++ {
			if used += utf8.RuneLen(text[keep]); used > room {
				break
			}
		}
		text = text[:keep]
		m.notify(true, fmt.Sprintf("a message holds at most %d KiB: the rest was not inserted", wire.MaxInputBytes>>10))
	}
	m.Composer = slices.Insert(m.Composer, m.Cursor, text...)
	m.Cursor += len(text)
	m.recall = len(m.Sent)
}

func runesBytes(rs []rune) int {
	n := 0
	for _, r := range rs {
		n += utf8.RuneLen(r)
	}
	return n
}

func (m *Model) setComposer(s string) {
	m.Composer = []rune(s)
	m.Cursor = len(m.Composer)
	m.dropFolds()
}

// submit sends the composer's text, with the files attached to the
// session (then it may be empty), or runs it as a /command.
func (m *Model) submit() []Cmd {
	text := string(m.unfolded(m.Composer))
	trimmed := strings.TrimSpace(text)
	s := m.Focused()
	if trimmed == "" {
		if s != nil && len(s.attached)+len(s.uploading) > 0 && !m.readOnlyHere() {
			return m.sendFiles(s, "")
		}
		return nil
	}
	if ms := m.menu(); len(ms) == 1 && ms[0].name() != trimmed && !commandNamed(trimmed) {
		// The start of one command only: it is that command (not a
		// command of its own this person may not run, as /archive is
		// /archived's start).
		trimmed = ms[0].name()
		text = trimmed
	}
	m.Sent = append(m.Sent, text)
	m.recall = len(m.Sent)
	m.setComposer("")
	if strings.HasPrefix(trimmed, "//") {
		text = strings.Replace(text, "//", "/", 1) // a line that starts with a slash, sent as text
	} else if trimmed[0] == '/' {
		return m.slash(trimmed)
	}
	if m.refuseHere() {
		m.setComposer(text) // kept: nothing typed is lost
		return nil
	}
	if s == nil {
		// The first message of a fresh home starts its conversation, as
		// in every chat: nothing typed is thrown away.
		m.notify(false, "creating a session…")
		return []Cmd{cmdNewSession{Then: text}}
	}
	if len(s.attached)+len(s.uploading) > 0 {
		return m.sendFiles(s, text)
	}
	s.Follow = true
	m.quietNote(s, text)
	return []Cmd{cmdSend{Session: s.ID, Text: text}}
}

func (m *Model) moveFocus(d int) {
	if len(m.Sessions) == 0 {
		return
	}
	m.setFocus((m.Focus + d + len(m.Sessions)) % len(m.Sessions))
}

// scroll moves the focused transcript by d lines (negative: up).
func (m *Model) scroll(d int) {
	s := m.Focused()
	if s == nil {
		return
	}
	lines := s.lineCount(m.look())
	h := m.transcriptHeight()
	maxTop := max(lines-h, 0)
	top := s.Top
	if s.Follow {
		top = maxTop
	}
	top = min(max(top+d, 0), maxTop)
	s.Top, s.Follow = top, top >= maxTop
}

// maybeLoadOlder asks for the previous page when the view is at the top of
// what is loaded and older history exists.
func (m *Model) maybeLoadOlder() []Cmd {
	s := m.Focused()
	if s == nil || s.Follow || s.Top > 0 || !s.More || len(s.Events) == 0 {
		return nil
	}
	return []Cmd{cmdLoadOlder{Session: s.ID, Before: s.Events[0].Offset}}
}

// Paste marks the start and end of a bracketed paste. The keys between
// are text, kept whole: a newline is a new line, not Enter, and a tab is a
// tab, not a change of pane. The paste goes into the composer as one edit
// at its end, so a long one costs one insert and one frame; while the
// search or go-to line is open, it goes there instead (pasteQuery).
func (m *Model) Paste(start bool) []Cmd {
	if start {
		m.pasting, m.pasted = true, m.pasted[:0]
		return nil
	}
	if !m.pasting {
		return nil
	}
	m.pasting = false
	defer func() { m.pasted = nil }()
	switch {
	case m.filter != nil:
		pasteQuery(&m.filter.query, m.pasted)
		m.filter.sel = 0
		return nil
	case m.search != nil:
		pasteQuery(&m.search.query, m.pasted)
		m.search.at, m.search.pages = -1, 0
		return m.findMatch(-1)
	}
	if m.Pane == paneSidebar {
		m.Pane = paneComposer // a paste is writing, like typing
	}
	if m.readOnlyHere() && (len(m.pasted) == 0 || !m.commandAt(m.pasted[0])) {
		m.refuseWriting()
		return nil
	}
	m.insertPaste(m.pasted)
	return nil
}

// insertPaste inserts a paste, folded when it is long (fold.go).
func (m *Model) insertPaste(text []rune) {
	before := m.Cursor
	m.insertText(text)
	ins := m.Composer[before:m.Cursor]
	if strings.Count(string(ins), "\n") < foldFrom-1 {
		return
	}
	r := m.fold(slices.Clone(ins))
	m.Composer = slices.Replace(m.Composer, before, m.Cursor, r)
	m.Cursor = before + 1
}

// maxQuery is the most runes a one-line query (search, go-to) holds.
const maxQuery = 200

// pasteQuery adds pasted text to a one-line query: its line ends and tabs
// become spaces, and it stops at maxQuery runes.
func pasteQuery(q *[]rune, pasted []rune) {
	for _, r := range pasted {
		if len(*q) >= maxQuery {
			return
		}
		if r == '\n' || r == '\t' {
			r = ' '
		}
		*q = append(*q, r)
	}
}

// pasteKey collects one key of a paste. Terminals send a pasted line end
// as CR (Enter) or LF (Ctrl-J); other control keys are not text and are
// dropped. The buffer stops growing at the composer's limit.
func (m *Model) pasteKey(ev *tcell.EventKey) {
	var r rune
	switch ev.Key() {
	case tcell.KeyRune:
		r = ev.Rune()
	case tcell.KeyEnter, tcell.KeyCtrlJ:
		r = '\n'
	case tcell.KeyTab:
		r = '\t'
	default:
		return
	}
	if len(m.pasted) <= wire.MaxInputBytes {
		m.pasted = append(m.pasted, r)
	}
}

// Mouse scrolls the transcript with the wheel.
func (m *Model) Mouse(ev *tcell.EventMouse) []Cmd {
	switch {
	case ev.Buttons()&tcell.WheelUp != 0:
		m.scroll(-3)
		return m.maybeLoadOlder()
	case ev.Buttons()&tcell.WheelDown != 0:
		m.scroll(3)
	}
	return nil
}

// ConnState records the stream's connection state.
func (m *Model) ConnState(s client.State) {
	if m.noticeConn && s.Phase != m.Conn.Phase {
		m.Notice, m.noticeConn = "", false
	}
	m.Conn = s
	m.connSince = m.Now()
}

// Item applies one push of session id's subscription.
func (m *Model) Item(id string, it client.Item) []Cmd {
	s := m.session(id)
	if s == nil {
		if it.Op == wire.PushReset {
			m.lostWhy(id, it.Reset.Reason) // the feed took it away first
		}
		return nil
	}
	switch it.Op {
	case wire.PushReset:
		if r := it.Reset.Reason; r == wire.ResetDeleted || r == wire.ResetRevoked {
			m.lose(s, r) // the subscription ends: nothing follows
			return nil
		}
		s.Epoch, s.Events, s.More, s.history = it.Reset.Epoch, nil, it.Reset.More, it.Reset.Head
		s.calls, s.fetched, s.fetchedFor = toolIndex{}, nil, ""
		s.rerender()
		s.StreamTurn, s.StreamText = "", ""
		s.Follow = true
	case wire.PushEvent:
		cmds := m.event(s, *it.Event)
		if j := m.jump; j != nil && j.session == id && s.caughtUp() {
			cmds = append(cmds, m.land()...)
		}
		return append(cmds, m.wantApprovals(s)...)
	case wire.PushPartial:
		s.StreamTurn, s.StreamText = it.Text.TurnID, it.Text.Text
	case wire.PushDelta:
		if s.StreamTurn != it.Text.TurnID {
			s.StreamTurn, s.StreamText = it.Text.TurnID, ""
		}
		s.StreamText += it.Text.Text
	case wire.PushPresence:
		s.People, s.MorePeople = it.Presence.People, it.Presence.More
	case wire.PushRead:
		m.readElsewhere(s, it.Read.Offset)
	case wire.PushStatus:
		st := it.Status
		s.Phase, s.TurnID, s.Queued, s.Model, s.Effort, s.ETag = st.Phase, st.TurnID, st.Queued, st.Model, st.Effort, st.ETag
		s.Pending, s.Agent = st.Pending, st.Agent
		if s.running() && s.turnOf != st.TurnID {
			s.turnSince, s.turnOf = m.Now(), st.TurnID // its started event, if it comes, is more exact
		}
		s.LastTurn = ""
		if st.LastTurn != nil {
			s.LastTurn = *st.LastTurn
		}
		s.Viewers = st.Viewers
		if s == m.Focused() && s.running() {
			m.quitArmed = false // Ctrl-C interrupts now: it no longer quits
		}
		return m.wantApprovals(s)
	}
	return nil
}

func (m *Model) event(s *SessionView, ev wire.Event) []Cmd {
	s.Events = append(s.Events, ev)
	m.touch(s, ev.At)
	switch ev.Type {
	case wire.EventMessage:
		if ev.Role == wire.RoleAssistant && ev.TurnID == s.StreamTurn {
			s.StreamTurn, s.StreamText = "", "" // the committed reply replaces the stream
		}
		if s.news(ev) && m.Focused() != s {
			s.Unread++
		}
	case wire.EventTurn:
		if ev.State == wire.TurnStarted {
			s.turnSince, s.turnOf, s.turnBy, s.turnContinues = ev.At, ev.TurnID, ev.Author, ev.Continues
		}
		if ev.State != wire.TurnStarted && ev.TurnID == s.StreamTurn {
			s.StreamTurn, s.StreamText = "", ""
		}
		s.metered(ev)
		m.cutOff(s, ev)
		return m.turnEnded(s, ev)
	case wire.EventCompaction:
		s.metered(ev)
	case wire.EventSettings:
		if ev.Title != nil {
			s.Title = *ev.Title
		}
		s.settingsEvent(ev)
	case wire.EventToolCall, wire.EventApproval, wire.EventToolResult:
		return m.toolEvent(s, ev)
	}
	return nil
}
