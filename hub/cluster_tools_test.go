package hub

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/hub/peer"
	"albedo/hub/provider"
	"albedo/wire"
)

// callingProvider calls the tool api once, then answers with the result
// it was sent.
type callingProvider struct{ api string }

func (callingProvider) Author(provider.Request) string { return "caller" }
func (callingProvider) ToolLimits() provider.ToolLimits {
	return provider.ToolLimits{Timeout: time.Minute, MaxCalls: 4}
}

func (p callingProvider) Stream(_ context.Context, req provider.Request, emit func(string)) error {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == provider.RoleTool {
		emit("the tool said " + last.Text)
		return nil
	}
	req.Call(provider.ToolCall{ID: "c1", Name: p.api, Arguments: `{}`})
	return nil
}

// A decision made on another node than the turn's: node a runs the turn
// and its tool (the bot is connected there); people decide on node b, two
// at once, one on each node. One decision wins, the other is a conflict,
// and a's runner, woken by the approval's notice, runs the call.
func TestADecisionOnAnotherNodeResumesTheTurn(t *testing.T) {
	t.Parallel()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("caller", callingProvider{api: "bot__w__f"})
	a, b := memoryPair(t, true, func(string) Options { return Options{Providers: reg} }) // a runs every turn
	ctx := context.Background()
	bot := newReader(t, a.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"}))
	if err := a.ServeTools(bot.c, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "caller"})
	if err != nil {
		t.Fatal(err)
	}
	watcher := newReader(t, b.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(watcher.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	watcher.next(t, func(f wire.Frame) bool {
		return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseApproval && f.Status.Pending == 1
	})
	ap, err := b.Approvals(ctx, "s")
	if err != nil || len(ap.Approvals) != 1 {
		t.Fatalf("approvals on b: %+v %v", ap, err)
	}
	call := ap.Approvals[0].CallID

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*Hub{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.Decide(ctx, "s", call, wire.Decision{Decision: wire.DecisionAllow}, wire.Author{Name: []string{"ann", "bob"}[i]})
		}()
	}
	wg.Wait()
	var werr *wire.Error
	if (errs[0] == nil) == (errs[1] == nil) || !errors.As(errors.Join(errs...), &werr) || werr.Code != wire.CodeConflict {
		t.Fatalf("decisions: %v", errs)
	}

	push := bot.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if err := a.ToolResult(bot.c, push.Tool.CallID, "42", ""); err != nil {
		t.Fatal(err)
	}
	var kinds []wire.EventType
	for {
		f := watcher.next(t, isEvent)
		kinds = append(kinds, f.Event.Type)
		if f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant {
			if f.Event.Text != "the tool said 42" {
				t.Fatalf("reply %+v", f.Event)
			}
			break
		}
	}
	// From the approval on (the status that said approval and the call's
	// event travel apart, so the call may come before or after it): one
	// approval, the result, the reply.
	want := []wire.EventType{wire.EventApproval, wire.EventToolResult, wire.EventMessage}
	if i := slices.Index(kinds, wire.EventApproval); i >= 0 {
		kinds = kinds[i:]
	}
	if len(kinds) != len(want) {
		t.Fatalf("events %v", kinds)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v", kinds)
		}
	}
}

// A turn waiting for a decision when its node stops is taken over by
// another node, which resumes it (not closes it): the call is still
// listed, and a decision there completes the turn.
func TestAWaitingTurnMovesToAnotherNode(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	net := peer.NewMemory()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("caller", callingProvider{api: "bot__w__f"})
	open := func(node string) *Hub {
		bus := net.Join(node)
		t.Cleanup(bus.Close)
		h, err := Open(context.Background(), url, Options{Node: node, Bus: bus, Providers: reg, Lease: 300 * time.Millisecond,
			changesEvery: time.Hour, heartbeatEvery: time.Hour}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := context.Background()
	a, b := open("a"), open("b")
	t.Cleanup(func() { b.Close(ctx) })
	b.draining.Store(true) // a runs the turn
	for _, h := range []*Hub{a, b} {
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "caller"})
	if err != nil {
		t.Fatal(err)
	}
	first := a.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"}) // the tool is offered on a
	if err := a.ServeTools(first, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	watcher := newReader(t, b.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(watcher.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	watcher.next(t, func(f wire.Frame) bool { return f.Op == wire.PushStatus && f.Status.Phase == wire.PhaseApproval })
	first.Close()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b.draining.Store(false)
	bot := newReader(t, b.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"}))
	if err := b.ServeTools(bot.c, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	// b takes the session's turns over and waits for the decision in its
	// turn: phase approval again, now b's own.
	mine := func() bool {
		b.mu.Lock()
		ch := b.chans["s"]
		b.mu.Unlock()
		if ch == nil {
			return false
		}
		ch.mu.Lock()
		defer ch.mu.Unlock()
		return ch.run.running && ch.run.phase == wire.PhaseApproval
	}
	for !mine() {
		f := watcher.next(t, func(f wire.Frame) bool { return f.Op == wire.PushStatus || f.Op == wire.PushEvent })
		if f.Op == wire.PushEvent && f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted {
			t.Fatalf("the turn was closed: %+v", f.Event)
		}
	}
	ap, err := b.Approvals(ctx, "s")
	if err != nil || len(ap.Approvals) != 1 {
		t.Fatalf("approvals: %+v %v", ap, err)
	}
	if _, err := b.Decide(ctx, "s", ap.Approvals[0].CallID, wire.Decision{Decision: wire.DecisionAllow}, wire.Author{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	push := bot.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if err := b.ToolResult(bot.c, push.Tool.CallID, "42", ""); err != nil {
		t.Fatal(err)
	}
	reply := watcher.next(t, func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant
	})
	if reply.Event.Text != "the tool said 42" {
		t.Fatalf("reply %+v", reply.Event)
	}
}

// A bot's tool served from another node than the turn's: node b's bot
// announces it, node a offers it and runs the call there, and the result
// comes back to a's turn.
//
// When the bot's connection there drops with a call and the bot comes
// back on the turn's node, the call goes to it.
func TestABotsToolOnAnotherNode(t *testing.T) {
	t.Parallel()
	reg, _ := provider.NewRegistry(provider.Config{Tools: provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "allow"}}}}, nil)
	reg.Register("caller", callingProvider{api: "bot__w__f"})
	a, b := memoryPair(t, true, func(string) Options { return Options{Providers: reg} }) // a runs every turn
	ctx := context.Background()
	if _, err := a.AddBot(ctx, "w", nil); err != nil {
		t.Fatal(err)
	}
	bot := newReader(t, b.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"}))
	if err := b.ServeTools(bot.c, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	s, _, err := a.CreateSession(ctx, "s", wire.SessionCreate{Provider: "caller"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ts, err := a.Tools(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(ts.Tools) == 1 && ts.Tools[0].Name == "bot:w/f" {
			break
		}
		select {
		case <-time.After(10 * time.Millisecond): // b's announcement is on its way over the bus
		case <-t.Context().Done():
			t.Fatal("node a never offered b's tool")
		}
	}
	watcher := newReader(t, a.Connect(ConnInfo{Name: "owner", Role: wire.TokenOwner, AuthorID: "owner"}))
	zero := int64(0)
	subscribe(watcher.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	push := bot.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if err := b.ToolResult(bot.c, push.Tool.CallID, "from b", ""); err != nil {
		t.Fatal(err)
	}
	reply := watcher.next(t, func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant
	})
	if reply.Event.Text != "the tool said from b" {
		t.Fatalf("reply %+v", reply.Event)
	}

	// The bot's connection on b drops with a call; the bot comes back on
	// a, the turn's node: b says the call is lost, not that it failed,
	// and a hands it to the new connection.
	if _, err := a.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000002", "again", wire.Author{Name: "ann"}); err != nil {
		t.Fatal(err)
	}
	bot.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTool })
	bot.c.Close()
	back := newReader(t, a.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"}))
	if err := a.ServeTools(back.c, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	again := back.next(t, func(f wire.Frame) bool { return f.Op == wire.PushTool })
	if err := a.ToolResult(back.c, again.Tool.CallID, "from a", ""); err != nil {
		t.Fatal(err)
	}
	reply = watcher.next(t, func(f wire.Frame) bool {
		return f.Op == wire.PushEvent && f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant
	})
	if reply.Event.Text != "the tool said from a" {
		t.Fatalf("reply after the bot moved %+v", reply.Event)
	}
}
