package migrations

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/migrate"

	"albedo/db/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.ThenStop(m).Run()) }

// PostgreSQL's set applies to an empty database, makes the tables the code
// uses with the columns it writes, and rolls back to nothing.
func TestPostgresMigrations(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).Database(t)
	sqldb, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	bdb := bun.NewDB(sqldb, pgdialect.New())
	defer bdb.Close()
	ctx := context.Background()
	ms, err := NewPostgres()
	if err != nil {
		t.Fatal(err)
	}
	m := migrate.NewMigrator(bdb, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	tables := func() []string {
		var names []string
		if err := bdb.NewRaw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT LIKE 'bun_%' ORDER BY table_name`).Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		return names
	}
	if got := tables(); !slices.Equal(got, []string{"agent_sessions", "blob_chunks", "blob_refs", "blob_uploaders", "blob_uploads", "blobs", "changes", "cluster", "events", "events_log", "grants", "input_ids", "inputs", "members", "pins", "reads", "runs", "search_docs", "session_tools", "sessions", "sessions_now", "tokens", "tombstones", "tool_calls", "usage"}) {
		t.Fatalf("tables %v", got)
	}
	// A session, an event and a post's idempotency record as the code
	// writes them; offsets past 32 bits fit.
	stmts := []string{
		`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`,
		`INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES ('s', 5000000000, 'message', '{"b":1,"a":2}', 't', 'i1', 1)`,
		`INSERT INTO input_ids (input_id, session, "offset") VALUES ('i1', 's', 5000000000)`,
		`INSERT INTO runs (session, owner, fence, lease_until) VALUES ('s', 'node-a', 1, now())`,
	}
	for _, q := range stmts {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var payload string
	if err := bdb.NewRaw(`SELECT payload FROM events WHERE session = 's'`).Scan(ctx, &payload); err != nil || payload != `{"b":1,"a":2}` {
		t.Fatalf("payload %q %v: not kept byte for byte", payload, err)
	}
	if _, err := bdb.ExecContext(ctx, `INSERT INTO input_ids (input_id, session, "offset") VALUES ('i1', 's', 1)`); err == nil {
		t.Fatal("a post's input_id was accepted twice in one session")
	}
	if _, err := bdb.ExecContext(ctx, `DELETE FROM sessions WHERE id = 's'`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := bdb.NewRaw(`SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM runs)`).Scan(ctx, &left); err != nil || left != 0 {
		t.Fatalf("a deleted session left %d rows (%v)", left, err)
	}
	for {
		g, err := m.Rollback(ctx)
		if err != nil {
			t.Fatalf("roll back: %v", err)
		}
		if g.IsZero() {
			break
		}
	}
	if got := tables(); len(got) != 0 {
		t.Fatalf("tables after rolling back: %v", got)
	}
}
