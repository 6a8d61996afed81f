// What the cluster's tests and the other groups both use of a cluster:
// a node, and a session's events read through it.

package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"albedo/client"
	"albedo/wire"
)

// node is one daemon of a cluster and the owner's client of it.
type node struct {
	name string
	home string
	args []string // its daemon's flags, to start it again (restart)
	d    *daemon
	c    *client.Client
}

// restart starts the node's daemon again, once the last one has exited,
// with the same flags and home (so the same port, when it is free).
func (nd *node) restart(t *testing.T) {
	t.Helper()
	nd.d = startDaemon(t, nd.home, nd.args...)
}

// events reads a session's whole log through a client (client.AllEvents).
func events(t *testing.T, ctx context.Context, c *client.Client, session string) []wire.Event {
	t.Helper()
	var out []wire.Event
	if err := c.AllEvents(ctx, session, func(_ json.RawMessage, ev wire.Event) error {
		out = append(out, ev)
		return nil
	}); err != nil {
		t.Fatalf("history of %s: %v", session, err)
	}
	return out
}

// waitTurnsClosed waits until n turns of the session have closed.
func waitTurnsClosed(t *testing.T, ctx context.Context, c *client.Client, session string, n int) []wire.Event {
	t.Helper()
	for {
		evs := events(t, ctx, c, session)
		closed := 0
		for _, ev := range evs {
			if ev.Type == wire.EventTurn && ev.State != wire.TurnStarted {
				closed++
			}
		}
		if closed >= n {
			return evs
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %d of %d turns closed", session, closed, n)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
