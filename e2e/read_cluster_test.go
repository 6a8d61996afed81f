//go:build !e2e_only || e2e_cluster

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/wire"
)

// On a cluster, a read marker set through one node reaches the person's
// terminal on another: its unread count goes to 0 there, through the
// store's record of the change (the other node's look at it, or NATS).
func TestReadOnOneNodeIsReadOnAnother(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 2, 2*time.Second)
	a, b := cl.nodes[0], cl.nodes[1]
	ctx := ctxT(t)
	for _, id := range []string{"news", "seen"} {
		if _, err := a.c.CreateSession(ctx, id, wire.SessionCreate{Title: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.c.PutInput(ctx, id, uuid.Must(uuid.NewV7()).String(), "hello "+id); err != nil {
			t.Fatal(err)
		}
		waitTurnsClosed(t, ctx, a.c, id, 1)
	}
	u := startUI(t, b.c, 100, 20) // on seen, the newest; news has its reply unread
	// The reply: the owner's own message is read by them.
	u.waitFor("news's reply unread on node-1", func(s string) bool { return strings.Contains(s, "news") && strings.Contains(s, "(1)") })
	s, err := a.c.Session(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := a.c.SetRead(ctx, "news", s.Head); err != nil {
		t.Fatal(err)
	}
	u.waitFor("news read on node-1", func(s string) bool { return strings.Contains(s, "news") && !strings.Contains(s, "(1)") })
	t.Logf("read through node-0, shown read on node-1 after %v", time.Since(start).Round(time.Millisecond))
}
