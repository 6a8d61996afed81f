package term

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	// News at the top keeps the order (and spares the sort), and counts
	// at the next sort: news below it, older than it, moves its session up
	// to second only.
	ev = msg(8, wire.RoleUser, "bob", "again")
	ev.At = t0.Add(time.Minute)
	m.Item("s-1", itemEvent(ev))
	ev = msg(9, wire.RoleUser, "bob", "below")
	ev.At = t0.Add(30 * time.Second)
	m.Item("s-3", itemEvent(ev))
	if got := ids(m); !slices.Equal(got, []string{"s-1", "s-3", "s-2", "s-4"}) {
		t.Fatalf("after news at the top and below it: %v", got)
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

// sidebarRows is the sidebar's rows under its header, as drawn: each
// row's text left of its border, its indentation kept, the empty rows
// left out.
func sidebarRows(t *testing.T, m *Model) []string {
	t.Helper()
	var out []string
	for _, line := range screen(t, m)[1:] {
		left, _, ok := strings.Cut(line, "│")
		if !ok || utf8.RuneCountInString(left) != 28 {
			continue // the status bar's
		}
		if left = strings.TrimRight(left, " "); left != "" {
			out = append(out, left)
		}
	}
	return out
}

// focusOrder is the titles Down goes through in the sidebar, from its
// first row round to it again, and Up back.
func focusOrder(m *Model) (down, up []string) {
	m.setFocus(0)
	m.Pane = paneSidebar
	for range m.Sessions {
		down = append(down, m.Focused().Title)
		m.Key(key(tcell.KeyDown, 0, 0))
	}
	for range m.Sessions {
		m.Key(key(tcell.KeyUp, 0, 0))
		up = append(up, m.Focused().Title)
	}
	slices.Reverse(up)
	return down, up
}

// The sidebar groups forks under their parents, as the page's list does:
// the pinned first, a pinned fork too, out from under its parent; then
// each family by its latest activity, a fork right under its parent,
// indented two columns a level, its ⑂ and parent's name kept, and a fork
// whose parent the sidebar lacks at the top level. News in a fork of a
// fork brings its whole family up, unread count and all; a fork whose
// parent leaves goes up to the top level. Up and Down go through the
// sessions in the order shown.
func TestSidebarGroupsForks(t *testing.T) {
	t.Parallel()
	m := NewModel(100, 16)
	m.Now = func() time.Time { return t0 }
	item := func(id string, ago time.Duration, parent string) wire.FeedItem {
		it := wire.FeedItem{ID: id, Title: id, At: t0.Add(-ago)}
		if parent != "" {
			it.Parent = &wire.ForkPoint{Session: parent, Offset: 3}
		}
		return it
	}
	pinned := item("pinfork", 5*time.Hour, "beta")
	pinned.Pinned = true
	m.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{
		item("beta", 10*time.Minute, ""),
		item("orphan", 30*time.Minute, "gone-session"),
		item("alpha", time.Hour, ""),
		item("gamma", 90*time.Minute, ""),
		item("fork-a", 2*time.Hour, "alpha"),
		item("fork-aa", 3*time.Hour, "fork-a"),
		pinned,
	}})
	want := []string{
		"  ★ ⑂ pinfork ← beta",
		"  beta",
		"  ⑂ orphan",
		"  alpha",
		"    ⑂ fork-a ← alpha",
		"      ⑂ fork-aa ← fork-a",
		"  gamma",
	}
	check := func(when string, want []string) {
		t.Helper()
		r := sidebarRows(t, m)
		if len(r) != len(want) {
			t.Fatalf("%s: %d rows, want %d:\n%s", when, len(r), len(want), strings.Join(r, "\n"))
		}
		var titles []string
		for i, w := range want {
			if !strings.HasPrefix(r[i], w) {
				t.Fatalf("%s: row %d is %q, want it to start %q:\n%s", when, i, r[i], w, strings.Join(r, "\n"))
			}
			titles = append(titles, m.Sessions[i].Title)
		}
		if down, up := focusOrder(m); !slices.Equal(down, titles) || !slices.Equal(up, titles) {
			t.Fatalf("%s: Down goes %v, Up %v; shown %v", when, down, up, titles)
		}
	}
	check("at first", want)

	// A new message in the fork of a fork: alpha's family comes up whole,
	// under the pinned; the fork keeps its unread count.
	news := item("fork-aa", 0, "fork-a")
	news.Unread = 1
	news.Last = &wire.FeedLast{Author: "bob", Text: "news"}
	m.setFocus(slices.Index(ids(m), "gamma"))
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{news}})
	if r := sidebarRows(t, m); !strings.HasSuffix(r[3], "(1) now") {
		t.Fatalf("the unread count:\n%s", strings.Join(r, "\n"))
	}
	if m.Focused().Title != "gamma" {
		t.Fatalf("the focus moved to %s", m.Focused().Title)
	}
	check("after news in fork-aa", []string{want[0], want[3], want[4], "      ⑂ fork-aa ← f", want[1], want[2], want[6]})

	// Its parent gone, a fork goes up to the top level, at its own place
	// by activity.
	m.Feed(client.FeedUpdate{Gone: []string{"fork-a"}})
	check("after fork-a went", []string{want[0], "  ⑂ fork-aa", want[1], want[2], want[3], want[6]})
}

// Forks of forks deeper than four levels are indented as the fourth, so
// a title keeps its room; parents that make a loop (the daemon never
// sends one) lose no session, the loop's sessions after the others.
func TestSidebarForkDepthAndLoops(t *testing.T) {
	t.Parallel()
	m := NewModel(100, 16)
	m.Now = func() time.Time { return t0 }
	items := []wire.FeedItem{{ID: "d0", Title: "d0", At: t0}}
	for i := 1; i <= 5; i++ {
		items = append(items, wire.FeedItem{ID: fmt.Sprint("d", i), Title: fmt.Sprint("d", i), At: t0.Add(-time.Duration(i) * time.Minute),
			Parent: &wire.ForkPoint{Session: fmt.Sprint("d", i-1)}})
	}
	items = append(items,
		wire.FeedItem{ID: "x", Title: "x", At: t0.Add(-time.Hour), Parent: &wire.ForkPoint{Session: "y"}},
		wire.FeedItem{ID: "y", Title: "y", At: t0.Add(-2 * time.Hour), Parent: &wire.ForkPoint{Session: "x"}},
		wire.FeedItem{ID: "self", Title: "self", At: t0.Add(-3 * time.Hour), Parent: &wire.ForkPoint{Session: "self"}})
	m.Feed(client.FeedUpdate{Start: true, Sessions: items})
	r := sidebarRows(t, m)
	want := []string{"  d0", "    ⑂ d1", "      ⑂ d2", "        ⑂ d3", "          ⑂ d4", "          ⑂ d5", "  ⑂ self", "  ⑂ x", "    ⑂ y"}
	if len(r) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(r), len(want), strings.Join(r, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(r[i], w+" ") {
			t.Fatalf("row %d is %q, want it to start %q:\n%s", i, r[i], w, strings.Join(r, "\n"))
		}
	}
}
