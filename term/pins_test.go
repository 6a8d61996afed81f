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

// enter types line in the composer and presses Enter.
func enter(m *Model, line string) []Cmd {
	m.setComposer(line)
	return m.Key(key(tcell.KeyEnter, 0, 0))
}

// Pinned sessions come first in the sidebar, marked ★, however old, as
// the feed says; /pin asks the daemon and moves the session at once;
// /unpin lets it go back to its place; a pin from another device comes
// in the feed. A viewer's link pins nothing.
func TestPinnedSessionsFirst(t *testing.T) {
	t.Parallel()
	m := NewModel(90, 20)
	m.Now = func() time.Time { return t0 }
	item := func(id string, ago time.Duration, pinned bool) wire.FeedItem {
		return wire.FeedItem{ID: id, Title: id, At: t0.Add(-ago), Pinned: pinned}
	}
	m.Feed(client.FeedUpdate{Start: true, Sessions: []wire.FeedItem{item("new", 0, false), item("mid", time.Hour, false), item("old", 48*time.Hour, true)}})
	if got := ids(m); !slices.Equal(got, []string{"old", "new", "mid"}) {
		t.Fatalf("the pinned first: %v", got)
	}
	if !contains(screen(t, m), "★ old") || contains(screen(t, m), "★ new") {
		t.Fatalf("the mark:\n%s", strings.Join(screen(t, m), "\n"))
	}
	m.setFocus(slices.Index(ids(m), "mid"))
	cmds := enter(m, "/pin")
	if len(cmds) != 1 || cmds[0] != (cmdPin{Session: "mid", Pin: true}) {
		t.Fatalf("/pin: %#v (%q)", cmds, m.Notice)
	}
	m.Result(resPinned{Session: "mid", Pin: true})
	if got := ids(m); !slices.Equal(got, []string{"mid", "old", "new"}) || m.Focused().ID != "mid" {
		t.Fatalf("after /pin: %v, focus %s", got, m.Focused().ID)
	}
	if cmds := enter(m, "/pin"); cmds != nil || !strings.Contains(m.Notice, "pinned already") {
		t.Fatalf("/pin again: %#v %q", cmds, m.Notice)
	}
	// Unpinned on another device: the feed says so.
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{item("old", 48*time.Hour, false)}})
	if got := ids(m); !slices.Equal(got, []string{"mid", "new", "old"}) {
		t.Fatalf("unpinned elsewhere: %v", got)
	}
	if cmds := enter(m, "/unpin"); len(cmds) != 1 || cmds[0] != (cmdPin{Session: "mid"}) {
		t.Fatalf("/unpin: %#v", cmds)
	}
	m.Result(resPinned{Session: "mid", Err: &client.Error{Code: wire.CodeUnavailable, Message: "down"}})
	if !m.NoticeErr || !strings.Contains(m.Notice, "not unpinned") || !m.session("mid").Pinned {
		t.Fatalf("a failed unpin: %q, pinned %v", m.Notice, m.session("mid").Pinned)
	}

	v := demo()
	v.ReadOnly = true
	if cmds := enter(v, "/pin"); cmds != nil || !v.NoticeErr {
		t.Fatalf("a viewer pins: %#v %q", cmds, v.Notice)
	}
	if names := menuNames(v, "/p"); slices.Contains(names, "/pin") {
		t.Fatalf("offered to a viewer: %v", names)
	}
}

// /archive, offered to the session's creator (and admins) alone, takes
// the session out of the sidebar once the daemon says so; one archived
// elsewhere leaves it when the feed says so, the status bar naming it
// when it was in front. /archived lists the archived sessions from the
// list of sessions; Enter opens one, which the feed's word that it is
// archived does not take away again, and /unarchive brings it back.
func TestArchiveAndArchived(t *testing.T) {
	t.Parallel()
	m := demo()
	a, b := m.Sessions[0], m.Sessions[1]
	a.Access, b.Access, a.ETag = wire.AccessCreator, wire.AccessWrite, "e1"
	if names := menuNames(m, "/arch"); !slices.Equal(names, []string{"/archive", "/archived"}) {
		t.Fatalf("the creator's menu: %v", names)
	}
	cmds := enter(m, "/archive")
	if len(cmds) != 1 || cmds[0] != (cmdArchive{Session: a.ID, Name: "planning", ETag: "e1", Archived: true}) {
		t.Fatalf("/archive: %#v %q", cmds, m.Notice)
	}
	// The feed may tell of the archive before its reply comes: the
	// session stays until the reply, which says what happened by name.
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{{ID: a.ID, Title: "planning", Archived: true}}})
	if got := ids(m); len(got) != 2 || m.Notice != "" {
		t.Fatalf("the feed before the reply: %v %q", got, m.Notice)
	}
	m.Result(resArchived{Session: a.ID, Archived: true, View: wire.Session{ID: a.ID, Archived: true}})
	if got := ids(m); !slices.Equal(got, []string{b.ID}) || !strings.Contains(m.Notice, "“planning” archived") {
		t.Fatalf("after /archive: %v %q", got, m.Notice)
	}
	if names := menuNames(m, "/arch"); !slices.Equal(names, []string{"/archived"}) {
		t.Fatalf("a writer's menu: %v", names)
	}
	if cmds := enter(m, "/archive"); cmds != nil || !strings.Contains(m.Notice, "only the session's creator or an admin may archive it") {
		t.Fatalf("a writer archives: %#v %q", cmds, m.Notice)
	}

	// Archived on another terminal, in front here.
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{{ID: b.ID, Title: "notes", Archived: true}}})
	if len(m.Sessions) != 0 || !strings.Contains(m.Notice, "session “notes” was archived") {
		t.Fatalf("archived elsewhere: %v %q", ids(m), m.Notice)
	}

	cmds = enter(m, "/archived")
	if len(cmds) != 1 || cmds[0] != (cmdArchivedList{}) {
		t.Fatalf("/archived: %#v", cmds)
	}
	list := []wire.Session{{ID: "live", Title: "live"}, {ID: a.ID, Title: "planning", Archived: true, Access: wire.AccessCreator, ETag: "e2"}}
	m.Result(resArchivedList{List: list})
	if r := screen(t, m); !contains(r, "archived sessions · 1") || !contains(r, "planning") || contains(r, "live ·") {
		t.Fatalf("the list:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyEnter, 0, 0))
	if s := m.Focused(); s == nil || s.ID != a.ID || !s.Archived || !strings.Contains(m.statusLeft(), "archived (/unarchive)") {
		t.Fatalf("opened: %v, status %q", ids(m), m.statusLeft())
	}
	m.Feed(client.FeedUpdate{Sessions: []wire.FeedItem{{ID: a.ID, Title: "planning", Archived: true}}})
	if m.Focused() == nil || m.Focused().ID != a.ID {
		t.Fatalf("the feed took the archived session opened away: %v", ids(m))
	}
	if names := menuNames(m, "/una"); !slices.Equal(names, []string{"/unarchive"}) {
		t.Fatalf("menu: %v", names)
	}
	cmds = enter(m, "/unarchive")
	if len(cmds) != 1 || cmds[0] != (cmdArchive{Session: a.ID, Name: "planning", ETag: "e2"}) {
		t.Fatalf("/unarchive: %#v %q", cmds, m.Notice)
	}
	m.Result(resArchived{Session: a.ID, View: wire.Session{ID: a.ID, ETag: "e3"}})
	if s := m.Focused(); s == nil || s.Archived || !strings.Contains(m.Notice, "back in the sidebar") || strings.Contains(m.statusLeft(), "archived") {
		t.Fatalf("after /unarchive: %v %q", ids(m), m.Notice)
	}
	no := false
	m.Item(a.ID, itemEvent(wire.Event{Offset: 9, Type: wire.EventSettings, Archived: &no, By: "ann", At: t0}))
	if r := screen(t, m); !contains(r, "· back from the archive (by ann)") {
		t.Fatalf("the settings event:\n%s", strings.Join(r, "\n"))
	}
}
