package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/db"
	"albedo/hub/provider"
	"albedo/wire"
)

// BenchmarkTurns runs b.N echo turns spread over 1 or 100 sessions, all
// submitted at once, and reports turns/s until every turn has committed.
func BenchmarkTurns(b *testing.B) {
	for _, sessions := range []int{1, 100} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) { benchTurns(b, sessions, nil, wire.SessionCreate{}) })
	}
}

// benchTurns runs b.N turns over sessions made as create says (their
// provider one of reg's, or echo), from 8 goroutines at once, and reports
// turns/s until every turn has committed.
func benchTurns(b *testing.B, sessions int, reg *provider.Registry, create wire.SessionCreate) {
	var done atomic.Int64
	all := make(chan struct{})
	target := int64(b.N)
	h, err := Open(context.Background(), b.TempDir()+"/albedo.db", Options{Providers: reg, DB: db.Options{OnCommit: func(cs []db.Committed) {
		for _, c := range cs {
			for _, e := range c.Events {
				if turnEnd(e) != "" && done.Add(1) == target {
					close(all)
				}
			}
		}
	}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	for i := range sessions {
		if _, _, err := h.CreateSession(ctx, fmt.Sprintf("s%d", i), create); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for n := w; n < b.N; n += 8 {
				if _, err := h.PutInput(ctx, fmt.Sprintf("s%d", n%sessions), uuid.Must(uuid.NewV7()).String(), "bench", wire.Author{Name: "user"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	<-all
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// stampProvider emits b.N chunks, each its own emit time in nanoseconds.
type stampProvider struct{ chunks int }

func (p stampProvider) Author(provider.Request) string { return "stamp" }
func (p stampProvider) Stream(ctx context.Context, _ provider.Request, emit func(string)) error {
	for range p.chunks {
		emit(strconv.FormatInt(time.Now().UnixNano(), 10) + ";")
	}
	return nil
}

// BenchmarkDeltaLatency measures the time from a provider handing a chunk
// to the hub (emit) until a viewer's connection writer has it in the batch
// it is about to write, with 1 and 10 viewers. Reported: p50 and p99 in µs.
// A slow drain would merge deltas; the latency of a merged chunk counts
// from its own emit.
func BenchmarkDeltaLatency(b *testing.B) {
	for _, viewers := range []int{1, 10} {
		b.Run(fmt.Sprintf("viewers=%d", viewers), func(b *testing.B) {
			reg, _ := provider.NewRegistry(provider.Config{}, nil)
			reg.Register("stamp", stampProvider{chunks: b.N})
			h := newTestHub(b, Options{Providers: reg})
			ctx := context.Background()
			if _, _, err := h.CreateSession(ctx, "s", wire.SessionCreate{Provider: "stamp"}); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range viewers {
				c := h.Connect(ConnInfo{})
				wake := wakes(c)
				win := 0
				c.Subscribe(ctx, []wire.Sub{{Session: "s", Window: &win}}, func(r []wire.SubReply) any { return r })
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					var buf []byte
					for {
						buf, _ = c.Fill(ctx, buf[:0], 64<<10)
						now := time.Now()
						for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
							var f wire.TextPush
							if json.Unmarshal(line, &f) != nil || f.Op != wire.PushDelta {
								continue
							}
							for _, s := range bytes.Split([]byte(f.Text), []byte{';'}) {
								if ns, err := strconv.ParseInt(string(s), 10, 64); err == nil {
									mu.Lock()
									lat = append(lat, now.Sub(time.Unix(0, ns)))
									mu.Unlock()
								}
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
				}()
			}
			b.ResetTimer()
			if _, err := h.PutInput(ctx, "s", uuid.Must(uuid.NewV7()).String(), "go", wire.Author{Name: "user"}); err != nil {
				b.Fatal(err)
			}
			for {
				st, _ := h.Status(ctx, "s")
				if st.LastTurn != nil && st.Phase == wire.PhaseIdle {
					break
				}
				time.Sleep(time.Millisecond) // a benchmark's wait for the end; no test asserts on it
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			if len(lat) == 0 {
				// A reply that commits before any viewer writes loses its
				// deltas to the committed message, as it should; with a
				// tiny b.N that is every reply.
				return
			}
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// windowed is echo with a context window: its turns read their
// transcript as a provider with one does (compaction.go), every message
// of the session within the budget.
type windowed struct{ provider.Echo }

func (windowed) Context(provider.Request) int { return 200_000 }
func (windowed) Summarizer() string           { return "" }

// BenchmarkTurnsWindowed is BenchmarkTurns through a provider with a
// context window of 200 000 tokens, on 100 sessions: each turn reads its
// session's messages back to its start (none is compacted at this
// size), and counts their tokens.
func BenchmarkTurnsWindowed(b *testing.B) {
	reg, err := provider.NewRegistry(provider.Config{}, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	reg.Register("win", windowed{})
	benchTurns(b, 100, reg, wire.SessionCreate{Title: "t", Provider: "win"})
}
