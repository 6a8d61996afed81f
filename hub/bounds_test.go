package hub

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/wire"
)

// frames splits a batch into its frames.
func frames(buf []byte) [][]byte {
	if len(buf) == 0 {
		return nil
	}
	return bytes.Split(buf, []byte{'\n'})
}

// Fill takes queued replies up to its limit and leaves the rest queued, in
// order, for the next batch: a batch is at most the limit plus one frame,
// however many replies wait.
func TestFillBoundsRepliesByBytes(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	c := h.Connect(ConnInfo{Name: "t"})
	defer c.Close()
	const n, limit = 5000, 4096
	for i := range n {
		c.ReplyJSON(wire.Reply{ID: int64(i + 1), OK: true})
	}
	next := int64(1)
	for batches := 0; next <= n; batches++ {
		if batches > n {
			t.Fatalf("no progress at reply %d", next)
		}
		buf, err := c.Fill(context.Background(), nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		fs := frames(buf)
		if len(buf) > limit+len(fs[len(fs)-1])+1 {
			t.Fatalf("a batch of %d bytes; the limit is %d plus one frame", len(buf), limit)
		}
		for _, f := range fs {
			if want := fmt.Sprintf(`{"id":%d,`, next); !bytes.HasPrefix(f, []byte(want)) {
				t.Fatalf("frame %s, want reply %d next", f, next)
			}
			next++
		}
	}
}

// A reader that queues replies waits in AwaitRoom once they reach
// MaxReplyBytes, and goes on when Fill takes them: what a client that
// never reads can make the daemon hold is bounded.
func TestAwaitRoomHoldsAReaderAtTheBound(t *testing.T) {
	t.Parallel()
	const bound = 8 << 10
	h := newTestHub(t, Options{MaxReplyBytes: bound})
	c := h.Connect(ConnInfo{Name: "t"})
	defer c.Close()
	wake := wakes(c)
	frame := wire.Encode(wire.Reply{ID: 1, OK: true})
	done := make(chan struct{})
	go func() { // the reader of a client that sends 10 000 pings
		defer close(done)
		for range 10000 {
			if c.AwaitRoom(context.Background()) != nil {
				return
			}
			c.Reply(frame)
		}
	}()
	deadline := time.After(10 * time.Second)
	for c.Unsent() < bound {
		select {
		case <-wake:
		case <-done:
			t.Fatal("the reader finished without reaching the bound")
		case <-deadline:
			t.Fatalf("unsent %d, never reached the bound %d", c.Unsent(), bound)
		}
	}
	select {
	case <-done:
		t.Fatalf("the reader went on past the bound: %d unsent", c.Unsent())
	default:
	}
	if u := c.Unsent(); u > bound+len(frame) {
		t.Fatalf("%d bytes unsent; the bound is %d plus one reply", u, bound)
	}
	// A writer draining the replies lets the reader finish.
	got := 0
	for got < 10000 {
		buf, err := c.Fill(context.Background(), nil, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		got += len(frames(buf))
		if len(buf) == 0 {
			select {
			case <-wake:
			case <-deadline:
				t.Fatalf("%d replies of 10000 after the drain", got)
			}
		}
	}
	<-done
}

// A late subscriber catching up on large events gets them a batch at a
// time, each about the limit, not a page of 256 of them in one message.
func TestCatchUpBatchesAreBoundedByBytes(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	big := strings.Repeat("x", 20_000)
	ctx := context.Background()
	for range 40 {
		if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
			_, err := tx.Append(ctx, "s", wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: big})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	c := h.Connect(ConnInfo{Name: "t"})
	defer c.Close()
	zero := int64(0)
	s, _ := h.Session(ctx, "s")
	subscribe(c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	const limit = 64 << 10
	events := 0
	for events < 40 {
		buf, err := c.Fill(ctx, nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) == 0 {
			t.Fatalf("%d events of 40, then nothing", events)
		}
		fs := frames(buf)
		if len(buf) > limit+len(fs[len(fs)-1])+1 {
			t.Fatalf("a batch of %d bytes; the limit is %d plus one frame", len(buf), limit)
		}
		for _, f := range fs {
			if bytes.HasPrefix(f, []byte(`{"op":"event"`)) {
				events++
			}
		}
	}
}

// floodProvider streams chunks of size bytes, n of them.
type floodProvider struct{ n, size int }

func (p floodProvider) Author(provider.Request) string { return "flood" }
func (p floodProvider) Stream(ctx context.Context, _ provider.Request, emit func(string)) error {
	chunk := strings.Repeat("f", p.size)
	for range p.n {
		if err := ctx.Err(); err != nil {
			return err
		}
		emit(chunk)
	}
	return nil
}

// A reply that passes MaxReply is cut there and its turn fails, saying
// why: a provider (or a bot) that streams without end cannot grow a
// message, and the daemon, without bound.
func TestReplyPastTheLimitFailsTheTurn(t *testing.T) {
	t.Parallel()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("flood", floodProvider{n: 100, size: 64 << 10})
	const limit = 256 << 10
	h := newTestHub(t, Options{Providers: reg, MaxReply: limit})
	ctx := context.Background()
	s, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Provider: "flood"})
	if err != nil {
		t.Fatal(err)
	}
	r := newReader(t, h.Connect(ConnInfo{Name: "t"}))
	zero := int64(0)
	subscribe(r.c, wire.Sub{Session: "s", After: &zero, Epoch: s.Epoch})
	if _, err := h.PutInput(ctx, "s", "0190a8a0-0000-7000-8000-000000000001", "go", wire.Author{Name: "user"}); err != nil {
		t.Fatal(err)
	}
	var msg *wire.Event
	for {
		f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushEvent })
		if f.Event.Type == wire.EventMessage && f.Event.Role == wire.RoleAssistant {
			msg = f.Event
		}
		if f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted {
			if f.Event.State != wire.TurnFailed || !strings.Contains(f.Event.Error, "limit") {
				t.Fatalf("turn ended %s (%q), want failed at the limit", f.Event.State, f.Event.Error)
			}
			break
		}
	}
	if msg == nil || msg.State != wire.MessageFailed || len(msg.Text) > limit || len(msg.Text) < limit-(64<<10) {
		t.Fatalf("reply %+v: want a failed message cut at %d bytes", msg, limit)
	}
}

// A presence push waiting for its interval does not hold up the batch:
// the events of the connection's other sessions go out at once, not when
// the interval is over.
func TestDeferredPresenceDoesNotHoldUpOtherSessions(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	ctx := context.Background()
	mustCreate(t, h, "s1")
	s2 := mustCreate(t, h, "s2")
	c := h.Connect(ConnInfo{Name: "me"})
	defer c.Close()
	head := int64(0)
	subscribe(c, wire.Sub{Session: "s1"})
	subscribe(c, wire.Sub{Session: "s2", After: &head, Epoch: s2.Epoch})
	drain := func() {
		for {
			buf, err := c.Fill(ctx, nil, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			if len(buf) == 0 {
				return
			}
		}
	}
	drain() // replies, resets, the first presence pushes
	joiner := h.Connect(ConnInfo{Name: "joiner"})
	defer joiner.Close()
	subscribe(joiner, wire.Sub{Session: "s1"}) // presence of s1 changes within 250 ms: deferred
	appendN(t, h, "s2", 1)
	buf, err := c.Fill(ctx, nil, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf, []byte(`{"op":"event","session":"s2"`)) {
		t.Fatalf("the batch after a deferred presence of s1 lacks s2's event: %s", buf)
	}
}

// blockProvider streams "x" and then waits for release (or its turn's end).
type blockProvider struct{ release chan struct{} }

func (blockProvider) Author(provider.Request) string { return "block" }
func (p blockProvider) Stream(ctx context.Context, _ provider.Request, emit func(string)) error {
	emit("x")
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// blockHub opens a hub that serves the provider "block" (blockProvider
// on release).
func blockHub(t *testing.T, release chan struct{}) *Hub {
	t.Helper()
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("block", blockProvider{release})
	return newTestHub(t, Options{Providers: reg})
}

// blockSession makes session id of h, answered by the provider "block",
// and returns a reader of it from its start.
func blockSession(t *testing.T, h *Hub, id string) *reader {
	t.Helper()
	s, _, err := h.CreateSession(context.Background(), id, wire.SessionCreate{Provider: "block"})
	if err != nil {
		t.Fatal(err)
	}
	r := newReader(t, h.Connect(ConnInfo{Name: "t"}))
	zero := int64(0)
	subscribe(r.c, wire.Sub{Session: id, After: &zero, Epoch: s.Epoch})
	return r
}

// A delete that fails changes nothing: the running turn goes on and the
// queued one runs after it, since a session's turns are stopped only once
// its delete is committed.
func TestFailedDeleteLeavesTurnsRunning(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := blockHub(t, release)
	ctx := context.Background()
	r := blockSession(t, h, "s")
	for i := range 2 {
		if _, err := h.PutInput(ctx, "s", fmt.Sprintf("0190a8a0-0000-7000-8000-00000000000%d", i+1), "go", wire.Author{Name: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	r.next(t, func(f wire.Frame) bool { return f.Event != nil && f.Event.State == wire.TurnStarted })
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := h.DeleteSession(cancelled, "s"); err == nil {
		t.Fatal("a delete with a cancelled context succeeded")
	}
	close(release)
	for range 2 {
		f := r.next(t, func(f wire.Frame) bool {
			return f.Event != nil && f.Event.Type == wire.EventTurn && f.Event.State != wire.TurnStarted
		})
		if f.Event.State != wire.TurnCompleted {
			t.Fatalf("a turn ended %s (%s) after a failed delete", f.Event.State, f.Event.Reason)
		}
	}
}
