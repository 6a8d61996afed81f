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

// versionsModel is a session "plan" of two questions and their replies,
// forked twice: an edit of the second question (a fork at the event
// before it) and a regenerate of its reply (a fork at the question).
func versionsModel() (*Model, *SessionView) {
	m := NewModel(100, 24)
	m.Now = func() time.Time { return t0.Add(time.Minute) }
	m.Conn = client.State{Phase: client.Connected, Role: wire.TokenOwner}
	p := &SessionView{ID: "plan", Title: "plan", Follow: true, Access: wire.AccessCreator, LastActivity: t0,
		Events: []wire.Event{msg(1, "user", "ann", "first question"), msg(2, "assistant", "m1", "first answer"),
			msg(3, "user", "ann", "second question"), msg(4, "assistant", "m1", "second answer")}}
	m.Sessions, m.Focus = []*SessionView{p}, 0
	return m, p
}

var (
	editFork  = wire.Session{ID: "edit", Title: "plan (fork 1)", Parent: &wire.ForkPoint{Session: "plan", Offset: 2}, Access: wire.AccessCreator}
	rerunFork = wire.Session{ID: "rerun", Title: "plan (fork 2)", Parent: &wire.ForkPoint{Session: "plan", Offset: 3}, Access: wire.AccessCreator}
)

// headerOf is the header row of the message whose text row holds text.
func headerOf(t *testing.T, m *Model, text string) string {
	t.Helper()
	r := screen(t, m)
	for i, row := range r {
		if strings.Contains(row, text) && i > 0 {
			return r[i-1]
		}
	}
	t.Fatalf("no %q on screen:\n%s", text, strings.Join(r, "\n"))
	return ""
}

// An edited question and a regenerated reply show ‹ 1/2 › in their
// headers, in the original; the other messages none. The forks are read
// once per origin, when the session comes in front, not per message nor
// per event, and again when the feed shows a fork not among them.
func TestVersionsShowInTheTranscript(t *testing.T) {
	t.Parallel()
	m, p := versionsModel()
	cmds := m.WantVersions()
	if !slices.Equal(cmds, []Cmd{cmdVersions{Origin: "plan"}}) {
		t.Fatalf("the session in front asks for %#v", cmds)
	}
	if again := m.WantVersions(); again != nil {
		t.Fatalf("asked again: %#v", again)
	}
	m.Result(resVersions{Origin: "plan", Forks: []wire.Session{editFork, rerunFork}})
	for text, want := range map[string]string{"first question": "", "first answer": "", "second question": "‹ 1/2 ›", "second answer": "‹ 1/2 ›"} {
		if h := headerOf(t, m, text); strings.Contains(h, "‹") != (want != "") || want != "" && !strings.Contains(h, want) {
			t.Errorf("the header of %q: %q, want %q", text, h, want)
		}
	}
	if cmds := m.Item("plan", itemEvent(msg(5, "user", "ann", "third"))); cmds != nil || m.WantVersions() != nil {
		t.Fatalf("an event asks for %#v", cmds)
	}

	// A third version of the question, made elsewhere: the feed says so.
	third := wire.FeedItem{ID: "edit2", Title: "plan (fork 3)", Parent: &wire.ForkPoint{Session: "plan", Offset: 2}, Access: wire.AccessCreator, At: t0}
	if cmds := m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{third}}); !slices.Contains(cmds, Cmd(cmdVersions{Origin: "plan"})) {
		t.Fatalf("a fork made elsewhere asks for %#v", cmds)
	}
	if cmds := m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{third}}); len(cmds) != 0 {
		t.Fatalf("asked while a read is on its way: %#v", cmds)
	}
	e2 := wire.Session{ID: "edit2", Parent: third.Parent}
	if cmds := m.Result(resVersions{Origin: "plan", Forks: []wire.Session{editFork, rerunFork, e2}}); !slices.Equal(cmds, []Cmd{cmdVersions{Origin: "plan"}}) {
		t.Fatalf("the read wanted again after it: %#v", cmds)
	}
	m.Result(resVersions{Origin: "plan", Forks: []wire.Session{editFork, rerunFork, e2}})
	if h := headerOf(t, m, "second question"); !strings.Contains(h, "‹ 1/3 ›") {
		t.Fatalf("three versions: %q", h)
	}
	if m.Focus = slices.Index(m.Sessions, p); m.Focused() != p {
		t.Fatal("lost the focus")
	}
}

// On a message selected (Ctrl-Y), → opens its next version with its
// message there selected, and ← the one before; in the fork, the parent
// is read no more (its forks are known) and the fork's own forks are.
func TestVersionsSwitchWithArrows(t *testing.T) {
	t.Parallel()
	m, _ := versionsModel()
	m.WantVersions()
	m.Result(resVersions{Origin: "plan", Forks: []wire.Session{editFork, rerunFork}})
	m.Key(key(tcell.KeyCtrlY, 0, 0))
	m.Key(key(tcell.KeyUp, 0, 0)) // the second question
	if bar := said(t, m); !strings.Contains(bar, "←→ version 1/2") {
		t.Fatalf("the pick's keys: %q", bar)
	}
	m.Key(key(tcell.KeyLeft, 0, 0))
	if bar := said(t, m); m.Focused().ID != "plan" || m.pick == nil || !strings.Contains(bar, "version 1 of 2 is the first") {
		t.Fatalf("← on the first version: %s, the status bar %q", m.Focused().ID, bar)
	}
	m.Key(key(tcell.KeyRight, 0, 0))
	s := m.Focused()
	if s.ID != "edit" || m.jump == nil || !m.jump.after || m.jump.offset != 2 {
		t.Fatalf("→ opened %s, jump %+v", s.ID, m.jump)
	}
	if cmds := m.WantVersions(); !slices.Equal(cmds, []Cmd{cmdVersions{Origin: "edit"}}) {
		t.Fatalf("the fork asks for %#v", cmds)
	}
	// Its history arrives: the edited question is selected, ‹ 2/2 ›.
	m.Item("edit", client.Item{Frame: wire.Frame{Op: wire.PushReset, Reset: &wire.ResetPush{Epoch: "e", Head: 4}}})
	for _, ev := range []wire.Event{msg(1, "user", "ann", "first question"), msg(2, "assistant", "m1", "first answer"),
		msg(3, "user", "ann", "second question, edited"), msg(4, "assistant", "m1", "edited answer")} {
		m.Item("edit", itemEvent(ev))
	}
	if m.pick == nil || s.Events[m.pick.event].Offset != 3 {
		t.Fatalf("selected in the fork: %+v", m.pick)
	}
	m.Result(resVersions{Origin: "edit"})
	if h := headerOf(t, m, "second question, edited"); !strings.Contains(h, "‹ 2/2 ›") {
		t.Fatalf("the edit's header: %q", h)
	}
	if h := headerOf(t, m, "edited answer"); strings.Contains(h, "‹") {
		t.Fatalf("the edit's reply has versions: %q", h)
	}
	m.Key(key(tcell.KeyLeft, 0, 0))
	if m.Focused().ID != "plan" || m.pick == nil || m.Focused().Events[m.pick.event].Offset != 3 {
		t.Fatalf("← back: %s, %+v", m.Focused().ID, m.pick)
	}
}

// A version the sidebar does not hold joins it: a fork from the forks
// read, a parent from the daemon.
func TestVersionsOpenWhatTheSidebarLacks(t *testing.T) {
	t.Parallel()
	m := NewModel(100, 24)
	m.Conn = client.State{Phase: client.Connected}
	f := newSessionView(rerunFork)
	f.Events = []wire.Event{msg(1, "user", "ann", "first question"), msg(2, "assistant", "m1", "first answer"),
		msg(3, "user", "ann", "second question"), msg(5, "assistant", "m1", "another answer")}
	m.Sessions, m.Focus = []*SessionView{f}, 0
	if cmds := m.WantVersions(); len(cmds) != 2 {
		t.Fatalf("a fork asks for %#v", cmds)
	}
	m.Result(resVersions{Origin: "plan", Forks: []wire.Session{editFork, rerunFork}})
	m.Result(resVersions{Origin: "rerun"})
	if h := headerOf(t, m, "another answer"); !strings.Contains(h, "‹ 2/2 ›") {
		t.Fatalf("the regenerated reply: %q", h)
	}
	m.Key(key(tcell.KeyCtrlY, 0, 0))
	cmds := m.Key(key(tcell.KeyLeft, 0, 0))
	if !slices.Equal(cmds, []Cmd{cmdVersionOpen{Session: "plan", At: 3}}) {
		t.Fatalf("← to a parent not in the sidebar: %#v", cmds)
	}
	m.Result(resVersionOpen{Session: wire.Session{ID: "plan", Title: "plan"}, At: 3})
	if s := m.Focused(); s == nil || s.ID != "plan" || m.jump == nil {
		t.Fatalf("the parent opened: %v, jump %+v", s, m.jump)
	}
}
