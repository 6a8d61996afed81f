//go:build !e2e_only || e2e_cluster

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"albedo/wire"
)

// A node on PostgreSQL stops as a home's daemon does: at once, with bye
// and 1001 to its clients, and nothing cut short in its log. Its loops
// (the heartbeat, the orphan watcher) are not turns, so the stop does not
// wait them out.
func TestClusterNodeStopsGracefully(t *testing.T) {
	parallel(t)
	cl := startCluster(t, 1, 2*time.Second)
	nd := cl.nodes[0]
	ctx := ctxT(t)
	s, err := nd.c.CreateSession(ctx, "stopping", wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	w := dialWS(t, nd.c.Snapshot())
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Subs: []wire.Sub{{Session: s.ID}}})
	w.next(func(f wire.Frame) bool { return f.IsReply() })
	start := time.Now()
	nd.d.stop()
	took := time.Since(start)
	frames, code := w.end()
	if len(frames) == 0 || frames[len(frames)-1].Op != wire.PushBye || code != websocket.StatusGoingAway {
		t.Fatalf("the stop ended the socket with %d after %d frames, not bye and 1001", code, len(frames))
	}
	if log := nd.d.log.String(); strings.Contains(log, "deadline exceeded") || strings.Contains(log, "still running") {
		t.Fatalf("the stop was cut short:\n%s", log)
	}
	// Was 20-22 s, the orphan watcher's wait; 3 s is the goal.
	if took > 10*time.Second {
		t.Fatalf("the node took %v to stop", took)
	}
	t.Logf("the node stopped in %v", took)
}
