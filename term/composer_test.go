package term

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// The presses terminals send for a new line, as tcell's parser hands them
// over: ESC CR (Alt-Enter in tmux and legacy terminals) arrives as Alt +
// Ctrl + 'm', LF as Ctrl-J, and Shift-Enter as Enter with Shift where the
// terminal reports it. Each is a new line; none types a letter or sends.
func TestNewLineKeys(t *testing.T) {
	t.Parallel()
	for name, ev := range map[string]*tcell.EventKey{
		"ESC CR":      tcell.NewEventKey(tcell.KeyRune, 'm', tcell.ModAlt|tcell.ModCtrl),
		"Alt-Enter":   tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModAlt),
		"Ctrl-J":      tcell.NewEventKey(tcell.KeyCtrlJ, 0, tcell.ModCtrl),
		"ESC LF":      tcell.NewEventKey(tcell.KeyRune, 'j', tcell.ModAlt|tcell.ModCtrl),
		"Shift-Enter": tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModShift),
	} {
		t.Run(name, func(t *testing.T) {
			m := demo()
			m.Sessions[0].Phase = wire.PhaseIdle
			typeText(m, "line one")
			if cmds := m.Key(ev); cmds != nil {
				t.Fatalf("%s asked for %#v", name, cmds)
			}
			typeText(m, "line two")
			cmds := m.Key(key(tcell.KeyEnter, 0, 0))
			if len(cmds) != 1 || cmds[0] != (cmdSend{Session: "s-aaaaaaaa", Text: "line one\nline two"}) {
				t.Fatalf("sent %#v", cmds)
			}
		})
	}
}

// A rune typed with Ctrl that no binding takes is not text, and neither
// is a rune the key table binds with Alt (Alt-Y) where its binding does
// nothing; another rune with Alt is ESC and that rune.
func TestModifiedRunesAreNotTyped(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	m.Key(key(tcell.KeyRune, '5', tcell.ModAlt|tcell.ModCtrl))
	m.Key(key(tcell.KeyRune, 'y', tcell.ModAlt))
	typeText(m, "ok")
	m.Key(key(tcell.KeyRune, 'x', tcell.ModAlt))
	if got := string(m.Composer); got != "okx" {
		t.Fatalf("composer %q", got)
	}
}

// tcell reads ESC ESC followed by a key as that key with Alt, however
// late the key comes: two quick Escs and then "/new fake" arrive as Alt-/
// and "new fake". The slash is typed, so Enter runs /new and sends
// nothing; the Esc before it closes what was open, and interrupts no
// turn (a person who held Alt did not mean to).
func TestEscThenSlashIsACommand(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	m.Key(key(tcell.KeyRune, '/', tcell.ModAlt))
	typeText(m, "new fake")
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0] != (cmdNewSession{Provider: "fake"}) {
		t.Fatalf("Esc Esc /new fake Enter asked for %#v", cmds)
	}

	m = demo() // a turn runs
	if cmds := m.Key(key(tcell.KeyRune, '/', tcell.ModAlt)); len(cmds) != 0 {
		t.Fatalf("Alt-/ while a turn runs asked for %#v", cmds)
	}
	m.Key(key(tcell.KeyCtrlF, 0, 0))
	m.Key(key(tcell.KeyRune, 'h', tcell.ModAlt))
	if m.search != nil || string(m.Composer) != "/h" {
		t.Fatalf("ESC h with the search open: search %v, composer %q", m.search != nil, string(m.Composer))
	}
}

// A line that starts with a slash but names no command is never sent:
// it stays in the composer, and the notice says how to send one (//,
// which sends the line with one slash less).
func TestUnknownCommandIsNotSent(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	if cmds := runLine(m, "/xyz now"); len(cmds) != 0 {
		t.Fatalf("/xyz asked for %#v", cmds)
	}
	if got := string(m.Composer); got != "/xyz now" {
		t.Fatalf("the composer holds %q", got)
	}
	if !m.NoticeErr || !strings.Contains(m.Notice, "unknown command /xyz") || !strings.Contains(m.Notice, "begin it with //") {
		t.Fatalf("notice %q", m.Notice)
	}
	cmds := runLine(m, "//xyz now")
	if len(cmds) != 1 || cmds[0] != (cmdSend{Session: "s-aaaaaaaa", Text: "/xyz now"}) {
		t.Fatalf("//xyz sent %#v", cmds)
	}
}

// pasteKeys is text as tcell delivers it inside a bracketed paste: line
// ends as Enter (terminals send CR), tabs as Tab.
func pasteKeys(text string) []*tcell.EventKey {
	var out []*tcell.EventKey
	for _, r := range text {
		switch r {
		case '\n':
			out = append(out, key(tcell.KeyEnter, 0, 0))
		case '\t':
			out = append(out, key(tcell.KeyTab, 0, 0))
		default:
			out = append(out, key(tcell.KeyRune, r, 0))
		}
	}
	return out
}

// A paste keeps every character: its newlines do not send and its tabs do
// not switch panes; it lands at the cursor as one edit, and a paste into
// the sidebar goes to the composer like typing does.
func TestPasteKeepsEveryCharacter(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	typeText(m, "[]")
	m.Key(key(tcell.KeyLeft, 0, 0))
	m.Pane = paneSidebar
	text := "func f() {\n\treturn 1\n}\n\tx\t=\t2"
	m.Paste(true)
	for _, ev := range pasteKeys(text) {
		if cmds := m.Key(ev); cmds != nil {
			t.Fatalf("a pasted key asked for %#v", cmds)
		}
		if len(m.Composer) != 2 {
			t.Fatalf("the paste reached the composer before its end: %q", string(m.Composer))
		}
	}
	m.Paste(false)
	if got, want := string(m.Composer), "["+text+"]"; got != want || m.Pane != paneComposer {
		t.Fatalf("composer %q (pane %d), want %q", got, m.Pane, want)
	}
	if m.Cursor != len([]rune("["+text)) {
		t.Fatalf("cursor %d, want after the paste", m.Cursor)
	}
	m.Key(key(tcell.KeyEnd, 0, 0))
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0].(cmdSend).Text != "["+text+"]" {
		t.Fatalf("sent %#v", cmds)
	}
}

// The composer holds what the daemon takes and no more; the rest of a
// paste is cut with a notice, never sent to be refused.
func TestPasteIsCutAtTheInputLimit(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Paste(true)
	for range wire.MaxInputBytes + 100 {
		m.Key(key(tcell.KeyRune, 'x', 0))
	}
	m.Paste(false)
	if len(m.Composer) != wire.MaxInputBytes || !m.NoticeErr || !strings.Contains(m.Notice, "at most") {
		t.Fatalf("composer %d runes, notice %q", len(m.Composer), m.Notice)
	}
}

// A 200-line paste with tabs lands in the running App in one frame (folded,
// fold.go): no frame shows part of it.
func TestPasteLandsInOneFrame(t *testing.T) {
	t.Parallel()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	scr.SetSize(100, 30)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lines []string
	for i := range 200 {
		lines = append(lines, strings.Repeat("\t", i%3)+"line "+strings.Repeat("x", i%40))
	}
	text := strings.Join(lines, "\n")
	frames := make(chan int, 1<<12)
	var a *App
	a = newApp(ctx, Options{OnDraw: func() { frames <- len(a.m.unfolded(a.m.Composer)) }}, scr)
	a.m.Sessions, a.m.Focus = []*SessionView{{ID: "s", Follow: true}}, 0
	events := make(chan tcell.Event, 1<<14)
	go func() {
		events <- tcell.NewEventPaste(true)
		for _, ev := range pasteKeys(text) {
			events <- ev
		}
		events <- tcell.NewEventPaste(false)
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for len(a.m.unfolded(a.m.Composer)) < len([]rune(text)) {
		select {
		case ev := <-events:
			a.screenEvent(ev)
			a.drainScreen(events, tick.C)
			a.draw()
		case <-deadline:
			t.Fatalf("the paste never landed: %d of %d runes", len(a.m.unfolded(a.m.Composer)), len([]rune(text)))
		}
	}
	close(frames)
	for n := range frames {
		if n != 0 && n != len([]rune(text)) {
			t.Fatalf("a frame showed %d of the paste's %d runes", n, len([]rune(text)))
		}
	}
	if string(a.m.unfolded(a.m.Composer)) != text {
		t.Fatal("the composer does not hold the paste as pasted")
	}
}

// paste pastes text into m as a terminal does.
func paste(m *Model, text string) {
	m.Paste(true)
	for _, ev := range pasteKeys(text) {
		m.Key(ev)
	}
	m.Paste(false)
}

// A paste of six lines or more is folded in the composer: one label with
// its line count, the text around it as typed. Enter sends it whole;
// Ctrl-O unfolds it to edit; Backspace takes it out in one key; it
// follows its session's draft; a forged placeholder never gets in.
func TestLongPasteIsFolded(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Sessions[0].Phase = wire.PhaseIdle
	var lines []string
	for i := range 204 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	big := strings.Join(lines, "\n")
	typeText(m, "look: ")
	paste(m, big)
	typeText(m, " thanks")
	r := screen(t, m)
	if !contains(r, "❯ look: [pasted 204 lines · Ctrl-O shows] thanks") || contains(r, "line 203") {
		t.Fatalf("the composer:\n%s", strings.Join(r, "\n"))
	}
	if got := len(m.Composer); got != len("look: ")+1+len(" thanks") {
		t.Fatalf("the composer holds %d runes", got)
	}
	// A draft keeps its fold across a change of session.
	m.Key(key(tcell.KeyDown, 0, tcell.ModAlt))
	m.Key(key(tcell.KeyUp, 0, tcell.ModAlt))
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0].(cmdSend).Text != "look: "+big+" thanks" {
		t.Fatalf("sent %#v", cmds)
	}
	if len(m.folds) != 0 {
		t.Fatalf("%d pastes kept after sending", len(m.folds))
	}

	paste(m, big)
	m.Key(key(tcell.KeyBackspace2, 0, 0))
	if len(m.Composer) != 0 {
		t.Fatalf("Backspace left %q", string(m.Composer))
	}
	paste(m, "a\nb\nc")
	if string(m.Composer) != "a\nb\nc" {
		t.Fatalf("a short paste was folded: %q", m.shown(m.Composer))
	}
	m.setComposer("")
	paste(m, big)
	m.Key(key(tcell.KeyCtrlO, 0, 0))
	if string(m.Composer) != big || m.Cursor != len([]rune(big)) {
		t.Fatalf("Ctrl-O: cursor %d, composer %d runes", m.Cursor, len(m.Composer))
	}
	m.setComposer("")
	typeText(m, "x"+string(foldFirst)+"y")
	paste(m, string(foldFirst+1))
	if string(m.Composer) != "xy" {
		t.Fatalf("a placeholder was typed in: %q", string(m.Composer))
	}
}
