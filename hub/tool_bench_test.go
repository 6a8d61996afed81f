package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"albedo/db"
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
// two is a call's cost: its commits (the call, its start, its result)
// and its reads, and a second step of the provider.
func BenchmarkToolCall(b *testing.B) {
	for _, calls := range []int{0, 1} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			reg, _ := provider.NewRegistry(provider.Config{Tools: provider.ToolsConfig{Rules: []provider.ToolRule{{Match: "*", Policy: "allow"}}}}, nil)
			reg.Register("caller", callingProvider{api: "bot__w__f"})
			reg.Register("quiet", quietCaller{})
			ended := make(chan struct{}, 1)
			h, err := Open(context.Background(), b.TempDir()+"/albedo.db", Options{Providers: reg, DB: db.Options{OnCommit: func(cs []db.Committed) {
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
		})
	}
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
