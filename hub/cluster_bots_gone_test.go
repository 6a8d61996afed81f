package hub

import (
	"testing"
	"time"

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

// A turn waiting for its bot wakes when another node's announcement of
// the bot comes again after it had lapsed (a node whose heartbeats were
// late, on a loaded machine), not only when the bot is new there: the
// turn would otherwise wait until it ended.
func TestALapsedBotsAnnouncementWakesItsTurnsWhenRenewed(t *testing.T) {
	t.Parallel()
	h := &Hub{}
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"acker": 1}})
	h.remote.mu.Lock()
	h.remote.nodes["acker"]["b"] = time.Now().Add(-2 * remoteTTL) // lapsed
	h.remote.mu.Unlock()
	c, arrived := h.bots.pick("acker")
	if c != nil || h.remoteServer("acker") != "" {
		t.Fatalf("a lapsed announcement still serves: %v %q", c, h.remoteServer("acker"))
	}
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"acker": 1}}) // the next heartbeat's
	select {
	case <-arrived:
	default:
		t.Fatal("the renewed announcement did not wake the turn waiting for the bot")
	}
	if got := h.remoteServer("acker"); got != "b" {
		t.Fatalf("after the renewal: %q", got)
	}
	// An announcement renewed in time is no arrival.
	_, arrived = h.bots.pick("other")
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"acker": 1, "other": 1}})
	_, again := h.bots.pick("acker")
	h.onBots(peer.Bots{Node: "b", Bots: map[string]int{"acker": 1, "other": 1}})
	select {
	case <-arrived:
	default:
		t.Fatal("a bot new on the node did not wake its turn")
	}
	select {
	case <-again:
		t.Fatal("a bot announced in time woke a waiter as if new")
	default:
	}
}
