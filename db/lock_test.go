package db

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"albedo/db/pgtest"
	"albedo/wire"
)

// Three daemons on one PostgreSQL database append to the same sessions at
// once, many requests writing two sessions in either order, half of them
// naming one of the two (DoIn): offsets stay dense per session, every
// write lands, and none fails on a deadlock (lock.go's order). Batches found a row locked elsewhere and ran again
// (LockRetries): the test makes them contend.
func TestThreeDaemonsKeepOffsetsDense(t *testing.T) {
	t.Parallel()
	tgt := pgtest.Shared(t).Database(t)
	ctx := context.Background()
	var nodes []*DB
	for range 3 {
		nodes = append(nodes, openOn(t, tgt, Options{}))
	}
	const sessions, writers, each = 6, 20, 25
	for i := range sessions {
		createSession(t, nodes[0], fmt.Sprintf("s%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes)*writers)
	for n, d := range nodes {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					a := fmt.Sprintf("s%d", (n+w+i)%sessions)
					b := fmt.Sprintf("s%d", (n*7+w*3+i*5)%sessions)
					write := func(tx *Tx) error {
						for _, s := range []string{a, b} {
							if _, err := tx.Append(ctx, s, wire.Event{Type: wire.EventMessage, Text: "x"}); err != nil {
								return err
							}
						}
						return nil
					}
					var err error
					if w%2 == 0 { // names one of its sessions: locked up front, with the batch's others
						_, err = d.Writer().DoIn(ctx, a, write)
					} else {
						_, err = d.Writer().Do(ctx, write)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a write failed (SQLSTATE %q): %v", pgCode(err), err)
	}
	total := 0
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		evs, err := nodes[1].EventsAfter(ctx, id, 0, 100_000, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range evs {
			if e.Offset != int64(j+1) {
				t.Fatalf("%s: event %d at offset %d", id, j, e.Offset)
			}
		}
		s, err := nodes[2].Session(ctx, id)
		if err != nil || s.Head != int64(len(evs)) {
			t.Fatalf("%s: head %d (%v), %d events", id, s.Head, err, len(evs))
		}
		total += len(evs)
	}
	if want := len(nodes) * writers * each * 2; total != want {
		t.Fatalf("%d events stored, want %d", total, want)
	}
	var retries int64
	for _, d := range nodes {
		retries += d.Writer().Stats().LockRetries
	}
	t.Logf("%d events, %d batches ran again for a row locked elsewhere", total, retries)
}
