package term

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/client"
	"albedo/wire"
)

func ids(m *Model) []string {
	var out []string
	for _, s := range m.Sessions {
		out = append(out, s.ID)
	}
	return out
}

// The sidebar is ordered by last activity, live: a session made elsewhere
// comes in at its place, not at the bottom; one with a new event moves to
// the top; the focus stays on its session throughout. The same events give
// the same order whatever order the list came in.
func TestSidebarFollowsActivity(t *testing.T) {
	t.Parallel()
	list := []wire.Session{
		{ID: "s-1", UpdatedAt: t0.Add(-3 * time.Hour)},
		{ID: "s-2", UpdatedAt: t0.Add(-1 * time.Hour)},
		{ID: "s-3", UpdatedAt: t0.Add(-2 * time.Hour)},
	}
	m := NewModel(90, 20)
	m.Result(resSessions{List: list})
	if got := ids(m); !slices.Equal(got, []string{"s-2", "s-3", "s-1"}) || m.Focused().ID != "s-2" {
		t.Fatalf("order %v focus %s", got, m.Focused().ID)
	}
	other := NewModel(90, 20)
	other.Result(resSessions{List: []wire.Session{list[2], list[0], list[1]}})
	if !slices.Equal(ids(other), ids(m)) {
		t.Fatalf("two terminals: %v and %v", ids(m), ids(other))
	}
	m.Result(resSessions{List: append(list, wire.Session{ID: "s-4", UpdatedAt: t0.Add(-90 * time.Minute)})})
	if got := ids(m); !slices.Equal(got, []string{"s-2", "s-4", "s-3", "s-1"}) {
		t.Fatalf("made elsewhere: %v", got)
	}
	ev := msg(7, wire.RoleUser, "bob", "hello")
	ev.At = t0
	m.Item("s-1", itemEvent(ev))
	if got := ids(m); !slices.Equal(got, []string{"s-1", "s-2", "s-4", "s-3"}) || m.Focused().ID != "s-2" {
		t.Fatalf("after activity: %v, focus %s", got, m.Focused().ID)
	}
	if r := screen(t, m); !strings.Contains(r[1], "s-1") || !strings.Contains(r[2], "s-2") {
		t.Fatalf("drawn:\n%s", strings.Join(r, "\n"))
	}
}

// Each session has its own draft: what is typed in one stays there when
// the focus moves, comes back with the focus, and is never sent to
// another; a deleted session's draft goes to the inputs Up recalls.
func TestDraftPerSession(t *testing.T) {
	t.Parallel()
	m := demo()
	typeText(m, "for planning")
	m.Key(key(tcell.KeyDown, 0, tcell.ModAlt))
	if len(m.Composer) != 0 || m.Focused().ID != "s-bbbbbbbb" {
		t.Fatalf("the draft followed the focus: %q", string(m.Composer))
	}
	typeText(m, "for notes")
	m.Key(key(tcell.KeyUp, 0, tcell.ModAlt))
	if got := string(m.Composer); got != "for planning" {
		t.Fatalf("back on planning: %q", got)
	}
	m.Key(key(tcell.KeyDown, 0, tcell.ModAlt))
	m.SubEnded("s-bbbbbbbb", wire.Errorf(wire.CodeNotFound, "deleted"))
	if m.Focused().ID != "s-aaaaaaaa" || string(m.Composer) != "for planning" {
		t.Fatalf("after the delete: focus %s composer %q", m.Focused().ID, string(m.Composer))
	}
	m.Sessions[0].Phase = wire.PhaseIdle
	cmds := m.Key(key(tcell.KeyEnter, 0, 0))
	if len(cmds) != 1 || cmds[0].(cmdSend).Text != "for planning" {
		t.Fatalf("sent %#v", cmds)
	}
	m.Key(key(tcell.KeyUp, 0, 0))
	m.Key(key(tcell.KeyUp, 0, 0))
	if got := string(m.Composer); got != "for notes" {
		t.Fatalf("the deleted session's draft is not in the recall: %q", got)
	}
}

// Ctrl-G and a few letters reach any of 40 sessions: the list narrows to
// titles or ids holding them, Enter focuses the selected one.
func TestGoToSession(t *testing.T) {
	t.Parallel()
	m := NewModel(100, 30)
	var list []wire.Session
	for i := range 40 {
		list = append(list, wire.Session{ID: "0190aaaa-0000-7000-8000-0000000000" + string(rune('a'+i/26)) + string(rune('a'+i%26)),
			Title: "session number " + string(rune('A'+i%26)) + string(rune('a'+i/26)), UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	list[7].Title = "Quarterly report"
	m.Result(resSessions{List: list})
	m.Key(key(tcell.KeyCtrlG, 0, 0))
	typeText(m, "quart")
	if got := m.matches(); len(got) != 1 || got[0].Title != "Quarterly report" {
		t.Fatalf("matches %v", got)
	}
	if r := screen(t, m); !contains(r, "go to: quart") || !contains(r, "Quarterly report") || contains(r, "session number") {
		t.Fatalf("filtered sidebar:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyEnter, 0, 0))
	if m.Focused().Title != "Quarterly report" || m.filter != nil || m.Pane != paneComposer {
		t.Fatalf("after Enter: focus %q filter %v", m.Focused().Title, m.filter)
	}
	// By the short id the sidebar shows, and Down to the second match.
	m.Key(key(tcell.KeyCtrlG, 0, 0))
	typeText(m, "00000a")
	m.Key(key(tcell.KeyDown, 0, 0))
	want := m.matches()[1]
	m.Key(key(tcell.KeyEnter, 0, 0))
	if m.Focused() != want {
		t.Fatalf("focus %s, want %s", m.Focused().ID, want.ID)
	}
	// Esc closes without moving.
	m.Key(key(tcell.KeyCtrlG, 0, 0))
	typeText(m, "zzz")
	if r := screen(t, m); !contains(r, "no session matches") {
		t.Fatalf("no match:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyEscape, 0, 0))
	if m.filter != nil || m.Focused() != want || len(m.Composer) != 0 {
		t.Fatalf("after Esc: filter %v focus %s composer %q", m.filter, m.Focused().ID, string(m.Composer))
	}
}

// Below 70 columns the sidebar starts hidden; Ctrl-S shows and hides it
// at any width, and the choice holds across a resize; Tab brings a hidden
// one while it has the keys.
func TestSidebarHidesOnNarrowTerminals(t *testing.T) {
	t.Parallel()
	m := demo()
	m.Resize(60, 20)
	shown := func() bool { return strings.Contains(screen(t, m)[0], "sessions") }
	if shown() || m.layout().mainW != 60 {
		t.Fatalf("at 60 columns the sidebar shows:\n%s", strings.Join(screen(t, m), "\n"))
	}
	m.Key(key(tcell.KeyTab, 0, 0))
	if !shown() {
		t.Fatal("Tab to a hidden sidebar does not show it")
	}
	m.Key(key(tcell.KeyTab, 0, 0))
	if shown() {
		t.Fatal("back in the composer, the sidebar stays")
	}
	m.Key(key(tcell.KeyCtrlS, 0, 0))
	if !shown() {
		t.Fatal("Ctrl-S does not show it")
	}
	m.Resize(100, 20)
	m.Key(key(tcell.KeyCtrlS, 0, 0))
	if shown() || m.Pane != paneComposer {
		t.Fatal("Ctrl-S does not hide it at 100 columns")
	}
	m.Resize(120, 20)
	if shown() {
		t.Fatal("a resize undid the choice")
	}
}

// A fork shows as one in the sidebar, from the feed as from the list: ⑂
// before its name and its parent's name after it, where the sidebar
// holds the parent; a session that is no fork has neither.
func TestSidebarMarksForks(t *testing.T) {
	t.Parallel()
	m := NewModel(100, 10)
	m.Now = func() time.Time { return t0 }
	m.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{
		{ID: "p", Title: "plan", At: t0},
		{ID: "f", Title: "try", At: t0, Parent: &wire.ForkPoint{Session: "p", Offset: 4}},
		{ID: "g", Title: "orphan", At: t0, Parent: &wire.ForkPoint{Session: "gone-session", Offset: 2}},
	}})
	r := screen(t, m)
	for _, want := range []string{"⑂ try ← plan", "⑂ orphan "} {
		if !contains(r, want) {
			t.Fatalf("the sidebar lacks %q:\n%s", want, strings.Join(r, "\n"))
		}
	}
	if contains(r, "⑂ plan") || contains(r, "← gone") {
		t.Fatalf("a mark where none belongs:\n%s", strings.Join(r, "\n"))
	}
}
