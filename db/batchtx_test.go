package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"albedo/db/pgtest"
	"albedo/wire"
)

// A batch whose COMMIT fails on PostgreSQL (here a deferred constraint,
// checked only then) fails its requests with the commit's error, and
// gives its connection back: more failed commits than the pool has
// connections leave the next write to go through.
func TestFailedCommitsKeepThePool(t *testing.T) {
	t.Parallel()
	d := openOn(t, pgtest.Shared(t).Database(t), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createSession(t, d, "s")
	for _, q := range []string{
		`CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN IF NEW.payload LIKE '%refused at commit%' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER refuse_bad AFTER INSERT ON events
		 DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_bad()`,
	} {
		if _, err := d.rw.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	appendText := func(text string) error {
		_, err := d.Writer().DoIn(ctx, "s", func(tx *Tx) error {
			_, err := tx.Append(ctx, "s", wire.Event{Type: wire.EventMessage, Text: text})
			return err
		})
		return err
	}
	for range 2 * pgPoolSize {
		err := appendText("refused at commit")
		if err == nil || !strings.Contains(err.Error(), "commit: ") || !strings.Contains(err.Error(), "refused at commit") {
			t.Fatalf("a write refused at COMMIT: %v, want the commit's error", err)
		}
	}
	if err := appendText("kept"); err != nil {
		t.Fatalf("a write after %d failed commits: %v", 2*pgPoolSize, err)
	}
	evs, err := d.EventsAfter(ctx, "s", 0, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if strings.Contains(string(e.JSON), "refused at commit") {
			t.Fatalf("a refused write was kept at %d", e.Offset)
		}
	}
	if n := len(evs); n == 0 || !strings.Contains(string(evs[n-1].JSON), "kept") || evs[n-1].Offset != int64(n) {
		t.Fatalf("the session's last event is not the one kept, at a dense offset: %d events", n)
	}
}

// A user's input queued by one request of a batch on PostgreSQL
// (insertInput) is sent before the next statement the batch runs at
// once, by SQL or by bun: a later request of the same batch reads it, and
// the batch runs once, optimistically. A queued input whose id is taken
// fails there, and the batch runs again with savepoints: the repeat is
// answered with the stored receipt, the other requests as before.
func TestQueuedInputsGoBeforeTheBatchsNextStatement(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{})
		ctx := context.Background()
		createSession(t, d, "a")
		put := func(id string, got *Input) func(*Tx) error {
			return func(tx *Tx) error {
				in, _, _, err := tx.PutInput(ctx, "a", id, "hello", wire.RoleUser, wire.Author{Name: "me"})
				*got = in
				return err
			}
		}
		var runs int
		var delivery string
		var rows int64
		read := func(id string) func(*Tx) error {
			return func(tx *Tx) error {
				runs++
				if err := tx.sql.QueryRowContext(ctx, tx.bind(`SELECT delivery FROM inputs WHERE session = ? AND input_id = ?`),
					"a", id).Scan(&delivery); err != nil {
					return err
				}
				var err error
				rows, err = tx.NewSelect().Model((*Input)(nil)).Where("session = ? AND input_id = ?", "a", id).Count(ctx)
				return err
			}
		}
		var first, again Input
		retries := d.w.stats.retries.Load()
		if errs := oneBatch(t, d, put("u1", &first), read("u1")); errs[0] != nil || errs[1] != nil {
			t.Fatalf("batch: %v", errs)
		}
		if runs != 1 || delivery != wire.DeliveryQueued || rows != 1 {
			t.Fatalf("the later request ran %d times and read %q and %d rows; want once, %q and 1", runs, delivery, rows, wire.DeliveryQueued)
		}
		if n := d.w.stats.retries.Load() - retries; n != 0 {
			t.Fatalf("the batch ran again %d times; want none", n)
		}

		runs = 0
		if errs := oneBatch(t, d, put("u1", &again), read("u1")); errs[0] != nil || errs[1] != nil {
			t.Fatalf("batch with a repeat: %v", errs)
		}
		if again.Receipt() != first.Receipt() {
			t.Fatalf("the repeat was answered %+v; want %+v", again.Receipt(), first.Receipt())
		}
		if evs, err := d.EventsAfter(ctx, "a", 0, 10, 0); err != nil || len(evs) != 1 {
			t.Fatalf("%d events (%v); want the first input's message alone", len(evs), err)
		}
	})
}
