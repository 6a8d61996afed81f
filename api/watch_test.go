package api

import (
	"testing"

	"albedo/wire"
)

// Only watching connections are a session's viewers: one subscribed in the
// background (a terminal following every session of its sidebar) gets
// every push but is neither counted in status nor listed in presence,
// until it watches; "watch" moves it either way, and both others and the
// HTTP status see the change.
func TestBackgroundSubscribersAreNotViewers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	viewer := e.dial(true)
	viewer.Hello(wire.Sub{Session: "s"})
	viewers := func(w *wsClient, want int) []wire.Person {
		t.Helper()
		st := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushStatus && f.Status.Viewers == want })
		if st.Status.Viewers != want {
			t.Fatalf("status viewers %d, want %d", st.Status.Viewers, want)
		}
		p := w.Next(func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == want })
		var got wire.Status
		e.do("GET", "/v1/sessions/s/status", nil, "", &got)
		if got.Viewers != want {
			t.Fatalf("GET status viewers %d, want %d", got.Viewers, want)
		}
		return p.Presence.People
	}
	viewers(viewer, 1)

	bg := e.dial(true)
	bg.Hello(wire.Sub{Session: "s", Watch: ptr(false)})
	// The background subscriber gets the pushes: the reset, a status
	// counting one viewer (not itself), a presence without it.
	st := bg.Next(func(f wire.Frame) bool { return f.Op == wire.PushStatus })
	if st.Status.Viewers != 1 {
		t.Fatalf("background sub sees %d viewers, want 1", st.Status.Viewers)
	}
	e.do("PUT", "/v1/sessions/s/inputs/"+uuid1, nil, `{"text":"hello"}`, nil)
	bg.Next(func(f wire.Frame) bool { return f.Op == wire.PushEvent })

	bg.Send(wire.Command{ID: 2, Op: wire.OpWatch, Session: "s", Watch: ptr(true)})
	if r := bg.Reply(2); !r.OK {
		t.Fatalf("watch: %+v", r.Error)
	}
	viewers(viewer, 2)
	bg.Send(wire.Command{ID: 3, Op: wire.OpWatch, Session: "s", Watch: ptr(false)})
	bg.Reply(3)
	viewers(viewer, 1)

	// A watch for a session not subscribed is not_found.
	bg.Send(wire.Command{ID: 4, Op: wire.OpWatch, Session: "other", Watch: ptr(true)})
	if r := bg.Reply(4); r.OK || r.Error.Code != wire.CodeNotFound {
		t.Fatalf("watch without a sub: %+v", r)
	}
	// A re-sub says it again: without watch, it is a viewer.
	bg.Send(wire.Command{ID: 5, Op: wire.OpSub, Session: "s"})
	bg.Reply(5)
	if pr := viewers(viewer, 2); len(pr) != 1 || pr[0].Role != wire.TokenOwner || pr[0].Devices != 2 {
		t.Fatalf("presence %+v", pr)
	}
}
