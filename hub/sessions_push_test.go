package hub

import (
	"context"
	"testing"

	"albedo/wire"
)

// Sessions made while a listening connection's writer is away come as one
// sessions push, not one each: the push is a flag, so a connection that
// reads slowly holds nothing more however many sessions change.
func TestSessionsPushCoalesces(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	listener, other := h.Connect(ConnInfo{}), h.Connect(ConnInfo{})
	listener.ListenSessions()
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, h, id)
	}
	if _, _, err := h.DeleteSession(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	buf, err := listener.Fill(context.Background(), nil, 64<<10)
	if err != nil || string(buf) != `{"op":"sessions"}` {
		t.Fatalf("listener's batch %q (%v), want one sessions push", buf, err)
	}
	if buf, _ = listener.Fill(context.Background(), nil, 64<<10); len(buf) != 0 {
		t.Fatalf("a second batch %q", buf)
	}
	if buf, _ = other.Fill(context.Background(), nil, 64<<10); len(buf) != 0 {
		t.Fatalf("a connection that did not ask got %q", buf)
	}
	f, err := wire.DecodeFrame([]byte(`{"op":"sessions"}`))
	if err != nil || f.Op != wire.PushSessions {
		t.Fatalf("decode: %+v %v", f, err)
	}
}

// A connection that asks to listen as it closes is not kept among the
// listeners: a closed one would otherwise stay in the set for the life
// of the daemon, looked at on every session made.
func TestAClosedConnectionIsNoListener(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	c := h.Connect(ConnInfo{})
	c.ListenSessions()
	c.Close()
	late := h.Connect(ConnInfo{})
	late.Close()
	late.ListenSessions()
	h.mu.Lock()
	n := len(h.listeners)
	h.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d listeners after both closed", n)
	}
}
