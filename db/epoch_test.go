package db

import (
	"context"
	"sync"
	"testing"

	"albedo/wire"
)

// Every commit names its session's epoch, however the writer came by the
// session's counters: made in the batch, read back after a reopen, or
// locked ahead by a batch that knew its sessions (DoIn; on PostgreSQL all
// of a batch's rows in one statement). A node of a cluster tells a
// session from one made again under its id by it.
func TestCommitsNameTheirEpoch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		ctx := context.Background()
		var mu sync.Mutex
		var got []Committed
		open := func() *DB {
			return openOn(t, tgt, Options{OnCommit: func(cs []Committed) {
				mu.Lock()
				got = append(got, cs...)
				mu.Unlock()
			}})
		}
		d := open()
		createSession(t, d, "s")
		if _, err := appendText(ctx, d, "s", "made"); err != nil {
			t.Fatal(err)
		}
		d.Close(ctx)
		d = open()
		defer d.Close(ctx)
		if _, err := appendText(ctx, d, "s", "reopened"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Writer().DoIn(ctx, "s", func(tx *Tx) error {
			_, err := tx.Append(ctx, "s", wire.Event{Type: wire.EventMessage, Role: wire.RoleSystem, Text: "known"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range got {
			if len(c.Events) == 0 {
				continue
			}
			n++
			if c.Epoch != "e-s" {
				t.Errorf("a commit of %d events names epoch %q, want e-s", len(c.Events), c.Epoch)
			}
		}
		if n != 3 {
			t.Fatalf("%d commits with events, want 3", n)
		}
	})
}
