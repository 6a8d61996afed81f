package hub

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"albedo/db"
	"albedo/wire"
)

// BenchmarkFanout appends b.N events to one session watched by N cursors,
// each drained by its own writer loop (as api runs one per connection), and
// waits until every cursor has written every event. Reported: deliveries/s
// and allocations per delivery (the whole process: writer, hub and drains).
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("cursors=%d", n), func(b *testing.B) {
			h := newTestHub(b, Options{})
			epoch := mustCreate(b, h, "s").Epoch
			fanout(b, h, epoch, n, func(ctx context.Context) error {
				_, err := h.db.Writer().Do(ctx, func(tx *db.Tx) error {
					_, err := tx.Append(ctx, "s", wire.Event{Type: wire.EventMessage, Role: wire.RoleBot, Text: "fan-out benchmark event"})
					return err
				})
				return err
			})
		})
	}
}

// fanout watches session "s" with n cursors, each drained by its own
// writer loop (as api runs one per connection), calls write b.N times
// (each must append one event) from 8 goroutines, so that group commit
// batches them as a busy daemon would, and waits until every cursor has
// written every event.
func fanout(b *testing.B, h *Hub, epoch string, n int, write func(context.Context) error) {
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var head int64
	if s, err := h.db.Session(ctx, "s"); err == nil {
		head = s.Head
	}
	for range n {
		c := h.Connect(ConnInfo{})
		wake := wakes(c)
		zero := int64(0)
		c.Subscribe(ctx, []wire.Sub{{Session: "s", After: &zero, Epoch: epoch}}, func(r []wire.SubReply) any { return r })
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			var buf []byte
			for {
				buf, _ = c.Fill(ctx, buf[:0], 64<<10)
				c.mu.Lock()
				s := c.subs["s"]
				done := s.next > head+int64(b.N)
				c.mu.Unlock()
				if done {
					return
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
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	var pw sync.WaitGroup
	per := b.N / 8
	for g := range 8 {
		cnt := per
		if g == 7 {
			cnt = b.N - per*7
		}
		pw.Add(1)
		go func() {
			defer pw.Done()
			for range cnt {
				if err := write(ctx); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	pw.Wait()
	wg.Wait()
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	close(stop)
	deliveries := float64(b.N) * float64(n)
	b.ReportMetric(deliveries/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/deliveries, "allocs/delivery")
}
