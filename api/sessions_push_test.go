package api

import (
	"testing"

	"albedo/wire"
)

// A connection whose hello asks for sessions (an owner's) hears a sessions
// push when a session is made or deleted; other roles are not told, and
// their hello says so.
func TestSessionsPush(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.create("s")
	isSessions := func(f wire.Frame) bool { return f.Op == wire.PushSessions }

	owner := e.dial(true)
	owner.Send(wire.Command{ID: 1, Op: wire.OpHello, Sessions: true})
	if r := owner.Reply(1); !r.OK || !r.Sessions {
		t.Fatalf("owner's hello: %+v", r)
	}
	plain := e.dial(true)
	if r := plain.Hello(); r.Sessions {
		t.Fatal("a hello that did not ask says sessions")
	}
	viewer := e.dialToken(e.viewerToken("s"))
	viewer.Send(wire.Command{ID: 1, Op: wire.OpHello, Token: viewer.Token, Sessions: true})
	if r := viewer.Reply(1); !r.OK || r.Sessions {
		t.Fatalf("viewer's hello: %+v", r)
	}

	e.create("made")
	owner.Next(isSessions)
	if code, _ := e.do("DELETE", "/v1/sessions/made", nil, "", nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	owner.Next(isSessions)

	// The others got nothing. A push due goes out in the batch of the
	// next reply, after it: so look up to the reply of a second ping.
	for _, w := range []*wsClient{plain, viewer} {
		for id := int64(9); id <= 10; id++ {
			w.Send(wire.Command{ID: id, Op: wire.OpPing})
			for _, f := range w.Until(func(f wire.Frame) bool { return f.IsReply() && f.Reply.ID == id }) {
				if isSessions(f) {
					t.Fatal("a connection that did not ask (or may not) got a sessions push")
				}
			}
		}
	}
}
