//go:build !e2e_only || e2e_core

package e2e

import (
	"strings"
	"testing"
)

// albedo sessions lists what you pinned first, marked ★; an archived
// session leaves the list for --archived's, still names itself and is
// still found by search; unarchived, it is back.
func TestCLIPinsAndArchives(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	home := fx.home
	old := newSession(t, home, "--title", "old")
	cli(t, home, "send", old, "the old words")
	mid := newSession(t, home, "--title", "mid")
	cli(t, home, "send", mid, "hello")
	newest := newSession(t, home, "--title", "newest")
	cli(t, home, "send", newest, "hello")

	cli(t, home, "sessions", "pin", "old")
	table := cli(t, home, "sessions")
	rows := strings.Split(strings.TrimSpace(table), "\n")
	if len(rows) != 4 || !strings.HasPrefix(rows[1], old+" ") || !strings.HasSuffix(strings.TrimSpace(rows[1]), "★") || strings.Contains(rows[2], "★") {
		t.Fatalf("the pinned session first, marked:\n%s", table)
	}

	cli(t, home, "sessions", "archive", "mid")
	if table := cli(t, home, "sessions"); strings.Contains(table, mid) {
		t.Fatalf("an archived session listed:\n%s", table)
	}
	if table := cli(t, home, "sessions", "--archived"); !strings.Contains(table, mid) || strings.Contains(table, newest) {
		t.Fatalf("--archived:\n%s", table)
	}
	if out := cli(t, home, "search", "hello"); !strings.Contains(out, "mid") {
		t.Fatalf("search leaves the archived session out:\n%s", out)
	}
	cli(t, home, "sessions", "unarchive", "mid")
	cli(t, home, "sessions", "unpin", old)
	table = cli(t, home, "sessions")
	// mid is back, first: its settings are its newest activity.
	if rows := strings.Split(strings.TrimSpace(table), "\n"); len(rows) != 4 || strings.Contains(table, "★") || !strings.HasPrefix(rows[1], mid+" ") {
		t.Fatalf("after unarchive and unpin:\n%s", table)
	}
}
