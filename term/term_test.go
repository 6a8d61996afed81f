package term

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// screen draws m on a simulation screen of m's size and returns its rows.
func screen(t *testing.T, m *Model) []string {
	t.Helper()
	return rows(drawn(t, m))
}

// drawn draws m on a simulation screen of m's size, closed when the test
// ends, for a test that reads its cells' styles.
func drawn(t testing.TB, m *Model) tcell.SimulationScreen {
	t.Helper()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(scr.Fini)
	scr.SetSize(m.Width, m.Height)
	Draw(scr, m)
	scr.Show()
	return scr
}

func rows(scr tcell.SimulationScreen) []string {
	cells, w, h := scr.GetContents()
	out := make([]string, h)
	for y := range h {
		var b strings.Builder
		for x := 0; x < w; x++ {
			c := cells[y*w+x]
			if len(c.Runes) == 0 {
				continue // the second cell of a wide character
			}
			b.WriteString(string(c.Runes))
		}
		out[y] = b.String()
	}
	return out
}

func contains(rows []string, s string) bool {
	for _, r := range rows {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

func msg(off int64, role wire.Role, author, text string) wire.Event {
	return wire.Event{Offset: off, Type: wire.EventMessage, Role: role, Author: author, Text: text, State: wire.MessageComplete, At: t0}
}

// demo is a model with two sessions, the first focused and streaming.
func demo() *Model {
	m := NewModel(90, 20)
	m.Now = func() time.Time { return t0.Add(5 * time.Minute) }
	m.Conn = client.State{Phase: client.Connected}
	a := &SessionView{ID: "s-aaaaaaaa", Title: "planning", Follow: true, Phase: wire.PhaseRunning, Model: "m1",
		Effort: "high", Viewers: 2, Queued: 1, LastActivity: t0,
		Events:     []wire.Event{msg(1, "user", "user", "what is next?"), msg(2, "assistant", "m1", "first answer")},
		StreamTurn: "t2", StreamText: "streaming now"}
	b := &SessionView{ID: "s-bbbbbbbb", Title: "notes", Follow: true, Unread: 3, LastActivity: t0.Add(-2 * time.Hour)}
	m.Sessions, m.Focus = []*SessionView{a, b}, 0
	return m
}

func TestDrawPanes(t *testing.T) {
	t.Parallel()
	r := screen(t, demo())
	for _, want := range []string{
		"sessions", "● planning", "notes", "(3) 2h", // sidebar: running mark, unread, activity
		"user", "what is next?", "assistant · m1", "first answer", // transcript
		"assistant · m1 …", "streaming now", // the streaming reply
		"❯", // composer
		"connected │ m1 · effort high · 2 viewers · 1 queued · running (Esc interrupts)", // status bar
	} {
		if !contains(r, want) {
			t.Fatalf("screen lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if !strings.HasPrefix(r[len(r)-1], " connected") {
		t.Fatalf("status bar not on the last row: %q", r[len(r)-1])
	}
}

func TestCommittedReplyReplacesStream(t *testing.T) {
	t.Parallel()
	m := demo()
	s := m.Sessions[0]
	m.Item(s.ID, client.Item{Frame: wire.Frame{Op: wire.PushDelta, Text: &wire.TextPush{TurnID: "t2", Text: " more"}}})
	if s.StreamText != "streaming now more" {
		t.Fatalf("delta: %q", s.StreamText)
	}
	ev := msg(4, "assistant", "m1", "streaming now more, done")
	ev.TurnID = "t2"
	m.Item(s.ID, client.Item{Frame: wire.Frame{Op: wire.PushEvent, Event: &ev}})
	r := screen(t, m)
	if contains(r, "assistant · m1 …") || !contains(r, "streaming now more, done") {
		t.Fatalf("after commit:\n%s", strings.Join(r, "\n"))
	}
}

func TestWideCharactersWrap(t *testing.T) {
	t.Parallel()
	m := NewModel(30, 12) // no sidebar below 50 columns
	long := strings.Repeat("日本語", 6) + " 👩‍💻👩‍💻 done"
	m.Sessions = []*SessionView{{ID: "s", Follow: true, Events: []wire.Event{msg(1, "user", "user", long)}}}
	m.Focus = 0
	r := screen(t, m)
	joined := strings.Join(r, "")
	if !strings.Contains(joined, "日本語") || !strings.Contains(joined, "👩💻") || !strings.Contains(joined, "done") {
		t.Fatalf("wide text missing:\n%s", strings.Join(r, "\n"))
	}
	for i, row := range r[:len(r)-1] {
		if width(row) > 30 {
			t.Fatalf("row %d is %d cells: %q", i, width(row), row)
		}
	}
	// The CJK text is split into whole characters across lines.
	w := m.transcriptWidth()
	lines := m.Sessions[0].window(look{width: w}, 0, m.Sessions[0].lineCount(look{width: w}))
	for _, l := range lines {
		if width(l.text) > m.transcriptWidth() {
			t.Fatalf("line %q wider than %d", l.text, m.transcriptWidth())
		}
	}
}

func key(k tcell.Key, r rune, mod tcell.ModMask) *tcell.EventKey { return tcell.NewEventKey(k, r, mod) }

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Key(key(tcell.KeyRune, r, 0))
	}
}

func TestComposerKeys(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	typeText(m, "hello")
	m.Key(key(tcell.KeyEnter, 0, tcell.ModAlt))
	typeText(m, "world")
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0] != (cmdSend{Session: "s-aaaaaaaa", Text: "hello\nworld"}) {
		t.Fatalf("enter: %#v", cmds)
	}
	if len(m.Composer) != 0 {
		t.Fatalf("composer not cleared")
	}
	// Up on an empty composer recalls the last input; Down goes back.
	m.Key(key(tcell.KeyUp, 0, 0))
	if string(m.Composer) != "hello\nworld" {
		t.Fatalf("recall: %q", string(m.Composer))
	}
	m.Key(key(tcell.KeyDown, 0, 0))
	if string(m.Composer) != "" {
		t.Fatalf("down after recall: %q", string(m.Composer))
	}
	// Editing.
	typeText(m, "abc")
	m.Key(key(tcell.KeyLeft, 0, 0))
	m.Key(key(tcell.KeyBackspace2, 0, 0))
	typeText(m, "X")
	if string(m.Composer) != "aXc" {
		t.Fatalf("edit: %q", string(m.Composer))
	}
	// Whitespace is not sent.
	m.Key(key(tcell.KeyCtrlU, 0, 0))
	typeText(m, "   ")
	if cmds := m.Key(key(tcell.KeyEnter, 0, 0)); cmds != nil {
		t.Fatalf("blank sent: %#v", cmds)
	}
}

func TestNavigationKeys(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Key(key(tcell.KeyDown, 0, tcell.ModAlt))
	if m.Focus != 1 || m.Sessions[1].Unread != 0 {
		t.Fatalf("alt-down: focus %d unread %d", m.Focus, m.Sessions[1].Unread)
	}
	m.Key(key(tcell.KeyTab, 0, 0))
	if m.Pane != paneSidebar {
		t.Fatalf("tab did not move to the sidebar")
	}
	m.Key(key(tcell.KeyUp, 0, 0))
	if m.Focus != 0 {
		t.Fatalf("sidebar up: focus %d", m.Focus)
	}
	r := screen(t, m)
	if !contains(r, "planning") {
		t.Fatalf("sidebar:\n%s", strings.Join(r, "\n"))
	}
	// Typing in the sidebar goes to the composer.
	m.Key(key(tcell.KeyRune, 'x', 0))
	if m.Pane != paneComposer || string(m.Composer) != "x" {
		t.Fatalf("typing from the sidebar: pane %d composer %q", m.Pane, string(m.Composer))
	}
	if cmds := m.Key(key(tcell.KeyCtrlN, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdNewSession{}) {
		t.Fatalf("ctrl-n: %#v", cmds)
	}
	// A created session is focused, with the composer ready.
	m.Pane = paneSidebar
	m.Result(resCreated{Session: wire.Session{ID: "new", Epoch: "e"}})
	if m.Focused().ID != "new" || m.Pane != paneComposer {
		t.Fatalf("after create: focus %q pane %d", m.Focused().ID, m.Pane)
	}
}

func TestInterruptAndQuit(t *testing.T) {
	t.Parallel()
	m := demo() // the focused session is running
	if cmds := m.Key(key(tcell.KeyEscape, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdInterrupt{Session: "s-aaaaaaaa"}) {
		t.Fatalf("esc: %#v", cmds)
	}
	if cmds := m.Key(key(tcell.KeyCtrlC, 0, 0)); len(cmds) != 1 || cmds[0] != (cmdInterrupt{Session: "s-aaaaaaaa"}) || m.Quit {
		t.Fatalf("ctrl-c while running: %#v quit=%v", cmds, m.Quit)
	}
	m.Sessions[0].Phase = wire.PhaseIdle
	m.Key(key(tcell.KeyCtrlC, 0, 0))
	if m.Quit || !contains(screen(t, m), "press Ctrl-C again to quit") {
		t.Fatalf("first ctrl-c on idle: quit=%v", m.Quit)
	}
	m.Key(key(tcell.KeyCtrlC, 0, 0))
	if !m.Quit {
		t.Fatalf("second ctrl-c did not quit")
	}
	m2 := demo()
	m2.Key(key(tcell.KeyCtrlQ, 0, 0))
	if !m2.Quit {
		t.Fatalf("ctrl-q did not quit")
	}
	// A key between two Ctrl-C disarms.
	m3 := demo()
	m3.Sessions[0].Phase = wire.PhaseIdle
	m3.Key(key(tcell.KeyCtrlC, 0, 0))
	m3.Key(key(tcell.KeyRune, 'a', 0))
	m3.Key(key(tcell.KeyCtrlC, 0, 0))
	if m3.Quit {
		t.Fatalf("quit although another key came between")
	}
}

func TestSlashCommands(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].ETag = `"7"`
	run := func(line string) []Cmd {
		m.setComposer(line)
		return m.Key(key(tcell.KeyEnter, 0, 0))
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		line string
		want wire.SessionPatch
	}{
		{"/model gpt-x", wire.SessionPatch{Model: str("gpt-x")}},
		{"/effort low", wire.SessionPatch{Effort: str("low")}},
		{"/effort none", wire.SessionPatch{Effort: str("none")}},
		{"/effort default", wire.SessionPatch{Effort: str("")}},
		{"/title A new name", wire.SessionPatch{Title: str("A new name")}},
	}
	for _, tc := range cases {
		cmds := run(tc.line)
		if len(cmds) != 1 {
			t.Fatalf("%s: %#v", tc.line, cmds)
		}
		p := cmds[0].(cmdPatch)
		if p.Session != "s-aaaaaaaa" || p.ETag != `"7"` || !eqPatch(p.Patch, tc.want) {
			t.Fatalf("%s: %+v", tc.line, p)
		}
	}
	if cmds := run("/help"); cmds != nil || !m.ShowHelp {
		t.Fatalf("/help: %#v", cmds)
	}
	if r := screen(t, m); !contains(r, "Ctrl-N           new session") || contains(r, "/effort LEVEL") {
		t.Fatalf("help overlay:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyPgDn, 0, 0))
	if r := screen(t, m); !m.ShowHelp || !contains(r, "/effort LEVEL") {
		t.Fatalf("help overlay scrolled:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyRune, 'q', 0))
	if m.ShowHelp {
		t.Fatalf("help did not close")
	}
	if cmds := run("/frobnicate"); cmds != nil || !m.NoticeErr || !strings.Contains(m.Notice, "unknown command") {
		t.Fatalf("unknown: %#v %q", cmds, m.Notice)
	}
	if cmds := run("/model"); cmds != nil || string(m.Composer) != "/model " {
		t.Fatalf("no argument: %#v %q, composer %q", cmds, m.Notice, string(m.Composer))
	}
}

func eqPatch(a, b wire.SessionPatch) bool {
	eq := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.Title, b.Title) && eq(a.Model, b.Model) && eq(a.Effort, b.Effort)
}

func TestStatusBarStates(t *testing.T) {
	t.Parallel()
	m := demo()
	now := t0
	m.Now = func() time.Time { return now }
	cases := []struct {
		state client.State
		since time.Duration
		want  string
	}{
		{client.State{Phase: client.Connecting}, 0, "connecting…"},
		{client.State{Phase: client.Connected}, 0, "connected"},
		{client.State{Phase: client.Reconnecting, Attempt: 3, Next: 2 * time.Second}, 800 * time.Millisecond, "reconnecting in 1.2 s (attempt 3)"},
		{client.State{Phase: client.Unavailable}, 0, "daemon unavailable: press r to retry"},
	}
	for _, tc := range cases {
		now = t0
		m.ConnState(tc.state)
		now = t0.Add(tc.since)
		r := screen(t, m)
		if !strings.HasPrefix(r[len(r)-1], " "+tc.want) {
			t.Fatalf("status %q, want it to start with %q", r[len(r)-1], tc.want)
		}
	}
	// Unavailable: r (with an empty composer) retries.
	if cmds := m.Key(key(tcell.KeyRune, 'r', 0)); len(cmds) != 1 || cmds[0] != (cmdRetry{}) {
		t.Fatalf("r: %#v", cmds)
	}
	// Pointed at a server (ALBEDO_URL), it is the server that is away.
	m.Server = "https://albedo.example"
	r := screen(t, m)
	if want := " server unavailable (https://albedo.example): press r"; !strings.HasPrefix(r[len(r)-1], want) {
		t.Fatalf("status %q, want it to start with %q", r[len(r)-1], want)
	}
}

// Any size, however small, draws without panicking; the status bar stays
// on the last row.
func TestResizeAndTinyTerminals(t *testing.T) {
	t.Parallel()
	m := demo()
	for _, sz := range [][2]int{{20, 5}, {1, 1}, {0, 0}, {5, 2}, {49, 8}, {50, 8}, {200, 60}, {20, 5}} {
		m.Resize(sz[0], sz[1])
		r := screen(t, m)
		if sz[1] > 0 && sz[0] >= 12 && !strings.HasPrefix(r[len(r)-1], " connected") {
			t.Fatalf("%dx%d: status %q", sz[0], sz[1], r[len(r)-1])
		}
	}
	m.Resize(20, 5)
	r := screen(t, m)
	if contains(r, "sessions") {
		t.Fatalf("sidebar drawn at 20 columns:\n%s", strings.Join(r, "\n"))
	}
	if !contains(r, "streaming") {
		t.Fatalf("20x5 lost the transcript end:\n%s", strings.Join(r, "\n"))
	}
}

func TestScrollback(t *testing.T) {
	t.Parallel()
	m := NewModel(60, 10)
	s := &SessionView{ID: "s", Follow: true}
	for i := range 40 {
		s.Events = append(s.Events, msg(int64(i+1), "user", "user", "line "+string(rune('A'+i%26))))
	}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	if r := screen(t, m); contains(r, "line A") {
		t.Fatalf("follow mode shows the top")
	}
	m.Key(key(tcell.KeyHome, 0, 0))
	r := screen(t, m)
	if !contains(r, "line A") || !contains(r, "more lines (End)") {
		t.Fatalf("home:\n%s", strings.Join(r, "\n"))
	}
	// New events do not move a reader who scrolled up.
	ev := msg(41, "user", "user", "fresh")
	m.Item("s", client.Item{Frame: wire.Frame{Op: wire.PushEvent, Event: &ev}})
	if r := screen(t, m); !contains(r, "line A") {
		t.Fatalf("view moved on a new event")
	}
	m.Key(key(tcell.KeyPgDn, 0, 0))
	m.Mouse(tcell.NewEventMouse(0, 0, tcell.WheelDown, 0))
	m.Key(key(tcell.KeyEnd, 0, 0))
	if r := screen(t, m); !contains(r, "fresh") {
		t.Fatalf("end:\n%s", strings.Join(r, "\n"))
	}
	m.Mouse(tcell.NewEventMouse(0, 0, tcell.WheelUp, 0))
	if s.Follow {
		t.Fatalf("wheel up kept following")
	}
}

// Unread counts what happened while the client watched, not the history a
// reset brings, even when the status comes before that history has all
// arrived (its head runs ahead of the events, as the protocol allows).
func TestUnreadCountsOnlyNewMessages(t *testing.T) {
	t.Parallel()
	m := demo()
	b := m.Sessions[1]
	b.Unread = 0
	m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushReset, Reset: &wire.ResetPush{Epoch: "e", Head: 16}}})
	m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushStatus, Status: &wire.StatusPush{Phase: wire.PhaseIdle, Head: 16}}})
	for off := int64(1); off <= 16; off++ {
		old := msg(off, "user", "user", "old")
		m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushEvent, Event: &old}})
	}
	if b.Unread != 0 {
		t.Fatalf("history counted as unread: %d", b.Unread)
	}
	fresh := msg(17, "assistant", "echo", "new")
	m.Item(b.ID, client.Item{Frame: wire.Frame{Op: wire.PushEvent, Event: &fresh}})
	if b.Unread != 1 {
		t.Fatalf("unread %d, want 1", b.Unread)
	}
}

// A session deleted elsewhere, or whose access was taken back, leaves the
// sidebar, saying which; the focus stays on a neighbour.
func TestDeletedSessionLeavesTheSidebar(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Focus = 1
	m.SubEnded("s-aaaaaaaa", wire.Errorf(wire.CodeNotFound, "session %q was deleted", "s-aaaaaaaa"))
	if len(m.Sessions) != 1 || m.Focused().ID != "s-bbbbbbbb" || !strings.Contains(m.Notice, "deleted") {
		t.Fatalf("after delete: %d sessions, focus %v, notice %q", len(m.Sessions), m.Focused(), m.Notice)
	}
	m.SubEnded("s-bbbbbbbb", wire.Errorf(wire.CodeForbidden, "access to session %q was taken back", "s-bbbbbbbb"))
	if len(m.Sessions) != 0 || m.Focused() != nil || !strings.Contains(m.Notice, "access") {
		t.Fatalf("after the last one's access was taken back: %d sessions, notice %q", len(m.Sessions), m.Notice)
	}
	if r := screen(t, m); !contains(r, "No session yet") {
		t.Fatalf("empty sidebar:\n%s", strings.Join(r, "\n"))
	}
}

// Enter with no session open makes one and sends what was typed in it; a
// session that cannot be made gives the text back to the composer.
func TestFirstMessageMakesASession(t *testing.T) {
	m := NewModel(100, 30)
	for _, r := range "hello there" {
		m.Key(key(tcell.KeyRune, r, 0))
	}
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0] != (cmdNewSession{Then: "hello there"}) {
		t.Fatalf("enter with no session: %#v", cmds)
	}
	cmds = m.Result(resCreated{Session: wire.Session{ID: "first", Epoch: "e"}, Then: "hello there"})
	if len(cmds) != 1 || cmds[0] != (cmdSend{Session: "first", Text: "hello there"}) || m.Focused().ID != "first" {
		t.Fatalf("once made: %#v, focus %v", cmds, m.Focused())
	}

	m = NewModel(100, 30)
	for _, r := range "keep me" {
		m.Key(key(tcell.KeyRune, r, 0))
	}
	m.Key(key(tcell.KeyEnter, 0, 0))
	if cmds := m.Result(resCreated{Then: "keep me", Err: errors.New("the daemon is away")}); cmds != nil || string(m.Composer) != "keep me" {
		t.Fatalf("not made: %#v, composer %q", cmds, string(m.Composer))
	}
}
