package hub

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"albedo/db"
	"albedo/db/pgtest"
	"albedo/hub/acphost/fakeagent"
	"albedo/wire"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeagent.Env) != "" { // the test binary run again as a coding agent (agent_bench_test.go)
		fakeagent.Main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(pgtest.ThenStop(m))
}

// newTestHub opens a hub over a real database in a temp dir.
func newTestHub(t testing.TB, opts Options) *Hub {
	t.Helper()
	if opts.DB.FoldRows == 0 {
		// Every event through the event log, folded every few events
		// (db/fold.go): a test's batches are small, and would write
		// straight into events, and its sessions short, and with the
		// daemon's fold at 1024 all they logged would stay in the log.
		opts.DB.FoldRows, opts.DB.AlwaysLog = 3, true
	}
	return openTestHub(t, filepath.Join(t.TempDir(), "albedo.db"), opts)
}

// openTestHub opens a hub on target (a SQLite path or a PostgreSQL URL)
// and closes it when t ends.
func openTestHub(t testing.TB, target string, opts Options) *Hub {
	t.Helper()
	h, err := Open(context.Background(), target, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

func mustCreate(t testing.TB, h *Hub, id string) wire.Session {
	t.Helper()
	s, _, err := h.CreateSession(context.Background(), id, wire.SessionCreate{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func appendN(t testing.TB, h *Hub, session string, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		if _, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
			_, err := tx.Append(ctx, session, wire.Event{Type: wire.EventMessage, Role: wire.RoleSystem, Text: "x"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// wakes has c's wakes (OnWake) signal the returned channel, of capacity
// 1: a writer that waits on it and then calls Fill misses none, however
// many wakes came while it was filling. Call it before anything is
// written to c, or call Fill once after it.
func wakes(c *Conn) <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.OnWake(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	return ch
}

// reader drains a Conn the way the api's writer goroutine does, decoding
// every frame.
type reader struct {
	c      *Conn
	frames chan wire.Frame
	stop   chan struct{}
	done   chan struct{}
}

func newReader(t testing.TB, c *Conn) *reader {
	r := &reader{c: c, frames: make(chan wire.Frame, 1<<16), stop: make(chan struct{}), done: make(chan struct{})}
	wake := wakes(c)
	go func() {
		defer close(r.done)
		var buf []byte
		for {
			var err error
			buf, err = c.Fill(context.Background(), buf[:0], 64<<10)
			if err != nil {
				t.Errorf("fill: %v", err)
				return
			}
			if len(buf) == 0 {
				select {
				case <-wake:
					continue
				case <-r.stop:
					return
				}
			}
			for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
				f, err := wire.DecodeFrame(line)
				if err != nil {
					t.Errorf("frame %q: %v", line, err)
					return
				}
				r.frames <- f
			}
		}
	}()
	t.Cleanup(func() { close(r.stop); <-r.done; c.Close() })
	return r
}

// next waits for the next frame matching keep.
func (r *reader) next(t testing.TB, keep func(wire.Frame) bool) wire.Frame {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case f := <-r.frames:
			if keep(f) {
				return f
			}
		case <-deadline:
			t.Fatalf("no matching frame within 10s")
		}
	}
}

func isEvent(f wire.Frame) bool { return f.Op == wire.PushEvent }

func subscribe(c *Conn, s wire.Sub) {
	c.Subscribe(context.Background(), []wire.Sub{s}, func(r []wire.SubReply) any {
		return wire.Reply{ID: 1, OK: r[0].OK, Error: r[0].Error, SubReply: &r[0]}
	})
}

// A subscriber that subscribes after N while appends race receives exactly
// N+1…head and then live events: no gap, no duplicate.
func TestSubscribeAfterWhileAppending(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{RingSize: 16, PageSize: 7})
	const total = 600
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 8 {
		id := fmt.Sprintf("s%d", round)
		epoch := mustCreate(t, h, id).Epoch
		appendN(t, h, id, 50)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); appendN(t, h, id, total-50) }()

		after := int64(rng.IntN(50))
		r := newReader(t, h.Connect(ConnInfo{Name: "t"}))
		subscribe(r.c, wire.Sub{Session: id, After: &after, Epoch: epoch})
		rep := r.next(t, func(f wire.Frame) bool { return f.IsReply() })
		if !rep.Reply.OK || !rep.Reply.Recovered {
			t.Fatalf("sub reply %+v", rep)
		}
		want := after + 1
		for want <= total {
			f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushEvent || f.Op == wire.PushReset })
			if f.Op == wire.PushReset {
				t.Fatalf("unexpected reset %+v", f)
			}
			if f.Event.Offset != want {
				t.Fatalf("round %d after %d: got offset %d, want %d", round, after, f.Event.Offset, want)
			}
			want++
		}
		wg.Wait()
	}
}

func TestSubscribeWithoutCursorResets(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	mustCreate(t, h, "s")
	appendN(t, h, "s", 30)
	r := newReader(t, h.Connect(ConnInfo{}))
	win := 5
	subscribe(r.c, wire.Sub{Session: "s", Window: &win})
	rep := r.next(t, func(f wire.Frame) bool { return f.IsReply() })
	if !rep.Reply.OK || rep.Reply.Recovered || rep.Reply.Head != 30 {
		t.Fatalf("reply %+v", rep)
	}
	reset := r.next(t, func(f wire.Frame) bool { return f.Op != "" })
	if reset.Op != wire.PushReset || reset.Reset.Before != 25 || !reset.Reset.More || reset.Reset.Reason != wire.ResetNew {
		t.Fatalf("first push %+v, want reset before 25", reset)
	}
	for want := int64(26); want <= 30; want++ {
		if f := r.next(t, isEvent); f.Event.Offset != want {
			t.Fatalf("offset %d, want %d", f.Event.Offset, want)
		}
	}
	st := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushStatus })
	if st.Status.Phase != wire.PhaseIdle || st.Status.Head != 30 || st.Status.Viewers != 1 {
		t.Fatalf("status %+v", st)
	}

	// Wrong epoch and ahead-of-head both reset.
	for _, tc := range []struct {
		after  int64
		epoch  string
		reason string
	}{{3, "nope", wire.ResetEpoch}, {99, mustEpoch(t, h, "s"), wire.ResetAhead}} {
		subscribe(r.c, wire.Sub{Session: "s", After: &tc.after, Epoch: tc.epoch, Window: &win})
		rep := r.next(t, func(f wire.Frame) bool { return f.IsReply() })
		if rep.Reply.Recovered {
			t.Fatalf("after %d epoch %q: recovered", tc.after, tc.epoch)
		}
		f := r.next(t, func(f wire.Frame) bool { return f.Op == wire.PushReset })
		if f.Reset.Reason != tc.reason || f.Reset.Before != 25 {
			t.Fatalf("reset %+v, want reason %s", f, tc.reason)
		}
		if f := r.next(t, isEvent); f.Event.Offset != 26 {
			t.Fatalf("re-positioned sub starts at %d", f.Event.Offset)
		}
	}
}

func mustEpoch(t testing.TB, h *Hub, id string) string {
	s, err := h.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Epoch
}

func TestSubscribeMissingSession(t *testing.T) {
	t.Parallel()
	h := newTestHub(t, Options{})
	r := newReader(t, h.Connect(ConnInfo{}))
	subscribe(r.c, wire.Sub{Session: "ghost"})
	rep := r.next(t, func(f wire.Frame) bool { return f.IsReply() })
	if rep.Reply.OK || rep.Reply.Error == nil || rep.Reply.Error.Code != wire.CodeNotFound {
		t.Fatalf("reply %+v", rep)
	}
	if r.c.Channels() != 0 {
		t.Fatalf("failed sub left a channel")
	}
}

// A session whose load the caller gave up on (its connection closed) is
// not an error in the log.
func TestChannelLoadForAGoneCallerLogsNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "albedo.db")
	h := openTestHub(t, path, Options{})
	mustCreate(t, h, "s")
	var logged lockedBuffer
	h2, err := Open(context.Background(), path, Options{}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, werr := h2.channel(ctx, "s"); werr == nil {
		t.Fatal("a load with a cancelled context succeeded")
	}
	if strings.Contains(logged.String(), "load session") {
		t.Fatalf("a gone caller's load was logged:\n%s", logged.String())
	}
	if _, werr := h2.channel(context.Background(), "s"); werr != nil {
		t.Fatalf("the load after it: %v", werr)
	}
}
