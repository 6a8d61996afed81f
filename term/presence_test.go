package term

import (
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"albedo/wire"
)

// Typing in the composer says so to the session's other watchers, at
// most every typedEvery; a /command does not.
func TestTypingIsToldThrottled(t *testing.T) {
	t.Parallel()
	m := demo()
	now := time.Unix(1000, 0)
	m.Now = func() time.Time { return now }
	typed := func(ev *tcell.EventKey) bool {
		for _, c := range m.Key(ev) {
			if c == (cmdTyped{Session: "s-aaaaaaaa"}) {
				return true
			}
		}
		return false
	}
	if !typed(key(tcell.KeyRune, 'h', 0)) {
		t.Fatal("the first key did not say typing")
	}
	if typed(key(tcell.KeyRune, 'i', 0)) {
		t.Fatal("the second key said typing again at once")
	}
	now = now.Add(typedEvery)
	if !typed(key(tcell.KeyBackspace2, 0, 0)) {
		t.Fatal("an edit after typedEvery did not say typing")
	}
	m.Key(key(tcell.KeyCtrlU, 0, 0))
	now = now.Add(typedEvery)
	if typed(key(tcell.KeyRune, '/', 0)) {
		t.Fatal("a /command said typing")
	}
}

func TestPresenceTextNamesPeople(t *testing.T) {
	t.Parallel()
	s := &SessionView{Viewers: 5, MorePeople: 2, People: []wire.Person{
		{Name: "ann", Devices: 2}, {Name: "bob", Devices: 1, Typing: true},
	}}
	if got, want := presenceText(s), "watching: ann ×2, bob ✎, +2 more"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := presenceText(&SessionView{Viewers: 1}); got != "1 viewer" {
		t.Fatalf("no presence yet: %q", got)
	}
}
