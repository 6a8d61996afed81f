package hub

import (
	"context"
	"testing"

	"albedo/wire"
)

// A node that serves a session deleted and made again under its id on
// another node, and has not read the deletion yet, never sends the old
// session's watchers the new one's events: at its look at the store's
// heads it finds another epoch, and the old subscription ends (reset,
// deleted).
func TestNodeNeverMixesTwoSessionsOfOneID(t *testing.T) {
	t.Parallel()
	a, b := clusterPair(t) // not started: b reads no changes, as if it had not yet
	watchWhileRemade(t, a, b, 2, b.reconcileHeads)
}

// watchWhileRemade watches on node b a session "s" made on node a, with
// one event; deletes it on a and makes it again there with n events;
// calls look (how b is to learn of them); and fails unless the watcher's
// next frame is the old session's end (reset, deleted) rather than an
// event of the new one.
func watchWhileRemade(t *testing.T, a, b *Hub, n int, look func()) {
	t.Helper()
	ctx := context.Background()
	mustCreate(t, a, "s")
	appendN(t, a, "s", 1)
	r := newReader(t, b.Connect(ConnInfo{Name: "viewer"}))
	subscribe(r.c, wire.Sub{Session: "s"})
	r.next(t, isEvent)

	if _, _, err := a.DeleteSession(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, "s")
	appendN(t, a, "s", n)
	look()
	f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushReset || f.Op == wire.PushEvent })
	if f.Op != wire.PushReset || f.Reset.Reason != wire.ResetDeleted {
		t.Fatalf("the old session's watcher was sent %+v", f)
	}
}
