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
