package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/db/pgtest"
	"albedo/hub/provider"
	"albedo/wire"
)

// quietCaller is callingProvider that may not call: its turns are the
// baseline a turn with a call is measured against.
type quietCaller struct{}

func (quietCaller) Author(provider.Request) string { return "caller" }
func (quietCaller) ToolLimits() provider.ToolLimits {
	return provider.ToolLimits{Timeout: time.Minute, MaxCalls: 4}
}
func (quietCaller) Stream(_ context.Context, _ provider.Request, emit func(string)) error {
	emit("no tool")
	return nil
}

// BenchmarkToolCall measures what a tool call costs the daemon itself,
// apart from the provider's and the tool's time (both answer at once,
// in-process): turns one after another on one session, each with no call
// (calls=0) or with one call the policy allows, run by a bot connection
// that answers it at once (calls=1). Reported: the p50 and p99 of a
// turn, from its input to its end's commit; the difference between the
// two is a call's cost: its commits (the call, begun, and its result)
// and its reads, and a second step of the provider. On SQLite, and on
// PostgreSQL as a node of a cluster (alone: its turns under a lease).
func BenchmarkToolCall(b *testing.B) {
	for _, store := range []string{"sqlite", "postgres"} {
		for _, calls := range []int{0, 1} {
			b.Run(fmt.Sprintf("store=%s/calls=%d", store, calls), func(b *testing.B) { benchToolCall(b, store, calls) })
		}
	}
}

// benchToolCall is BenchmarkToolCall on a store: SQLite, or a node of a
// cluster alone on PostgreSQL (its turns under a lease).
func benchToolCall(b *testing.B, store string, calls int) {
	reg, _ := provider.NewRegistry(provider.Config{Tools: provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "allow"}}}}, nil)
	reg.Register("caller", callingProvider{api: "bot__w__f"})
	reg.Register("quiet", quietCaller{})
	ended := make(chan struct{}, 1)
	target := b.TempDir() + "/albedo.db"
	if store == "postgres" {
		target = pgtest.Shared(b).Database(b)
	}
	h, err := Open(context.Background(), target, Options{Node: "a", Providers: reg, DB: db.Options{OnCommit: func(cs []db.Committed) {
		for _, c := range cs {
			for _, e := range c.Events {
				if turnEnd(e) != "" {
					ended <- struct{}{}
				}
			}
		}
	}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	if err := h.Start(ctx); err != nil {
		b.Fatal(err)
	}
	serveBotTools(b, h)
	name := map[int]string{0: "quiet", 1: "caller"}[calls]
	if _, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Provider: name}); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := h.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "go", wire.Author{Name: "user"}); err != nil {
			b.Fatal(err)
		}
		<-ended
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// serveBotTools connects bot w, serving tool f, answering every call at
// once with "42", until the benchmark ends.
func serveBotTools(b *testing.B, h *Hub) {
	c := h.Connect(ConnInfo{Name: "w", Role: wire.TokenBot, AuthorID: "bot:w"})
	if err := h.ServeTools(c, "w", []wire.ToolSpec{{Name: "f", InputSchema: []byte(`{"type":"object"}`)}}, func(string) bool { return true }); err != nil {
		b.Fatal(err)
	}
	wake := wakes(c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	b.Cleanup(func() { close(stop); wg.Wait(); c.Close() })
	wg.Go(func() {
		var buf []byte
		for {
			buf, _ = c.Fill(context.Background(), buf[:0], 64<<10)
			for _, line := range splitLines(buf) {
				if f, err := wire.DecodeFrame(line); err == nil && f.Tool != nil {
					_ = h.ToolResult(c, f.Tool.CallID, "42", "")
				}
			}
			if len(buf) == 0 {
				select {
				case <-wake:
				case <-stop:
					return
				}
			}
		}
	})
}

// viewersOf subscribes n connections to session from its start, each
// drained by a goroutine that hands what it reads to read; it returns
// what stops and closes them.
func viewersOf(h *Hub, session, epoch string, n int, read func([]byte)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		c := h.Connect(ConnInfo{})
		wake := wakes(c)
		zero := int64(0)
		c.Subscribe(context.Background(), []wire.Sub{{Session: session, After: &zero, Epoch: epoch}}, func(r []wire.SubReply) any { return r })
		wg.Go(func() {
			defer c.Close()
			var buf []byte
			for {
				buf, _ = c.Fill(context.Background(), buf[:0], 64<<10)
				read(buf)
				if len(buf) == 0 {
					select {
					case <-wake:
					case <-done:
						return
					}
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

func splitLines(buf []byte) [][]byte {
	var out [][]byte
	for len(buf) > 0 {
		i := slices.Index(buf, '\n')
		if i < 0 {
			return append(out, buf)
		}
		if i > 0 {
			out = append(out, buf[:i])
		}
		buf = buf[i+1:]
	}
	return out
}

// BenchmarkApprovalPrompt measures how soon a call that asks reaches the
// people who decide it: 1 000 viewers of a session, each drained by its
// own writer loop, and b.N turns whose call asks; each turn's tool_call
// commit is timed against its arrival at every viewer. Reported: the p50
// and p99 over every viewer and call, and the slowest. Each call is then
// denied, so the turn ends and the next begins.
func BenchmarkApprovalPrompt(b *testing.B) {
	const viewers = 1000
	reg, _ := provider.NewRegistry(provider.Config{}, nil)
	reg.Register("caller", callingProvider{api: "bot__w__f"})
	var committed sync.Map // call id → commit time
	calls := make(chan string, 1)
	h, err := Open(context.Background(), b.TempDir()+"/albedo.db", Options{Providers: reg, DB: db.Options{OnCommit: func(cs []db.Committed) {
		for _, c := range cs {
			for _, e := range c.Events {
				if e.Type == wire.EventToolCall {
					var ev wire.Event
					_ = json.Unmarshal(e.JSON, &ev)
					committed.Store(ev.CallID, time.Now())
					calls <- ev.CallID
				}
			}
		}
	}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	serveBotTools(b, h)
	s, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Provider: "caller"})
	if err != nil {
		b.Fatal(err)
	}
	type arrival struct {
		call string
		at   time.Time
	}
	seen := make(chan arrival, viewers*4)
	defer viewersOf(h, "s", s.Epoch, viewers, func(buf []byte) {
		for _, line := range splitLines(buf) {
			if !bytes.Contains(line, []byte(`"type":"tool_call"`)) {
				continue
			}
			now := time.Now()
			f, err := wire.DecodeFrame(line)
			if err != nil || f.Event == nil {
				continue
			}
			seen <- arrival{f.Event.CallID, now} // its commit time may be stored after
		}
	})()
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		if _, err := h.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "go", wire.Author{Name: "user"}); err != nil {
			b.Fatal(err)
		}
		call := <-calls
		for range viewers {
			a := <-seen
			t0, _ := committed.Load(a.call)
			lat = append(lat, a.at.Sub(t0.(time.Time)))
		}
		if _, err := h.Decide(ctx, "s", call, wire.Decision{Decision: wire.DecisionDeny}, wire.Author{Name: "user"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}
