package db

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWALStaysBoundedUnderContinuousWrites: a writer that never pauses must
// not grow the WAL without bound. Passive checkpoints alone cannot rewind a
// WAL that is appended to between them (under the bench's load it grew for
// ever, and a restart read it all back). The WAL must be emptied again and
// again while the writes go on; how large it gets in between depends on how
// fast this machine writes between two checkpoints, so that is logged, not
// asserted.
func TestWALStaysBoundedUnderContinuousWrites(t *testing.T) {
	t.Parallel()
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
	rewinds := d.w.Stats().Rewinds
	t.Logf("the WAL was emptied %d times; largest %d KiB; the writer checkpointed %d times", shrank, largest>>10, rewinds)
	if rewinds == 0 {
		t.Fatal("the writer never checkpointed between batches to rewind the WAL")
	}
	if shrank < 3 {
		t.Fatalf("the WAL was emptied %d times while ~8 MB went through it (largest %d KiB)", shrank, largest>>10)
	}
	evs, err := d.EventsAfter(ctx, "s", 1990, 100, 0)
	if err != nil || len(evs) != 10 || evs[9].Offset != 2000 {
		t.Fatalf("after the checkpoints: %d events, %v", len(evs), err)
	}
}

// walFrames is how many frames the WAL holds, as a passive checkpoint
// reports it.
func walFrames(t *testing.T, d *DB) int {
	t.Helper()
	var busy, frames, copied int
	if err := d.ckpt.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		t.Fatal(err)
	}
	return frames
}

// fillWAL appends n events of about a page each to session s.
func fillWAL(t *testing.T, d *DB, s string, n int) {
	t.Helper()
	for range n {
		if _, err := appendText(context.Background(), d, s, strings.Repeat("y", 4000)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriterRewindsALargeWAL: past the limit, a checkpoint has the writer
// checkpoint between two batches, and the writer's next commit starts the
// WAL again from its beginning: no TRUNCATE holding commits back
// (rewind.go). Nothing writes while this test checkpoints, so the WAL
// would rewind after any full checkpoint; that the writer ran one is
// what it shows. TestWALStaysBoundedUnderContinuousWrites has writes go
// on throughout.
func TestWriterRewindsALargeWAL(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{walLimitPages: 64, ckptEvery: time.Hour}) // its checkpoints only
	createSession(t, d, "s")
	fillWAL(t, d, "s", 200) // ~800 KiB, over the 256 KiB limit
	// The search indexer's first step reads the store (the deleted
	// sessions' documents it must forget) in the transaction that indexes
	// what came: a read open across the writer's checkpoint keeps the WAL
	// from rewinding, as any reader's does. Under load that step could
	// still run when the writer checkpointed; this test's rewind is one
	// with no reader about.
	waitIndexed(t, d)
	if n := walFrames(t, d); n < 64 {
		t.Fatalf("before: %d frames in the WAL", n)
	}
	d.checkpoint()
	// The writer takes a rewind asked for before its next batch; the
	// commit after that checkpoint rewinds.
	fillWAL(t, d, "s", 2) // a few pages each: the event, its search index (search.go)
	if n, r := walFrames(t, d), d.w.Stats().Rewinds; n > 48 || r == 0 {
		t.Fatalf("after the rewind: %d frames in the WAL, %d rewinds", n, r)
	}
	if evs, err := d.EventsAfter(context.Background(), "s", 199, 10, 0); err != nil || len(evs) != 3 {
		t.Fatalf("after the rewind: %d events, %v", len(evs), err)
	}
}

// TestCheckpointTruncatesWhenNoRewind: a reader that keeps its snapshot
// in the WAL keeps the writer from rewinding it; once the WAL has only
// grown since the checkpoint asked, the next one empties the file itself
// (a TRUNCATE), so that the WAL stays bounded.
func TestCheckpointTruncatesWhenNoRewind(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{walLimitPages: 64, ckptEvery: time.Hour}) // its checkpoints only
	createSession(t, d, "s")
	fillWAL(t, d, "s", 10)
	ctx := context.Background()
	rtx, err := d.ro.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := rtx.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil { // its snapshot, in the WAL
		t.Fatal(err)
	}
	fillWAL(t, d, "s", 100)
	d.checkpoint()         // asks for a rewind
	fillWAL(t, d, "s", 10) // the writer checkpoints; the reader keeps the WAL
	if err := rtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	d.checkpoint() // the WAL only grew: a TRUNCATE
	if fi, err := os.Stat(d.path + "-wal"); err != nil || fi.Size() != 0 {
		t.Fatalf("after a checkpoint past the limit with no rewind the WAL holds %d bytes (%v)", fi.Size(), err)
	}
	if evs, err := d.EventsAfter(ctx, "s", 119, 10, 0); err != nil || len(evs) != 1 {
		t.Fatalf("after the checkpoint: %d events, %v", len(evs), err)
	}
}

// The checkpointer checkpoints every checkpointEvery and fsyncs the WAL
// at each tick between (walSyncEvery); a checkpoint more often than that
// is every tick's.
func TestCheckpointsAndSyncsTakeTurns(t *testing.T) {
	t.Parallel()
	tick := min(checkpointEvery, walSyncEvery)
	var got []bool
	for n := 1; n <= 6; n++ {
		got = append(got, checkpointsAt(n, checkpointEvery, tick))
	}
	if fmt.Sprint(got) != "[false false true false false true]" {
		t.Fatalf("ticks of every %v at %v: %v", checkpointEvery, tick, got)
	}
	if checkpointsAt(59, time.Minute, time.Second) || !checkpointsAt(60, time.Minute, time.Second) {
		t.Fatal("a minute's checkpoint not at its 60th tick")
	}
	if !checkpointsAt(1, 10*time.Millisecond, 10*time.Millisecond) {
		t.Fatal("a checkpoint more often than a second is not every tick's")
	}
	// A WAL not there yet is no failure.
	(&DB{path: filepath.Join(t.TempDir(), "none.db")}).syncWAL()
}
