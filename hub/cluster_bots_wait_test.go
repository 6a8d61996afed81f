package hub

import (
	"context"
	"testing"
	"time"

	"albedo/hub/provider"
	"albedo/wire"
)

// A turn waiting for its bot finds another node's server of it without a
// wake-up: here the node learns of it with none (its announcement had
// lapsed, and is believed again), as it would of any notice that came
// late, and the turn looks again within about a second.
func TestAWaitingBotTurnLooksAgainWithoutAWakeUp(t *testing.T) {
	t.Parallel()
	a, b := memoryPair(t, true, func(string) Options {
		reg, _ := provider.NewRegistry(provider.Config{}, nil) // each hub's own: it resolves bots through its hub
		return Options{Providers: reg}
	})
	ctx := context.Background()
	if _, err := a.AddBot(ctx, "acker", nil); err != nil {
		t.Fatal(err)
	}
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "bot:acker"})
	if err != nil {
		t.Fatal(err)
	}
	bot := newReader(t, b.Connect(ConnInfo{Name: "acker", Role: wire.TokenBot, AuthorID: "bot:acker"}))
	b.Serve(bot.c, "acker")
	for deadline := time.Now().Add(10 * time.Second); a.remoteServer("acker") != "b"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("node a never heard that b serves the bot")
		}
	}
	believe := func(at time.Time) {
		a.remote.mu.Lock()
		a.remote.nodes["acker"]["b"] = at
		a.remote.mu.Unlock()
	}
	believe(time.Now().Add(-2 * remoteTTL)) // lapsed: b's heartbeats came late

	watcher := newReader(t, a.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(watcher.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	watcher.next(t, func(f wire.Frame) bool { return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseWaiting })
	believe(time.Now()) // believed again, with no wake-up
	push := bot.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTurn })
	if push.Turn.Session != "s" {
		t.Fatalf("turn %+v", push.Turn)
	}
}
