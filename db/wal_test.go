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
// WAL, and a restart that spent seconds reading it back). The WAL must be
// emptied again and again while the writes go on; how large it gets in
// between depends on how fast this machine writes between two
// checkpoints, so that is logged, not asserted.
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
				if _, err := d.EventsAfter(ctx, "s", 0, 5, 0); err != nil {
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
		for range 2000 { // ~8 MB through the WAL
			if _, err := appendText(ctx, d, "s", text); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var largest, prev int64
	shrank := 0
	for done := false; !done; {
		select {
		case <-written:
			done = true
		default:
		}
		d.checkpoint()
		if fi, err := os.Stat(d.path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
			if fi.Size() < prev {
				shrank++
			}
			prev = fi.Size()
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("the WAL was emptied %d times; largest %d KiB", shrank, largest>>10)
	if shrank < 3 {
		t.Fatalf("the WAL was emptied %d times while ~8 MB went through it (largest %d KiB)", shrank, largest>>10)
	}
	evs, err := d.EventsAfter(ctx, "s", 1990, 100, 0)
	if err != nil || len(evs) != 10 || evs[9].Offset != 2000 {
		t.Fatalf("after the checkpoints: %d events, %v", len(evs), err)
	}
}

// TestCheckpointEmptiesALargeWAL: past the limit, a checkpoint empties the
// WAL file itself. A passive one would leave it for the next commit to
// rewind, which under continuous writes never comes (see above).
func TestCheckpointEmptiesALargeWAL(t *testing.T) {
	d := openTest(t, Options{walLimitPages: 64})
	createSession(t, d, "s")
	ctx := context.Background()
	for range 200 { // ~800 KiB, over the 256 KiB limit
		if _, err := appendText(ctx, d, "s", strings.Repeat("y", 4000)); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(d.path + "-wal")
	if err != nil || fi.Size() < 256<<10 {
		t.Fatalf("before: WAL %v, %v", fi, err)
	}
	d.checkpoint()
	if fi, err = os.Stat(d.path + "-wal"); err != nil || fi.Size() != 0 {
		t.Fatalf("after a checkpoint past the limit the WAL holds %d bytes (%v)", fi.Size(), err)
	}
	if evs, err := d.EventsAfter(ctx, "s", 199, 10, 0); err != nil || len(evs) != 1 {
		t.Fatalf("after the checkpoint: %d events, %v", len(evs), err)
	}
}
