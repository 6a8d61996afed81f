package db

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppend compares group commit with one transaction per event, at
// 1, 10 and 100 concurrent writers, each appending one event per request to
// its own session, with synchronous=NORMAL (the daemon's setting) and FULL
// (an fsync per commit). Reported: events/s.
func BenchmarkAppend(b *testing.B) {
	for _, syncMode := range []string{"normal", "full"} {
		for _, mode := range []string{"group", "single"} {
			for _, writers := range []int{1, 10, 100} {
				benchAppend(b, syncMode, mode, writers)
			}
		}
	}
}

func benchAppend(b *testing.B, syncMode, mode string, writers int) {
	b.Run(fmt.Sprintf("sync=%s/%s/writers=%d", syncMode, mode, writers), func(b *testing.B) {
		d := openTest(b, Options{NoGroupCommit: mode == "single", Synchronous: syncMode})
		for w := range writers {
			createSession(b, d, fmt.Sprintf("s%d", w))
		}
		ctx := context.Background()
		var left atomic.Int64
		left.Store(int64(b.N))
		var wg sync.WaitGroup
		b.ResetTimer()
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("s%d", w)
				for left.Add(-1) >= 0 {
					if _, err := appendText(ctx, d, id, "benchmark event text"); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}
