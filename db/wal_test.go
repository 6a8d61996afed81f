package db

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestWALStaysBoundedUnderContinuousWrites: a writer that never pauses
// must not grow the WAL without bound. Passive checkpoints alone cannot
// rewind a WAL that is appended to between them (the bench found a 494 MB
// WAL, and a restart that spent seconds reading it back).
func TestWALStaysBoundedUnderContinuousWrites(t *testing.T) {
	d := openTest(t, Options{walLimitPages: 64}) // 256 KiB of pages
	createSession(t, d, "s")
	ctx := context.Background()
	text := strings.Repeat("x", 4000) // about a page per event

	// Readers too: a checkpoint must not be held off for ever by them.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.EventsAfter(ctx, "s", 0, 5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Writes in one goroutine, checkpoints in this one: the writer keeps
	// appending while each checkpoint runs, which is what starves them.
	written := make(chan struct{})
	go func() {
		defer close(written)
		for range 4000 { // ~16 MB through the WAL
			if _, err := appendText(ctx, d, "s", text); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var largest int64
	for done := false; !done; {
		select {
		case <-written:
			done = true
		default:
		}
		d.checkpoint()
		if fi, err := os.Stat(d.path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	close(stop)
	wg.Wait()
	if largest > 4<<20 {
		t.Fatalf("the WAL grew to %d bytes with a limit of 256 KiB", largest)
	}
	t.Logf("largest WAL: %d KiB", largest>>10)
	evs, err := d.EventsAfter(ctx, "s", 3990, 100)
	if err != nil || len(evs) != 10 || evs[9].Offset != 4000 {
		t.Fatalf("after the checkpoints: %d events, %v", len(evs), err)
	}
}
