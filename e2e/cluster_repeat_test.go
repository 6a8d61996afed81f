//go:build !e2e_only || e2e_cluster

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"albedo/client"
)

// A node watched in many sessions says its viewers again at each
// heartbeat in a few messages, not one a session: 260 sessions watched on
// node 0 are two repeat notices a heartbeat naming them all, and, once
// the joins are told, no notice of a session's own.
func TestClusterRepeatsViewersInFewMessages(t *testing.T) {
	parallel(t)
	cl, ns := startNATSCluster(t, 2)
	ctx := ctxT(t)
	const sessions = 260
	ids, epochs := clusterSessions(t, ctx, cl, "r", sessions)

	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	msgs := make(chan *nats.Msg, 4096)
	sub, err := nc.ChanSubscribe("albedo.>", msgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	st := cl.nodes[0].c.Stream(client.StreamOptions{})
	t.Cleanup(func() { st.Close() })
	for _, id := range ids {
		st.Subscribe(id, client.Cursor{Epoch: epochs[id]})
	}

	// A heartbeat's repeat: the notices on subject repeat from node 0
	// until one names fewer than it could (the last of the heartbeat).
	from0 := func(m *nats.Msg) bool { return m.Header.Get("Albedo-Node") == cl.nodes[0].name }
	type repeat struct {
		Sessions []struct {
			Session string `json:"session"`
			Viewers int    `json:"viewers"`
		} `json:"sessions"`
	}
	heartbeat := func(what string) (repeats, presences int, named map[string]int) {
		t.Helper()
		named = map[string]int{}
		deadline := time.After(15 * time.Second)
		for {
			select {
			case m := <-msgs:
				if !from0(m) {
					continue
				}
				switch {
				case strings.HasSuffix(m.Subject, ".presence"):
					presences++
				case strings.HasSuffix(m.Subject, ".repeat"):
					var r repeat
					if err := json.Unmarshal(m.Data, &r); err != nil {
						t.Fatalf("%s: repeat notice: %v", what, err)
					}
					repeats++
					for _, s := range r.Sessions {
						named[s.Session] = s.Viewers
					}
					if len(named) == sessions {
						return repeats, presences, named
					}
				}
			case <-deadline:
				t.Fatalf("%s: node 0 repeated %d of %d sessions in %d notices within 15 s", what, len(named), sessions, repeats)
			}
		}
	}
	// Every join is told first, each in a presence notice of its own
	// session within presenceCoalesce (later on a loaded machine, where
	// the heartbeat may come before some): the heartbeats measured below
	// then have nothing else beside them.
	told := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for len(told) < sessions {
		select {
		case m := <-msgs:
			if from0(m) && strings.HasSuffix(m.Subject, ".presence") {
				var p struct {
					Session string `json:"session"`
				}
				if err := json.Unmarshal(m.Data, &p); err != nil {
					t.Fatalf("presence notice: %v", err)
				}
				told[p.Session] = true
			}
		case <-deadline:
			t.Fatalf("node 0 told %d of %d joins within 30 s", len(told), sessions)
		}
	}
	heartbeat("first heartbeat")
	repeats, presences, named := heartbeat("second heartbeat")
	if repeats != 2 {
		t.Errorf("%d repeat notices for %d sessions, want 2", repeats, sessions)
	}
	if presences != 0 {
		t.Errorf("%d presence notices of single sessions in a heartbeat with no change, want 0", presences)
	}
	for _, id := range ids {
		if named[id] != 1 {
			t.Errorf("session %s repeated with %d viewers, want 1", id, named[id])
		}
	}
}
