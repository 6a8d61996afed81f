package db

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"albedo/wire"
)

// A write submitted after Close is refused with ErrClosed, never left
// waiting: once Close has begun nothing more is queued (Writer.queue), so
// no request waits for a writer that has stopped.
func TestDoAfterCloseReturnsErrClosed(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d, err := Open(context.Background(), tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			for range 200 {
				if _, err := d.Writer().Do(context.Background(), func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Do after Close: %v, want ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Do after Close still waiting after 10 s")
		}
	})
}

// On one processor, writers that queue at once share a commit: the writer
// yields before it closes a batch, so that senders made runnable by the
// same network poll get to queue first (Writer.gather). Without the
// yield, the scheduler ran the writer as soon as the first sender blocked,
// and batches held one request. The stats count every request once.
// It sets GOMAXPROCS for the whole process, so it runs alone: not in
// parallel, before the parallel tests start.
func TestConcurrentWritersShareCommits(t *testing.T) {
	eachBackendInTurn(t, func(t *testing.T, tgt string) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		d := openOn(t, tgt, Options{})
		const writers, each = 50, 20
		for w := range writers {
			createSession(t, d, fmt.Sprintf("s%d", w))
		}
		before := d.Writer().Stats()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for range each {
					if _, err := appendText(context.Background(), d, fmt.Sprintf("s%d", w), "x"); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		after := d.Writer().Stats()
		reqs, batches := after.Requests-before.Requests, after.Batches-before.Batches
		if reqs != writers*each {
			t.Fatalf("stats counted %d requests, want %d", reqs, writers*each)
		}
		var sized int64
		for i := range after.Sizes {
			sized += after.Sizes[i] - before.Sizes[i]
		}
		if sized != batches {
			t.Fatalf("size histogram holds %d batches, want %d", sized, batches)
		}
		t.Logf("%d requests in %d batches", reqs, batches)
		if mean := float64(reqs) / float64(batches); mean < 5 {
			t.Fatalf("%d requests in %d batches (%.1f a batch): concurrent writers are not sharing commits", reqs, batches, mean)
		}
	})
}

// Writes handed to Then from one goroutine are answered in that order,
// across sessions, on the writer goroutine; after Close, at once with
// ErrClosed.
func TestThenAnswersInOrder(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d, err := Open(context.Background(), tgt, Options{})
		if err != nil {
			t.Fatal(err)
		}
		createSession(t, d, "a")
		createSession(t, d, "b")
		ctx := context.Background()
		const n = 300
		answered := make(chan int, n)
		var offsets [n]int64
		for i := range n {
			session := []string{"a", "b"}[i%2]
			d.Writer().Then(ctx, func(tx *Tx) error {
				evs, err := tx.Append(ctx, session, wire.Event{Type: wire.EventMessage, Text: "x"})
				if err == nil {
					offsets[i] = evs[0].Offset
				}
				return err
			}, func(err error) {
				if err != nil {
					t.Errorf("write %d: %v", i, err)
				}
				answered <- i
			})
		}
		for want := range n {
			if got := <-answered; got != want {
				t.Fatalf("write %d answered in place %d", got, want)
			}
			if offsets[want] != int64(want/2+1) {
				t.Fatalf("write %d at offset %d, want %d", want, offsets[want], want/2+1)
			}
		}
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}
		var after error
		d.Writer().Then(ctx, func(*Tx) error { return nil }, func(err error) { after = err })
		if !errors.Is(after, ErrClosed) {
			t.Fatalf("Then after Close: %v, want ErrClosed at once", after)
		}
	})
}

// A lone request runs optimistically, as any batch does: one that succeeds
// is run once, with no savepoint (no retry counted), and a lone post that
// repeats an earlier one is still its repeat: the index refuses the
// optimistic insert, and the batch runs again carefully, finding it. One
// that fails is run again carefully, and fails alone with its error.
func TestLoneRequestsRunOptimistically(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		ctx := context.Background()
		d := openOn(t, tgt, Options{})
		createSession(t, d, "s")
		retries := func() int64 { return d.Writer().Stats().Retries }
		post := func(text string) (Input, bool, error) {
			var in Input
			var created bool
			_, err := d.Writer().Do(ctx, func(tx *Tx) error {
				var err error
				in, created, _, err = tx.PutInput(ctx, "s", "0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b", text, wire.RoleBot, wire.Author{Name: "bot"})
				return err
			})
			return in, created, err
		}
		first, created, err := post("hello")
		if err != nil || !created || retries() != 0 {
			t.Fatalf("a lone post: created %v, %v, %d retries (want none)", created, err, retries())
		}
		again, created, err := post("hello")
		if err != nil || created || again.Receipt() != first.Receipt() {
			t.Fatalf("its repeat: created %v, %v, receipt %+v, want %+v", created, err, again.Receipt(), first.Receipt())
		}
		if n := retries(); n != 1 {
			t.Fatalf("the repeat ran %d times again, want once (carefully)", n)
		}
		boom := errors.New("boom")
		if _, err := d.Writer().Do(ctx, func(*Tx) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("a failing lone request: %v", err)
		}
		if n := retries(); n != 2 {
			t.Fatalf("%d retries after a failing lone request, want 2", n)
		}
	})
}
