//go:build !e2e_only || e2e_core

package e2e

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// A send whose receipt is lost to a SIGKILL (the input is
// committed, the reply never read) is retried with the same input_id after
// the restart: one user message, one turn.
func TestLostReceiptRetriedOnce(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	// A watcher sees the commit; the sender never reads its reply.
	st := fx.c.Stream(client.StreamOptions{})
	defer st.Close()
	watch := st.Subscribe("s", client.Cursor{Epoch: fx.s.Epoch})
	inputID := uuid.Must(uuid.NewV7()).String()
	snap := fx.c.Snapshot()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", snap.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"text":"exactly once"}`
	fmt.Fprintf(conn, "PUT /v1/sessions/s/inputs/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		inputID, snap.Token, len(body), body)
	for {
		it, err := watch.Next(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Op == wire.PushEvent && it.Event.InputID == inputID {
			break // committed
		}
	}
	fx.d.kill()
	conn.Close() // whatever reply was in flight is lost with it
	startDaemon(t, fx.home)

	r, err := fx.c.PutInput(fx.ctx, "s", inputID, "exactly once")
	if err != nil {
		t.Fatal(err)
	}
	if r.Order != 1 {
		t.Fatalf("retry got order %d: a second input was accepted", r.Order)
	}
	// Wait for the turn to end (it may have been repaired as interrupted).
	streamTurn(t, st.Subscribe("s", client.Cursor{Epoch: fx.s.Epoch}), r.TurnID)
	page, err := fx.c.History(fx.ctx, "s", 0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	users, starts, ends := 0, 0, 0
	for _, e := range page.Events {
		switch {
		case e.Type == wire.EventMessage && e.Role == wire.RoleUser:
			users++
		case e.Type == wire.EventTurn && e.State == wire.TurnStarted:
			starts++
		case e.Type == wire.EventTurn:
			ends++
		}
	}
	if users != 1 || starts > 1 || ends != 1 {
		t.Fatalf("%d user messages, %d turn starts, %d turn ends; want 1, ≤1, 1", users, starts, ends)
	}
}

// An input sent through the stream while the daemon is down is delivered
// once it is back, exactly once.
func TestStreamSendWhileDown(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	st := fx.c.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	defer st.Close()
	sub := st.Subscribe("s", client.Cursor{Epoch: fx.s.Epoch})
	fx.d.stop()
	inputID := uuid.Must(uuid.NewV7()).String()
	got := make(chan wire.Receipt, 1)
	go func() {
		r, err := st.Send(fx.ctx, "s", inputID, "queued while down")
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	startDaemon(t, fx.home)
	r := <-got
	if r.InputID != inputID || r.Order != 1 {
		t.Fatalf("receipt %+v", r)
	}
	if reply, _ := streamTurn(t, sub, r.TurnID); reply.Text != "echo: queued while down" {
		t.Fatalf("reply %+v", reply)
	}
}

// Inputs that wait for their receipts while the daemon is down are
// accepted, once it is back, in the order they were sent (the client
// used to re-send them in map order, and an input typed before another
// could be stored after it).
func TestPendingInputsResentInOrder(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	st := fx.c.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	defer st.Close()
	fx.d.stop()
	const n = 20
	receipts := make([]wire.Receipt, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := st.Send(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), fmt.Sprint("input ", i))
			if err != nil {
				t.Error(err)
			}
			receipts[i] = r
		})
		// The next is sent only once this one is pending: their order is i.
		deadline := time.Now().Add(10 * time.Second)
		for st.Pending() < i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("input %d never pending", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	startDaemon(t, fx.home)
	wg.Wait()
	for i := 1; i < n; i++ {
		if receipts[i].Order <= receipts[i-1].Order {
			t.Fatalf("input %d got order %d after input %d's %d: accepted out of the order sent", i, receipts[i].Order, i-1, receipts[i-1].Order)
		}
	}
}

// Inputs queued one after the other — as the terminal does as they are
// typed — are accepted in that order, though their sends and receipts run
// on other goroutines (the terminal used to send each from a goroutine of
// its own, which could reorder two typed quickly).
func TestQueuedInputsKeepTheirOrder(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	st := fx.c.Stream(client.StreamOptions{})
	defer st.Close()
	const n = 50
	ins := make([]*client.Input, n)
	for i := range n {
		ins[i] = st.Queue("s", uuid.Must(uuid.NewV7()).String(), fmt.Sprint("typed ", i))
	}
	prev := int64(0)
	for i, in := range ins {
		r, err := in.Receipt(fx.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Order <= prev {
			t.Fatalf("input %d got order %d after %d: accepted out of the order queued", i, r.Order, prev)
		}
		prev = r.Order
	}
}

// Three clients watch one session through a restart and a
// turn; their committed event sequences are identical and contiguous.
func TestViewersAgreeAcrossRestart(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{session: "s"})
	first := fx.c
	if _, err := first.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "before"); err != nil {
		t.Fatal(err)
	}
	type viewer struct {
		sub    *client.Subscription
		events []wire.Event
	}
	var vs []*viewer
	for range 3 {
		c := newClient(t, fx.home)
		st := c.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
		defer st.Close()
		vs = append(vs, &viewer{sub: st.Subscribe("s", client.Cursor{Epoch: fx.s.Epoch})})
	}
	collect := func(v *viewer, until func(wire.Event) bool) {
		for {
			it, err := v.sub.Next(fx.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if it.Op == wire.PushEvent {
				v.events = append(v.events, *it.Event)
				if until(*it.Event) {
					return
				}
			}
		}
	}
	firstTurnEnds := func(e wire.Event) bool { return e.Type == wire.EventTurn && e.State != wire.TurnStarted }
	for _, v := range vs {
		collect(v, firstTurnEnds)
	}
	fx.d.stop()
	startDaemon(t, fx.home)
	r, err := first.PutInput(fx.ctx, "s", uuid.Must(uuid.NewV7()).String(), "after")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			collect(v, func(e wire.Event) bool {
				return e.Type == wire.EventTurn && e.TurnID == r.TurnID && e.State != wire.TurnStarted
			})
		}()
	}
	wg.Wait()
	for i, v := range vs {
		for j, e := range v.events {
			if e.Offset != int64(j+1) {
				t.Fatalf("viewer %d: event %d has offset %d", i, j, e.Offset)
			}
			o := vs[0].events[j]
			if e.Type != o.Type || e.Text != o.Text || e.State != o.State || !e.At.Equal(o.At) {
				t.Fatalf("viewer %d differs at offset %d: %+v vs %+v", i, e.Offset, e, o)
			}
		}
		if len(v.events) != len(vs[0].events) || len(v.events) != 8 {
			t.Fatalf("viewer %d saw %d events, viewer 0 %d, want 8", i, len(v.events), len(vs[0].events))
		}
	}
}

// One client with 50 sessions open across a restart; each
// resumes from its own offset, none replays from the start.
func TestFiftyChannelsResume(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	st := fx.c.Stream(client.StreamOptions{Backoff: client.BackoffOptions{Cap: 300 * time.Millisecond}})
	defer st.Close()
	subs := map[string]*client.Subscription{}
	for i := range 50 {
		id := fmt.Sprintf("f%02d", i)
		s, err := fx.c.CreateSession(fx.ctx, id, wire.SessionCreate{})
		if err != nil {
			t.Fatal(err)
		}
		for n := range i%3 + 1 { // different heads: 4, 8 or 12
			if _, err := fx.c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), fmt.Sprint(n)); err != nil {
				t.Fatal(err)
			}
		}
		subs[id] = st.Subscribe(id, client.Cursor{Epoch: s.Epoch})
	}
	want := func(id string) int64 { var i int; fmt.Sscanf(id, "f%d", &i); return int64(4 * (i%3 + 1)) }
	waitAt := func(id string, target int64, firstAllowed int64) {
		t.Helper()
		for {
			it, err := subs[id].Next(fx.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if it.Op == wire.PushReset {
				t.Fatalf("%s: reset", id)
			}
			if it.Op == wire.PushEvent {
				if it.Event.Offset < firstAllowed {
					t.Fatalf("%s: replayed offset %d", id, it.Event.Offset)
				}
				if it.Event.Offset == target {
					return
				}
			}
		}
	}
	for id := range subs {
		waitAt(id, want(id), 1)
	}
	fx.d.stop()
	startDaemon(t, fx.home)
	for id := range subs {
		if _, err := fx.c.PutInput(fx.ctx, id, uuid.Must(uuid.NewV7()).String(), "after"); err != nil {
			t.Fatal(err)
		}
	}
	for id := range subs {
		waitAt(id, want(id)+4, want(id)+1)
	}
}

// 200 clients losing the daemon at once spread their first reconnect
// attempts over the jitter window.
func TestNoReconnectStorm(t *testing.T) {
	parallel(t)
	fx := newFixture(t, fixtureOpts{})
	const n = 200
	first := make(chan time.Duration, n)
	up := make(chan struct{}, n)
	var streams []*client.Stream
	for range n {
		var once sync.Once
		var wasUp bool
		var mu sync.Mutex
		st := fx.c.Stream(client.StreamOptions{OnState: func(s client.State) {
			mu.Lock()
			defer mu.Unlock()
			if s.Phase == client.Connected && !wasUp {
				wasUp = true
				up <- struct{}{}
			}
			if s.Phase == client.Reconnecting && wasUp {
				once.Do(func() { first <- s.Next })
			}
		}})
		streams = append(streams, st)
	}
	defer func() {
		for _, st := range streams {
			st.Close()
		}
	}()
	for range n {
		select {
		case <-up:
		case <-time.After(60 * time.Second):
			t.Fatal("not every stream connected")
		}
	}
	fx.d.stop()
	var hist [10]int
	for range n {
		dd := <-first
		if dd > 250*time.Millisecond {
			t.Fatalf("a first reconnect delay of %s", dd)
		}
		hist[min(int(dd*10/(250*time.Millisecond)), 9)]++
	}
	for _, h := range hist {
		if h == 0 || h > n/3 {
			t.Fatalf("first reconnect delays per 25ms: %v", hist)
		}
	}
}
