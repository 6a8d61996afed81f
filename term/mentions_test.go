package term

import (
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// party is demo with its focused session idle, on provider "first",
// with participants: a profile, a bot and another profile.
func party() *Model {
	m := demo()
	m.Resize(100, 24)
	s := m.Sessions[0]
	s.Phase, s.StreamTurn, s.StreamText = wire.PhaseIdle, "", ""
	s.Provider, s.Participants = "first", []string{"second", "bot:helper", "sam"}
	return m
}

func tab(m *Model) string {
	m.Key(key(tcell.KeyTab, 0, 0))
	return string(m.Composer)
}

// A name being typed after @ lists who it may become above the
// composer; Tab completes it to "@name ", the first of several, and
// Tab again goes through the others, Shift-Tab back. Typing on ends the
// round: Tab is the pane's again.
func TestMentionTabCycles(t *testing.T) {
	t.Parallel()
	m := party()
	typeText(m, "hi @s")
	r := screen(t, m)
	if !contains(r, "@second          participant") || !contains(r, "@sam             participant") || contains(r, "@helper    ") || contains(r, "the session's provider") {
		t.Fatalf("the names for @s:\n%s", strings.Join(r, "\n"))
	}
	for _, want := range []string{"hi @second ", "hi @sam ", "hi @second "} {
		if got := tab(m); got != want {
			t.Fatalf("Tab: %q, want %q", got, want)
		}
	}
	if r := screen(t, m); !contains(r, "@sam             participant") {
		t.Fatalf("the names while Tab goes through them:\n%s", strings.Join(r, "\n"))
	}
	m.Key(key(tcell.KeyBacktab, 0, 0))
	if got := string(m.Composer); got != "hi @sam " || m.Cursor != len(m.Composer) {
		t.Fatalf("Shift-Tab: %q at %d", got, m.Cursor)
	}
	typeText(m, "ok")
	if r := screen(t, m); contains(r, "@second          participant") {
		t.Fatalf("the names stay after typing on:\n%s", strings.Join(r, "\n"))
	}
	if tab(m); m.Pane != paneSidebar || string(m.Composer) != "hi @sam ok" {
		t.Fatalf("Tab after typing on: pane %v, composer %q", m.Pane, string(m.Composer))
	}
}

// One name that starts so, in any case, is completed at once, with the
// space after it; the next Tab changes pane. A bot is mentioned by its
// name without "bot:"; the provider by its own.
func TestMentionTabCompletesTheOnlyName(t *testing.T) {
	t.Parallel()
	for typed, want := range map[string]string{"@SEC": "@second ", "ask @he": "ask @helper ", "@f": "@first ", "@": "@first "} {
		m := party()
		typeText(m, typed)
		if got := tab(m); got != want || m.Pane != paneComposer {
			t.Fatalf("%q Tab: %q (pane %v), want %q", typed, got, m.Pane, want)
		}
		if typed == "@" {
			continue // four names: Tab goes on to the next
		}
		if tab(m); m.Pane != paneSidebar {
			t.Fatalf("%q: the Tab after the only name did not change pane", typed)
		}
	}
	m := party()
	typeText(m, "ask @he")
	if r := screen(t, m); !contains(r, "@helper          participant, a bot") {
		t.Fatalf("the bot's line:\n%s", strings.Join(r, "\n"))
	}
}

// The rest of the word the cursor is in is replaced too, and a space
// already after it serves; going through the names keeps the text after
// as it was.
func TestMentionCompletesInsideText(t *testing.T) {
	t.Parallel()
	m := party()
	m.setComposer("hey @sexx there")
	m.Cursor = len("hey @se")
	if got := tab(m); got != "hey @second there" || m.Cursor != len("hey @second ") {
		t.Fatalf("Tab inside: %q, cursor %d", got, m.Cursor)
	}
	m.setComposer("@s  two spaces")
	m.Cursor = 2
	for _, want := range []string{"@second  two spaces", "@sam  two spaces", "@second  two spaces"} {
		if got := tab(m); got != want {
			t.Fatalf("Tab before two spaces: %q, want %q", got, want)
		}
	}
}

// Not a mention's place (an e-mail address), a name no one here has,
// a session where mentions mean nothing, a /command being typed: Tab
// completes no name.
func TestMentionTabElsewhere(t *testing.T) {
	t.Parallel()
	m := party()
	typeText(m, "mail ann@s")
	if tab(m); m.Pane != paneSidebar || string(m.Composer) != "mail ann@s" {
		t.Fatalf("an e-mail address: pane %v, %q", m.Pane, string(m.Composer))
	}

	m = party()
	typeText(m, "@zed")
	if got := tab(m); got != "@zed" || m.Pane != paneComposer || !m.NoticeErr || !strings.Contains(m.Notice, "@first @second @helper @sam") {
		t.Fatalf("no such name: %q pane %v notice %q", got, m.Pane, m.Notice)
	}

	m = party()
	m.Sessions[0].Participants = nil
	typeText(m, "@f")
	if r := screen(t, m); contains(r, "the session's provider") {
		t.Fatalf("names listed where mentions mean nothing:\n%s", strings.Join(r, "\n"))
	}
	if tab(m); m.Pane != paneSidebar {
		t.Fatal("Tab completed a name where mentions mean nothing")
	}
	m = party()
	m.Sessions[0].Participants, m.Sessions[0].Respond = nil, wire.RespondMentions
	typeText(m, "@f")
	if got := tab(m); got != "@first " {
		t.Fatalf("answering only mentions, the provider is one to mention: %q", got)
	}

	m = party()
	typeText(m, "/p")
	if got := tab(m); got != "/providers" || m.Pane != paneComposer {
		t.Fatalf("/p Tab: %q, pane %v: the slash menu's", got, m.Pane)
	}
}
