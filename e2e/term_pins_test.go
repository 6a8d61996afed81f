//go:build !e2e_only || e2e_term

package e2e

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"albedo/wire"
)

// sidebarRows is the sidebar of a pane 84 columns wide or more (its
// sidebar is 28): each row's text left of its border, trimmed, the
// header and empty rows left out.
func sidebarRows(pane string) []string {
	var out []string
	for _, line := range strings.Split(pane, "\n") {
		left, _, ok := strings.Cut(line, "│")
		if ok = ok && utf8.RuneCountInString(left) == 28; !ok {
			continue // the status bar's
		}
		if left = strings.TrimSpace(left); left != "" && left != "sessions" {
			out = append(out, left)
		}
	}
	return out
}

// sidebarHas says whether a sidebar row names title.
func sidebarHas(pane, title string) bool {
	for _, r := range sidebarRows(pane) {
		if strings.Contains(r, title) {
			return true
		}
	}
	return false
}

// Pins and archives in two real terminals of one person. /pin in one
// puts the session first in both sidebars, marked ★, however old;
// /archive takes a session out of both at once; /archived in the other
// lists it, Enter opens it there, and /unarchive brings it back to both.
func TestTerminalPinsAndArchives(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	for _, title := range []string{"oldest", "middle", "newest"} {
		if _, err := fx.c.NewSession(fx.ctx, wire.SessionCreate{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	x := startTmux(t, fx.home, 140, 30)
	y := startTmux(t, fx.home, 140, 30)
	listed := func(s string) bool {
		r := sidebarRows(s)
		return strings.Contains(s, " connected") && len(r) == 3 && strings.Contains(r[0], "newest") && strings.Contains(r[2], "oldest")
	}
	x.waitPane("the three sessions, newest first", listed)
	y.waitPane("the three sessions, newest first", listed)

	x.keys("C-g")
	x.keys("-l", "oldest")
	x.keys("Enter")
	x.waitPane("the go-to line closed", func(s string) bool { return !strings.Contains(s, "go to:") })
	x.keys("-l", "/pin")
	x.keys("Enter")
	pinnedFirst := func(s string) bool {
		r := sidebarRows(s)
		return len(r) == 3 && strings.Contains(r[0], "★ oldest") && strings.Contains(r[1], "newest") && !strings.Contains(r[1], "★")
	}
	x.waitPane("oldest pinned, first", pinnedFirst)
	y.waitPane("oldest pinned, first, on the other terminal", pinnedFirst)

	x.keys("C-g")
	x.keys("-l", "middle")
	x.keys("Enter")
	x.waitPane("the go-to line closed", func(s string) bool { return !strings.Contains(s, "go to:") })
	x.keys("-l", "/archive")
	x.keys("Enter")
	gone := func(s string) bool { return len(sidebarRows(s)) == 2 && !sidebarHas(s, "middle") }
	// The notice, then the sidebar: a notice lasts seconds, and on a
	// loaded machine the sidebar's redraw may come after it went.
	x.waitPane("middle archived, said", func(s string) bool { return strings.Contains(s, "“middle” archived: /archived lists it") })
	x.waitPane("middle out of the sidebar", gone)
	y.waitPane("middle out of the other terminal's sidebar", gone)
	if s, err := fx.c.Sessions(fx.ctx); err != nil || !archivedIn(s, "middle") {
		t.Fatalf("the daemon's list: %+v %v", s, err)
	}

	y.keys("-l", "/archived")
	y.keys("Enter")
	y.waitPane("the archived sessions", func(s string) bool {
		return strings.Contains(s, "archived sessions · 1") && strings.Contains(s, "middle · archived")
	})
	y.keys("Enter")
	y.waitPane("middle open, archived", func(s string) bool {
		return sidebarHas(s, "middle") && strings.Contains(s, "“middle” is archived: /unarchive brings it back")
	})
	y.keys("-l", "/unarchive")
	y.keys("Enter")
	// The daemon's word, then both sidebars: the notice that says so lasts
	// seconds, which a loaded machine's pane captures may miss, and
	// term.TestArchiveAndArchived shows it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := fx.c.Sessions(fx.ctx)
		if err == nil && !archivedIn(s, "middle") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("middle still archived in the daemon's list: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polls the daemon's list: this test follows no feed of its own
	}
	back := func(s string) bool { return len(sidebarRows(s)) == 3 && sidebarHas(s, "middle") }
	y.waitPane("middle back", back)
	x.waitPane("middle back on the other terminal", back)
	x.keys("C-q")
	y.keys("C-q")
}

// archivedIn says whether the session titled title is archived in list.
func archivedIn(list []wire.Session, title string) bool {
	for _, s := range list {
		if s.Title == title {
			return s.Archived
		}
	}
	return false
}
