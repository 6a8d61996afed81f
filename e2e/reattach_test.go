//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// One websocket subscribed to 100 sessions gets each session's events in
// order; after the daemon process restarts on the same home, a hello with
// 100 subs reattaches every channel from its own offset: exactly the events
// after it, no reset, no replay from the start.
func TestReattach100ChannelsAfterRestart(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	c := fx.c

	const n = 100
	ids := make([]string, n)
	epochs := map[string]string{}
	for i := range ids {
		s, err := c.CreateSession(fx.ctx, fmt.Sprintf("chan-%03d", i), wire.SessionCreate{Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i], epochs[s.ID] = s.ID, s.Epoch
	}
	put := func(round int) {
		for _, id := range ids {
			if _, err := c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprintf("round %d", round)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(1)
	put(2)
	put(3)

	w := dialWS(t, c.Snapshot())
	var subs []wire.Sub
	for _, id := range ids {
		zero := int64(0)
		subs = append(subs, wire.Sub{Session: id, After: &zero, Epoch: epochs[id]})
	}
	w.send(wire.Command{ID: 1, Op: wire.OpHello, Client: "e2e/1", Subs: subs})
	if r := w.next(func(f wire.Frame) bool { return f.IsReply() }); !r.Reply.OK || len(r.Reply.Subs) != n {
		t.Fatalf("hello: %+v", r)
	}
	// Three inputs, each a user message and a 3-event turn: 12 events.
	last := map[string]int64{}
	drain(t, w, last, ids, 12)
	// Each session's reader now pretends it stopped at a different offset.
	for i, id := range ids {
		last[id] = int64(i%12) + 1
	}

	fx.d.stop()
	frames, code := w.end()
	if code != websocket.StatusGoingAway {
		t.Fatalf("close status %d, want 1001", code)
	}
	if len(frames) == 0 || frames[len(frames)-1].Op != wire.PushBye || frames[len(frames)-1].Bye.Reason != wire.ByeShutdown {
		t.Fatalf("the last of %d frames before the close is not bye", len(frames))
	}

	old := c.Snapshot()
	startDaemon(t, fx.home)
	put(4) // the client follows the daemon
	// The new daemon took the same port (daemon.stable) and a new token.
	if info, err := client.ReadDaemonFile(fx.home); err != nil || info.Boot == old.Boot || info.Port != old.Port || info.Token == old.Token {
		t.Fatalf("the new daemon: %+v (%v), the old %+v", info, err, old)
	}

	w2 := dialWS(t, c.Snapshot())
	subs = subs[:0]
	for _, id := range ids {
		after := last[id]
		subs = append(subs, wire.Sub{Session: id, After: &after, Epoch: epochs[id]})
	}
	w2.send(wire.Command{ID: 1, Op: wire.OpHello, Client: "e2e/1", Subs: subs})
	r := w2.next(func(f wire.Frame) bool { return f.IsReply() })
	for _, s := range r.Reply.Subs {
		if !s.OK || !s.Recovered || s.Head < 13 {
			t.Fatalf("reattach %+v", s)
		}
	}
	// Round 4 adds a message and a turn to each: 16 events, each exactly once.
	drain(t, w2, last, ids, 16)
}

// drain reads events until every session's last offset reaches target,
// failing on any reset, gap or duplicate.
func drain(t *testing.T, w *wsClient, last map[string]int64, ids []string, target int64) {
	t.Helper()
	behind := 0
	for _, id := range ids {
		if last[id] < target {
			behind++
		}
	}
	for behind > 0 {
		f := w.next(func(f wire.Frame) bool { return f.Op == wire.PushEvent || f.Op == wire.PushReset })
		if f.Op == wire.PushReset {
			t.Fatalf("%s: reset (reason %s)", f.Session, f.Reset.Reason)
		}
		if f.Event.Offset != last[f.Session]+1 {
			t.Fatalf("%s: offset %d after %d (gap or duplicate)", f.Session, f.Event.Offset, last[f.Session])
		}
		last[f.Session] = f.Event.Offset
		if f.Event.Offset == target {
			behind--
		}
	}
}
