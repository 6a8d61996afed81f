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

// longSession is a focused session of 60 messages, "needle" in 3 of them.
func longSession() *Model {
	m := NewModel(80, 20)
	s := &SessionView{ID: "s", Follow: true}
	for i := range 60 {
		text := "message number " + string(rune('A'+i%26))
		if i == 5 || i == 30 || i == 50 {
			text += " with a Needle in it"
		}
		role := wire.RoleUser
		if i%2 == 1 {
			role = wire.RoleAssistant
		}
		s.Events = append(s.Events, msg(int64(i+1), role, string(role), text))
	}
	m.Sessions, m.Focus = []*SessionView{s}, 0
	return m
}

// Ctrl-F finds text in the transcript, newest match first, highlights it
// and scrolls to it; Up goes to older matches, Down back; Esc closes and
// stays there.
func TestSearchTheTranscript(t *testing.T) {
	t.Parallel()
	m := longSession()
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	typeText(m, "needle")
	if r := screen(t, m); !contains(r, "with a Needle in it") || !contains(r, "search: needle · 3 lines") {
		t.Fatalf("first match:\n%s", strings.Join(r, "\n"))
	}
	s := m.Focused()
	at := func() string { return s.window(m.look(), m.search.at, 1)[0].text }
	newest := m.search.at
	m.Key(key(tcell.KeyUp, 0, 0))
	m.Key(key(tcell.KeyEnter, 0, 0))
	if m.search.at >= newest || !strings.Contains(at(), "number F with a Needle") {
		t.Fatalf("two matches up: line %d %q", m.search.at, at())
	}
	if r := screen(t, m); !contains(r, "number F with a Needle") || s.Follow {
		t.Fatalf("not scrolled to the oldest match:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyDown, 0, 0)) // the next newer match: message 30
	if !strings.Contains(at(), "number E with a Needle") {
		t.Fatalf("down: %q", at())
	}
	m.Key(key(tcell.KeyEscape, 0, 0))
	if m.search != nil || s.Follow {
		t.Fatal("Esc did not close the search where it was")
	}
}

// A search that finds nothing more in what is loaded reads older history
// a page at a time and goes on there: the match in the older page is found
// and shown, and the search stops asking after searchPages pages a key.
func TestSearchReadsOlderHistory(t *testing.T) {
	t.Parallel()
	m := NewModel(80, 20)
	s := &SessionView{ID: "s", Follow: true, More: true}
	s.Events = needlePage(301, 400, 0).Events
	m.Sessions, m.Focus = []*SessionView{s}, 0
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	var cmds []Cmd
	for _, r := range "needle" {
		cmds = append(cmds, m.Key(key(tcell.KeyRune, r, 0))...)
	}
	load, ok := only[cmdLoadOlder](cmds)
	if !ok || load.Before != 301 {
		t.Fatalf("no match loaded: the search asked for %#v", cmds)
	}
	if r := screen(t, m); !contains(r, "reading older history") {
		t.Fatalf("the status bar while it reads:\n%s", strings.Join(r, "\n"))
	}
	// Pages 201–300 (nothing), then 101–200 (a Needle at 150).
	cmds = m.Result(resOlder{Session: "s", Page: needlePage(201, 300, 0)})
	if load, ok = only[cmdLoadOlder](cmds); !ok || load.Before != 201 {
		t.Fatalf("after an empty page the search asked for %#v", cmds)
	}
	if cmds = m.Result(resOlder{Session: "s", Page: needlePage(101, 200, 150)}); len(cmds) != 0 {
		t.Fatalf("a match found, yet %#v", cmds)
	}
	if at := s.window(m.look(), m.search.at, 1)[0].text; !strings.Contains(at, "message 150 with a Needle") {
		t.Fatalf("the match is %q", at)
	}
	if r := screen(t, m); !contains(r, "message 150 with a Needle") || !contains(r, "search: needle · 1 lines") {
		t.Fatalf("the match not shown:\n%s", strings.Join(r, "\n"))
	}

	// A query that matches nothing reads searchPages pages, then waits
	// for the next key.
	m.Key(key(tcell.KeyEscape, 0, 0))
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	cmds = nil
	for _, r := range "z" {
		cmds = append(cmds, m.Key(key(tcell.KeyRune, r, 0))...)
	}
	first := s.Events[0].Offset
	for i := range searchPages + 1 {
		load, ok := only[cmdLoadOlder](cmds)
		if i == searchPages {
			if ok {
				t.Fatalf("page %d asked for, past the limit", i+1)
			}
			break
		}
		if !ok || load.Before != first {
			t.Fatalf("page %d: %#v", i+1, cmds)
		}
		// A made-up history long enough to go on: ten events a page.
		first -= 10
		p := needlePage(first, first+9, 0)
		p.More = true
		s.More = true
		cmds = m.Result(resOlder{Session: "s", Page: p})
	}
	if r := screen(t, m); !contains(r, "search: z · no match") {
		t.Fatalf("after the limit:\n%s", strings.Join(r, "\n"))
	}
	if cmds := m.Key(key(tcell.KeyUp, 0, 0)); len(cmds) != 1 {
		t.Fatalf("the next key reads on: %#v", cmds)
	}
}

// A page of older history that arrives while a search is open keeps the
// search on the line it was at: one the search asked for, when the query
// changed meanwhile and found a match in what was loaded, is not searched
// on from there (the match would jump to an older one).
func TestSearchKeepsItsPlaceWhenHistoryArrives(t *testing.T) {
	t.Parallel()
	m := NewModel(80, 20)
	s := &SessionView{ID: "s", Follow: true, More: true}
	s.Events = needlePage(301, 400, 350).Events
	m.Sessions, m.Focus = []*SessionView{s}, 0
	at := func() string { return s.window(m.look(), m.search.at, 1)[0].text }
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	if _, ok := only[cmdLoadOlder](m.Key(key(tcell.KeyRune, 'z', 0))); !ok {
		t.Fatal("no page asked for")
	}
	m.Key(key(tcell.KeyBackspace, 0, 0))
	for _, r := range "needle" {
		m.Key(key(tcell.KeyRune, r, 0))
	}
	if !strings.Contains(at(), "message 350 with a Needle") {
		t.Fatalf("the match in what was loaded: %q", at())
	}
	if cmds := m.Result(resOlder{Session: "s", Page: needlePage(201, 300, 250)}); len(cmds) != 0 {
		t.Fatalf("the page went on with the search: %#v", cmds)
	}
	if !strings.Contains(at(), "message 350 with a Needle") {
		t.Fatalf("after the page came, the match is %q", at())
	}
	// A page the scrolling asked for moves the match's line too.
	m.Result(resOlder{Session: "s", Page: needlePage(101, 200, 0)})
	if !strings.Contains(at(), "message 350 with a Needle") {
		t.Fatalf("after a scrolled-in page, the match is %q", at())
	}
}

// A paste while the search or go-to line is open goes into its query, as
// one line, and the composer keeps its draft.
func TestPasteGoesToTheOpenQuery(t *testing.T) {
	t.Parallel()
	m := longSession()
	m.setComposer("draft")
	paste := func(text string) []Cmd {
		m.Paste(true)
		for _, ev := range pasteKeys(text) {
			m.Key(ev)
		}
		return m.Paste(false)
	}
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	paste("a\tNeedle")
	if got := string(m.search.query); got != "a Needle" || string(m.Composer) != "draft" {
		t.Fatalf("search query %q, composer %q", got, string(m.Composer))
	}
	if r := screen(t, m); !contains(r, "search: a Needle · 3 lines") {
		t.Fatalf("the pasted query did not search:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyEscape, 0, 0))

	m.Sessions = append(m.Sessions, &SessionView{ID: "0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b", Title: "the other one"})
	m.Key(key(tcell.KeyCtrlG, 0, tcell.ModCtrl))
	paste("other\n")
	if got := string(m.filter.query); got != "other " || string(m.Composer) != "draft" {
		t.Fatalf("go-to query %q, composer %q", got, string(m.Composer))
	}
	long := strings.Repeat("x", 2*maxQuery)
	paste(long)
	if n := len(m.filter.query); n != maxQuery {
		t.Fatalf("a long paste made a query of %d runes", n)
	}
}

// The match is painted on the screen in the match style.
func TestSearchHighlights(t *testing.T) {
	t.Parallel()
	m := longSession()
	m.Key(key(tcell.KeyCtrlF, 0, tcell.ModCtrl))
	typeText(m, "needle")
	scr := drawn(t, m)
	if st := styleAt(t, scr, "Needle"); st.Bold(false).Underline(false) != stMatch {
		t.Fatalf("match style %v", st)
	}
}

// Ctrl-Y selects the last message; Up picks an older one; Enter copies it
// through the terminal (OSC 52, here the simulation's clipboard); c copies
// a reply's code; /copy copies the last reply and /copy code N its blocks.
func TestCopy(t *testing.T) {
	t.Parallel()
	m := longSession()
	s := m.Focused()
	code := msg(61, wire.RoleAssistant, "m", "Here:\n\n```sh\necho one\n```\n\nand\n\n```\necho two\n```")
	s.Events = append(s.Events, code)
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	if m.pick == nil || m.pick.event != 60 {
		t.Fatalf("pick %+v", m.pick)
	}
	m.Key(key(tcell.KeyUp, 0, 0))
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0] != (cmdCopy{Text: s.Events[59].Text}) || m.pick != nil {
		t.Fatalf("Enter copied %#v", cmds)
	}
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	if cmds := m.Key(key(tcell.KeyRune, 'c', 0)); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: "echo one"}) {
		t.Fatalf("c copied %#v", cmds)
	}
	for line, want := range map[string]string{"/copy": code.Text, "/copy code": "echo two", "/copy code 1": "echo one"} {
		if cmds := runLine(m, line); len(cmds) != 1 || cmds[0] != (cmdCopy{Text: want}) {
			t.Errorf("%s copied %#v", line, cmds)
		}
	}
	if cmds := runLine(m, "/copy code 3"); cmds != nil || !strings.Contains(m.Notice, "code 1 to 2") {
		t.Errorf("/copy code 3: %#v %q", cmds, m.Notice)
	}
	// A key that is not the pick's leaves it and does its own work.
	m.Key(key(tcell.KeyCtrlY, 0, tcell.ModCtrl))
	typeText(m, "hi")
	if m.pick != nil || string(m.Composer) != "hi" {
		t.Fatalf("typing after a pick: %v %q", m.pick, string(m.Composer))
	}
}

// The App puts what is copied on the terminal's clipboard.
func TestCopyReachesTheClipboard(t *testing.T) {
	t.Parallel()
	scr := tcell.NewSimulationScreen("UTF-8")
	if err := scr.Init(); err != nil {
		t.Fatal(err)
	}
	a := newApp(context.Background(), Options{Now: func() time.Time { return t0 }}, scr)
	defer a.cancel()
	a.run([]Cmd{cmdCopy{Text: "copied text"}})
	if got := string(scr.(interface{ GetClipboardData() []byte }).GetClipboardData()); got != "copied text" {
		t.Fatalf("clipboard %q", got)
	}
}

// The clipboard's sequence is OSC 52 for the clipboard "c", the text in
// base64, ended by BEL.
func TestOSC52(t *testing.T) {
	t.Parallel()
	if got, want := osc52("héllo\n"), "\x1b]52;c;aMOpbGxvCg==\x07"; got != want {
		t.Fatalf("osc52 = %q, want %q", got, want)
	}
}

// only is the one command of cmds, if it is one of type T.
func only[T Cmd](cmds []Cmd) (T, bool) {
	var c T
	if len(cmds) != 1 {
		return c, false
	}
	c, ok := cmds[0].(T)
	return c, ok
}

// needlePage is a page of user messages from to to, "message N" each, the
// one at needle (if any) with a Needle in it; older ones exist before 1.
func needlePage(from, to, needle int64) wire.Page {
	var p wire.Page
	for off := from; off <= to; off++ {
		text := fmt.Sprintf("message %d", off)
		if off == needle {
			text += " with a Needle in it"
		}
		p.Events = append(p.Events, msg(off, wire.RoleUser, "user", text))
	}
	p.More = from > 1
	return p
}
