package hub

import (
	"context"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/hub/peer"
	"albedo/hub/provider"
	"albedo/wire"
)

// memoryPair is two started nodes, a and b, on one database of the
// package's PostgreSQL, joined by an in-memory bus, which look at the
// store only every hour: whatever one node learns of the other within a
// test, it learned over the bus. Each is opened with opts(node), to which
// its Node, Bus and those looks are set here. With bRunsNoTurns node b
// claims no leases (it drains from the start), so a runs every turn.
func memoryPair(t *testing.T, bRunsNoTurns bool, opts func(node string) Options) (a, b *Hub) {
	t.Helper()
	url := pgtest.Shared(t).Database(t)
	net := peer.NewMemory()
	open := func(node string) *Hub {
		bus := net.Join(node)
		t.Cleanup(bus.Close) // after the hub's Close, which openTestHub put off
		o := opts(node)
		o.Node, o.Bus, o.changesEvery, o.heartbeatEvery = node, bus, time.Hour, time.Hour
		return openTestHub(t, url, o)
	}
	a, b = open("a"), open("b")
	b.draining.Store(bRunsNoTurns)
	for _, h := range []*Hub{a, b} {
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// busPair is memoryPair where a runs every turn, both serving the
// provider "block" (blockProvider on release); bClosed records the tokens
// whose connections b closed.
func busPair(t *testing.T, release chan struct{}) (a, b *Hub, bClosed *closedLog) {
	t.Helper()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("block", blockProvider{release})
	a, b = memoryPair(t, true, func(string) Options { return Options{Providers: reg} })
	bClosed = &closedLog{}
	b.OnTokensChanged(bClosed.add)
	return a, b, bClosed
}

// What one node commits, streams, sees and runs reaches the other's
// viewers over the bus: the events, the reply as it streams, who watches,
// the run state; an interrupt asked on the other node is done where the
// turn runs; and the node hears how late the commits' notices came.
func TestNoticesReachTheOtherNodeOverTheBus(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	a, b, _ := busPair(t, release)
	ctx := context.Background()
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "block"})
	if err != nil {
		t.Fatal(err)
	}
	r := newReader(t, b.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(r.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence })

	ann := newReader(t, a.Connect(ConnInfo{Name: "ann", Role: wire.TokenMember, AuthorID: "m-ann"}))
	subscribe(ann.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushPresence && f.Presence.Viewers == 2 })

	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	// The commit's notice, the run state's and the streamed text's travel
	// apart: any may come first.
	var input, running, streamed bool
	for !input || !running || !streamed {
		r.next(t, func(f wire.Frame) bool {
			input = input || f.Op == wire.PushEvent && f.Event.Role == wire.RoleUser
			running = running || f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseRunning
			streamed = streamed || (f.Op == wire.PushDelta || f.Op == wire.PushPartial) && f.Text.Text == "x"
			return input || running || streamed
		})
	}

	turn, running, err := b.Interrupt(ctx, "s", wire.ReasonUser)
	if err != nil || !running || turn == "" {
		t.Fatalf("interrupt asked on node b: turn %q running %v err %v", turn, running, err)
	}
	f := r.next(t, func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted
	})
	if f.Event.State != wire.TurnInterrupted || f.Event.TurnID != turn {
		t.Fatalf("the turn ended %s (%s), want interrupted (%s)", f.Event.State, f.Event.TurnID, turn)
	}
	if lag := b.Stats().Peers["a"].Lag; lag.Count == 0 {
		t.Fatal("node b heard a's commits without measuring their lag")
	}
}

// A change to who may do what, made on one node, reaches the other at
// once: the bus rings it to read the store's changes.
func TestChangesAreRungOverTheBus(t *testing.T) {
	t.Parallel()
	a, b, closed := busPair(t, nil)
	ctx := context.Background()
	mustCreate(t, a, "s")
	link, _, err := a.Share(ctx, "s", wire.LinkCreate{Label: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := b.Authenticate(link)
	if !ok {
		t.Fatal("node b refused the link made on a")
	}
	if _, err := a.Unlink(ctx, "s", "demo"); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "node b refuses the link a removed", func() bool {
		_, ok := b.Authenticate(link)
		return !ok && closed.has(p.TokenID)
	})
}

// A node that has not read a session's deletion yet hears the commits of
// a new session made under the same id: it ends the old one's
// subscriptions (reset, deleted) and hands its viewers none of the new
// one's events, which the notices tell apart by their epoch. Here node b
// follows no changes at all (it is not started, only joined to the bus),
// so the notices are all it hears.
func TestNoticesOfAnotherEpochEndTheOldSession(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	net := peer.NewMemory()
	busA, busB := net.Join("a"), net.Join("b")
	t.Cleanup(busA.Close)
	t.Cleanup(busB.Close)
	a := openTestHub(t, url, Options{Node: "a", Bus: busA})
	b := openTestHub(t, url, Options{Node: "b", Bus: busB})
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := busB.Start(peerHandler{b}); err != nil {
		t.Fatal(err)
	}
	watchWhileRemade(t, a, b, 3, func() {}) // the notices alone
}
