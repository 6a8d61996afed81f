//go:build !e2e_only || e2e_soak

package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/client"
	"albedo/wire"
)

// soakFor makes TestSoak the long run: go test ./e2e -run TestSoak -soak 10m.
var soakFor = flag.Duration("soak", 0, "run TestSoak this long, with a kill every 10–40 s (default: 60 s, one every 8–12 s)")

// soakRSSLimit is the most the daemon may hold, in MiB, at any check.
const soakRSSLimit = 400

// TestSoak is a bounded, repeatable chaos run: writers queue
// inputs to echo, streaming-provider and bot sessions, viewers watch them
// all, and the daemon is stopped or SIGKILLed at random, again and again.
// After each restart and at the end the logs are checked: offsets dense,
// no input twice, every turn closed at most once (exactly once at the
// end), every receipted input present once and in the order its writer
// queued it, no viewer saw a gap or a duplicate, and the daemon's RSS
// stayed under soakRSSLimit.
func TestSoak(t *testing.T) {
	skipShort(t, "a minute's soak")
	parallelLong(t)
	dur, minGap, maxGap := 60*time.Second, 8*time.Second, 12*time.Second
	if *soakFor > 0 {
		dur, minGap, maxGap = *soakFor, 10*time.Second, 40*time.Second
	}
	fx := newFixture(t, fixtureOpts{fake: true})
	ctx, cancel := context.WithTimeout(context.Background(), dur+dur/2+3*time.Minute)
	defer cancel()
	sessions := soakSessions(t, ctx, fx)

	var views []*soakViewer
	for range 3 {
		views = append(views, watchAll(t, fx.home, sessions))
	}
	stop := make(chan struct{})
	var writers []*soakWriter
	var wg sync.WaitGroup
	for w := range 3 {
		c := newClient(t, fx.home)
		sw := &soakWriter{name: fmt.Sprint("w", w), c: c, st: c.Stream(soakStreamOptions())}
		t.Cleanup(func() { sw.st.Close() })
		writers = append(writers, sw)
		wg.Go(func() { sw.run(ctx, sessions, stop) })
	}

	d, kills, peak := fx.d, 0, 0.0
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	// Each gap is counted from the kill before it, not from the end of
	// the restart and the checks after it: on a loaded machine those take
	// seconds, and counted in they would leave too few kills in the run.
	// The short run goes on past dur (up to twice it) until it has made
	// its five: a restart and its checks on a loaded machine can outlast
	// a gap, and the kills are what it is for.
	last := time.Now()
	end, limit := last.Add(dur), last.Add(2*dur)
	for time.Now().Before(end) || *soakFor == 0 && kills < 5 && time.Now().Before(limit) {
		gap := minGap + time.Duration(rng.Int64N(int64(maxGap-minGap)))
		wait := time.Until(last.Add(gap))
		if time.Now().Before(end) {
			wait = min(wait, time.Until(end))
		}
		time.Sleep(wait)
		peak = max(peak, rssMiB(t, d.cmd.Process.Pid))
		last = time.Now()
		if rng.IntN(2) == 0 {
			d.kill()
		} else {
			d.stop()
		}
		kills++
		d = startDaemon(t, fx.home)
		for _, s := range sessions {
			soakLog(t, ctx, fx.c, s, false)
		}
	}
	close(stop)
	wg.Wait()
	settle(t, ctx, fx.c, sessions)
	peak = max(peak, rssMiB(t, d.cmd.Process.Pid))

	logs := map[string][]wire.Event{}
	for _, s := range sessions {
		logs[s] = soakLog(t, ctx, fx.c, s, true)
	}
	sent := 0
	for _, w := range writers {
		sent += w.check(t, logs)
	}
	for i, v := range views {
		v.check(t, ctx, fx.c, sessions, i)
	}
	if peak > soakRSSLimit {
		t.Errorf("the daemon's RSS reached %.0f MiB; the bound is %d", peak, soakRSSLimit)
	}
	if *soakFor == 0 && kills < 5 {
		t.Errorf("%d kills in %s; the short run makes at least 5", kills, dur)
	}
	t.Logf("soak: %s, %d stops and kills, %d inputs receipted, daemon RSS peak %.0f MiB", dur, kills, sent, peak)
}

// soakSessions makes two echo sessions, two on the streaming fake provider
// and one answered by the example bot (started here).
func soakSessions(t *testing.T, ctx context.Context, fx *fixture) []string {
	t.Helper()
	tok, err := fx.c.AddBot(ctx, "soakbot", nil)
	if err != nil {
		t.Fatal(err)
	}
	startBot(t, fx.home, tok.Token, 10*time.Millisecond)
	var ids []string
	for i, p := range []string{"echo", "echo", "fake", "fake", "bot:soakbot"} {
		id := fmt.Sprintf("soak-%d", i)
		if _, err := fx.c.CreateSession(ctx, id, wire.SessionCreate{Provider: p}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func soakStreamOptions() client.StreamOptions {
	return client.StreamOptions{Backoff: client.BackoffOptions{First: 50 * time.Millisecond, Cap: 500 * time.Millisecond}}
}

// soakWriter queues bursts of inputs and records what it queued and which
// receipts came back.
type soakWriter struct {
	name string
	c    *client.Client
	st   *client.Stream

	mu       sync.Mutex
	queued   []soakInput
	receipts map[string]wire.Receipt
}

type soakInput struct{ session, id string }

func (w *soakWriter) run(ctx context.Context, sessions []string, stop <-chan struct{}) {
	w.receipts = map[string]wire.Receipt{}
	var waits sync.WaitGroup
	defer waits.Wait()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(150 * time.Millisecond):
		}
		s := sessions[n%len(sessions)]
		if w.busy(ctx, s) {
			continue
		}
		for k := range 1 + n%3 { // bursts of 1 to 3, queued back to back
			in := soakInput{s, uuid.Must(uuid.NewV7()).String()}
			q := w.st.Queue(s, in.id, fmt.Sprintf("%s %d.%d", w.name, n, k))
			w.mu.Lock()
			w.queued = append(w.queued, in)
			w.mu.Unlock()
			waits.Go(func() {
				rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
				defer cancel()
				if r, err := q.Receipt(rctx); err == nil {
					w.mu.Lock()
					w.receipts[in.id] = r
					w.mu.Unlock()
				}
			})
		}
	}
}

// busy says whether s already has more than soakBacklog turns waiting: a
// session answers one turn at a time, and a load it cannot keep up with
// would only grow a queue. A daemon that does not answer within a moment
// (it is down) is not busy: inputs queued then are the point of the run.
func (w *soakWriter) busy(ctx context.Context, s string) bool {
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	st, err := w.c.Status(sctx, s)
	return err == nil && st.Queued > soakBacklog
}

// soakBacklog is how many turns a writer lets wait in a session.
const soakBacklog = 10

// check: every receipted input is in its session's log once, and a
// session's inputs from this writer stand in the order it queued them.
func (w *soakWriter) check(t *testing.T, logs map[string][]wire.Event) int {
	t.Helper()
	at := map[string]int64{} // input id → offset of its message
	for _, evs := range logs {
		for _, e := range evs {
			if e.Type == wire.EventMessage && e.Role == wire.RoleUser {
				at[e.InputID] = e.Offset
			}
		}
	}
	last := map[string]int64{}
	for _, in := range w.queued {
		off, ok := at[in.id]
		if _, receipted := w.receipts[in.id]; receipted && !ok {
			t.Errorf("%s: input %s was receipted and is not in %s", w.name, in.id, in.session)
		}
		if !ok {
			continue
		}
		if off <= last[in.session] {
			t.Errorf("%s: input %s at offset %d in %s, before one queued earlier (at %d)", w.name, in.id, off, in.session, last[in.session])
		}
		last[in.session] = off
	}
	return len(w.receipts)
}

// soakViewer watches every session and records any gap or duplicate.
type soakViewer struct {
	mu   sync.Mutex
	last map[string]int64
	errs []string
}

func watchAll(t *testing.T, home string, sessions []string) *soakViewer {
	t.Helper()
	v := &soakViewer{last: map[string]int64{}}
	st := newClient(t, home).Stream(soakStreamOptions())
	t.Cleanup(func() { st.Close() })
	for _, s := range sessions {
		window := 10000 // the whole log, from its first event
		sub := st.Subscribe(s, client.Cursor{Window: &window})
		go func() {
			for {
				it, err := sub.Next(context.Background())
				if err != nil {
					return
				}
				v.mu.Lock()
				switch {
				case it.Op == wire.PushReset:
					v.last[s] = it.Reset.Before
				case it.Op == wire.PushEvent && it.Event.Offset != v.last[s]+1:
					v.errs = append(v.errs, fmt.Sprintf("%s: offset %d after %d", s, it.Event.Offset, v.last[s]))
					v.last[s] = it.Event.Offset
				case it.Op == wire.PushEvent:
					v.last[s] = it.Event.Offset
				}
				v.mu.Unlock()
			}
		}()
	}
	return v
}

// check waits for the viewer to reach every session's head, and reports
// what it saw wrong.
func (v *soakViewer) check(t *testing.T, ctx context.Context, c *client.Client, sessions []string, i int) {
	t.Helper()
	for {
		behind := ""
		for _, s := range sessions {
			st, err := c.Status(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if v.at(s) < st.Head {
				behind = s
			}
		}
		if behind == "" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("viewer %d never reached the head of %s (at %d)", i, behind, v.at(behind))
		case <-time.After(50 * time.Millisecond):
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, e := range v.errs {
		t.Errorf("viewer %d: %s", i, e)
	}
}

func (v *soakViewer) at(s string) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last[s]
}

// soakLog reads a session's whole log and checks it: offsets 1…head with
// none missing, no input twice, no turn started or closed twice; with
// final, every turn started is closed.
func soakLog(t *testing.T, ctx context.Context, c *client.Client, s string, final bool) []wire.Event {
	t.Helper()
	evs := events(t, ctx, c, s)
	inputs, started, closed := map[string]int{}, map[string]int{}, map[string]int{}
	for i, e := range evs {
		if e.Offset != int64(i+1) {
			t.Fatalf("%s: offset %d at position %d", s, e.Offset, i+1)
		}
		switch {
		case e.Type == wire.EventMessage && e.Role == wire.RoleUser:
			inputs[e.InputID]++
		case e.Type == wire.EventTurn && e.State == wire.TurnStarted:
			started[e.TurnID]++
		case e.Type == wire.EventTurn:
			closed[e.TurnID]++
		}
	}
	for id, n := range inputs {
		if n > 1 {
			t.Errorf("%s: input %s stored %d times", s, id, n)
		}
	}
	for id, n := range started {
		if n > 1 || closed[id] > 1 || final && closed[id] != 1 {
			t.Errorf("%s: turn %s started %d times, closed %d times", s, id, n, closed[id])
		}
	}
	return evs
}

// settle waits until no session has a turn running or queued.
func settle(t *testing.T, ctx context.Context, c *client.Client, sessions []string) {
	t.Helper()
	for _, s := range sessions {
		for {
			st, err := c.Status(ctx, s)
			if err != nil {
				t.Fatalf("status of %s: %v", s, err)
			}
			if st.Phase == wire.PhaseIdle && st.Queued == 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s still %s with %d queued", s, st.Phase, st.Queued)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
