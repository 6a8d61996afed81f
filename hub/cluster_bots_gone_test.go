package hub

import (
	"testing"

	"albedo/hub/peer"
)

// A notice a node sent before it stopped answering, read after, does not
// bring it back as a bot's server: a turn would wait for its answer in
// vain. Once remoteTTL has passed, its notices count again.
func TestGoneNodesNoticesAreNotBelieved(t *testing.T) {
	t.Parallel()
	h := &Hub{}
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"mover": 1}})
	if got := h.remoteServer("mover"); got != "b" {
		t.Fatalf("before: %q", got)
	}
	h.nodeGone("b")
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"mover": 1}}) // in flight when it died
	if got := h.remoteServer("mover"); got != "" {
		t.Fatalf("a gone node's late notice was believed: %q", got)
	}
	h.remote.mu.Lock()
	h.remote.gone["b"] = h.remote.gone["b"].Add(-2 * remoteTTL) // its time is up
	h.remote.mu.Unlock()
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"mover": 1}})
	if got := h.remoteServer("mover"); got != "b" {
		t.Fatalf("back: %q", got)
	}
}
