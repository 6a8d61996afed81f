package api

import (
	"testing"

	"albedo/wire"
)

// A person's typing mark goes when they send: the watcher who saw them
// typing sees them not typing once their message is in, not seconds
// later when the mark would lapse.
func TestTypingEndsWithTheMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	s := e.create("s")
	m := e.member("ann", false)
	e.grant("s", "ann", wire.AccessWrite)
	ann := e.dialToken(m.Token).HelloFromStart(s)
	watcher := e.dial(true).HelloFromStart(s)
	typingOf := func(f wire.Frame) (bool, bool) {
		for _, p := range f.Presence.People {
			if p.Name == "ann" {
				return p.Typing, true
			}
		}
		return false, false
	}
	ann.Send(wire.Command{ID: 1, Op: wire.OpTyping, Session: "s"})
	watcher.Next(func(f wire.Frame) bool {
		if f.Op != wire.PushPresence {
			return false
		}
		typing, ok := typingOf(f)
		return ok && typing
	})
	ann.Send(wire.Command{ID: 2, Op: wire.OpSend, Session: "s", InputID: newUUID(), Text: "done typing"})
	watcher.Next(func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Text == "done typing"
	})
	watcher.Send(wire.Command{ID: 3, Op: wire.OpPeople, Session: "s"})
	r := watcher.Reply(3)
	for _, p := range r.People {
		if p.Name == "ann" && p.Typing {
			t.Fatalf("ann still typing once her message is in: %+v", r.People)
		}
	}
	if len(r.People) == 0 {
		t.Fatalf("no people: %+v", r)
	}
}
