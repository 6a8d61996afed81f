package main

import (
	"strings"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// A short id is the id's last 8 characters, or as many more as tell it
// from every other listed id and every listed fork's parent.
func TestShortIDs(t *testing.T) {
	t.Parallel()
	ss := []wire.Session{
		{ID: "019ad2f1-7c00-7000-8000-00000039d669"},
		{ID: "019ad2f1-7c00-7000-8000-00a00039d669"},
		{ID: "019ad2f1-7c00-7000-8000-0000aaaa1111", Parent: &wire.ForkPoint{Session: "019ad2f1-7c00-7000-8000-00000000ffff", Offset: 3}},
		{ID: "short"},
	}
	want := map[string]string{
		"019ad2f1-7c00-7000-8000-00000039d669": "000039d669", // the first end the other lacks
		"019ad2f1-7c00-7000-8000-00a00039d669": "a00039d669",
		"019ad2f1-7c00-7000-8000-0000aaaa1111": "aaaa1111",
		"019ad2f1-7c00-7000-8000-00000000ffff": "0000ffff", // a parent not listed
		"short":                                "short",
	}
	got := shortIDs(ss)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("short id of %s = %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("short ids of %d ids: %v", len(got), got)
	}
}

// The table of albedo sessions: the full id first, and the short id,
// unread count, parent of a fork and the caller's pin as columns of their
// own.
func TestPrintSessions(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 6, 45, 0, 0, time.Local)
	ss := []wire.Session{
		{ID: "019ad2f1-7c00-7000-8000-0000aaaa1111", Title: "plan", Phase: wire.PhaseIdle, Head: 9, ResolvedProvider: "local",
			ResolvedModel: "gpt-x", UpdatedAt: at, Parent: &wire.ForkPoint{Session: "019ad2f1-7c00-7000-8000-00000039d669", Offset: 4}},
		{ID: "019ad2f1-7c00-7000-8000-00000039d669", Phase: wire.PhaseIdle, Head: 5, Provider: "echo", UpdatedAt: at},
	}
	var b strings.Builder
	if err := printSessions(&b, ss, map[string]wire.FeedItem{ss[1].ID: {ID: ss[1].ID, Unread: 100, Pinned: true}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	want := [][]string{
		{"ID", "TITLE", "PHASE", "EVENTS", "PROVIDER", "MODEL", "UNREAD", "UPDATED", "SHORT", "ID", "FORK", "OF", "PIN"},
		{ss[0].ID, "plan", "idle", "9", "local", "gpt-x", "-", "2026-11-30", "06:45", "aaaa1111", "⑂", "0039d669", "#4"},
		{ss[1].ID, "-", "idle", "5", "echo", "-", "100+", "2026-11-30", "06:45", "0039d669", "-", "★"},
	}
	for i, w := range want {
		if i >= len(lines) || strings.Join(strings.Fields(lines[i]), " ") != strings.Join(w, " ") {
			t.Fatalf("the table:\n%s\nline %d: want %q", b.String(), i, w)
		}
	}
}

// A name that fits several sessions lists them as a person picks one: by
// short id, with title, the session a fork came from and last activity.
func TestAmbiguousNameSaysHowToPick(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 6, 45, 0, 0, time.Local)
	a := wire.Session{ID: "019ad2f1-7c00-7000-8000-00000039d669", Title: "plan", UpdatedAt: at}
	b := wire.Session{ID: "019ad2f1-7c00-7000-8000-0000aaaa1111", Title: "plan", UpdatedAt: at.Add(time.Hour),
		Parent: &wire.ForkPoint{Session: a.ID, Offset: 4}}
	err := &ambiguousName{AmbiguousError: &client.AmbiguousError{Name: "plan", Candidates: []wire.Session{b, a}}, short: shortIDs([]wire.Session{a, b})}
	want := `"plan" names 2 sessions; name the one you mean by its short id (the first column):
  SHORT ID  ID                                    TITLE  FORK OF        LAST ACTIVE
  aaaa1111  019ad2f1-7c00-7000-8000-0000aaaa1111  plan   ⑂ 0039d669 #4  2026-11-30 07:45
  0039d669  019ad2f1-7c00-7000-8000-00000039d669  plan   -              2026-11-30 06:45`
	if got := describe(err); got != want {
		t.Errorf("the message:\n%s\nwant:\n%s", got, want)
	}
	if exitCode(err) != exitUsage {
		t.Errorf("exit status %d", exitCode(err))
	}
}
