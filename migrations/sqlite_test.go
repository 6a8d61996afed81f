package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"
)

// upTo returns SQLite's migrations up to and including the one whose name
// starts with last.
func upTo(t *testing.T, last string) *migrate.Migrations {
	t.Helper()
	all, err := New()
	if err != nil {
		t.Fatal(err)
	}
	some := migrate.NewMigrations()
	for _, m := range all.Sorted() {
		some.Add(m)
		if strings.HasPrefix(m.Name, last) {
			return some
		}
	}
	t.Fatalf("no migration %s", last)
	return nil
}

// openSQLite opens a new SQLite file for t on one connection, foreign keys
// on as the daemon has them.
func openSQLite(t *testing.T) *bun.DB {
	t.Helper()
	sqldb, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	sqldb.SetMaxOpenConns(1)
	bdb := bun.NewDB(sqldb, sqlitedialect.New())
	t.Cleanup(func() { bdb.Close() })
	return bdb
}

// execer returns a function that runs a statement on bdb and fails t if
// it fails.
func execer(t *testing.T, bdb *bun.DB) func(q string) {
	return func(q string) {
		t.Helper()
		if _, err := bdb.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// migrateWith applies ms to bdb and returns the migrator, to roll back.
func migrateWith(t *testing.T, bdb *bun.DB, ms *migrate.Migrations) *migrate.Migrator {
	t.Helper()
	ctx := context.Background()
	m := migrate.NewMigrator(bdb, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// input_ids gives the message of every send stored before it the send's
// input_id and order, so the index refuses a post reusing the id; a send
// whose id a post already took keeps NULL (the two stay as accepted), and
// rolling back leaves the posts' ids alone.
func TestInputIDsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	migrateWith(t, bdb, upTo(t, "20261130000006"))
	for _, q := range []string{
		`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`,
		`INSERT INTO inputs (session, input_id, ord, text_hash, state, delivery, turn_id, msg_offset, created_at, updated_at)
			VALUES ('s', 'a', 1, 'h', 'accepted', 'done', 't1', 1, 't', 't'), ('s', 'b', 2, 'h', 'accepted', 'done', 't2', 2, 't', 't')`,
		`INSERT INTO events (session, "offset", type, payload, at) VALUES ('s', 1, 'message', '{}', 't'), ('s', 2, 'message', '{}', 't')`,
		// A post that reused send b's id, as the daemon accepted before.
		`INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES ('s', 3, 'message', '{}', 't', 'b', 3)`,
	} {
		if _, err := bdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ids := func() string {
		var got []string
		rows, err := bdb.QueryContext(ctx, `SELECT coalesce(input_id, '-') || ':' || coalesce(ord, '-') FROM events ORDER BY "offset"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		return strings.Join(got, " ")
	}
	m := migrateWith(t, bdb, upTo(t, "20261130000007"))
	if got, want := ids(), "a:1 -:- b:3"; got != want {
		t.Fatalf("after input_ids: %s, want %s", got, want)
	}
	if _, err := bdb.ExecContext(ctx, `INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES ('s', 4, 'message', '{}', 't', 'a', 4)`); err == nil {
		t.Fatal("a post reusing a send's id was stored")
	}
	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(), "-:- -:- b:3"; got != want {
		t.Fatalf("after rolling input_ids back: %s, want %s", got, want)
	}
}

// events_log gives every input id its row in input_ids and drops the index
// on events that held them; rolling it back moves the log's events into
// events and brings the index back.
func TestEventsLogMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	one := func(q string) string {
		t.Helper()
		var s string
		if err := bdb.QueryRowContext(ctx, q).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return s
	}
	migrateWith(t, bdb, upTo(t, "20261201000008"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES
		('s', 1, 'message', '{}', 't', 'a', 1), ('s', 2, 'turn', '{}', 't', NULL, NULL), ('s', 3, 'message', '{}', 't', 'b', 2)`)

	m := migrateWith(t, bdb, upTo(t, "20261202000009"))
	if got := one(`SELECT group_concat(input_id || ':' || "offset", ' ') FROM (SELECT * FROM input_ids ORDER BY "offset")`); got != "a:1 b:3" {
		t.Fatalf("input_ids: %s", got)
	}
	if got := one(`SELECT count(*) FROM sqlite_master WHERE name = 'events_posts'`); got != "0" {
		t.Fatal("events_posts is still there")
	}
	exec(`INSERT INTO events_log (session, "offset", type, payload, at) VALUES ('s', 4, 'message', '{}', 't')`)
	if _, err := bdb.ExecContext(ctx, `INSERT INTO input_ids (input_id, session, "offset") VALUES ('a', 's', 4)`); err == nil {
		t.Fatal("an input id was taken twice in a session")
	}

	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := one(`SELECT group_concat("offset", ' ') FROM (SELECT "offset" FROM events ORDER BY "offset")`); got != "1 2 3 4" {
		t.Fatalf("events after rolling back: %s", got)
	}
	if got := one(`SELECT count(*) FROM sqlite_master WHERE name IN ('events_log', 'input_ids')`); got != "0" {
		t.Fatal("the log or input_ids is still there")
	}
	if _, err := bdb.ExecContext(ctx, `INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES ('s', 5, 'message', '{}', 't', 'a', 3)`); err == nil {
		t.Fatal("events_posts is not back")
	}
}

// sessions_now reads a session's counters from its row and, where newer,
// from its logged events; rolling it back writes those into the row.
func TestSessionsNowMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	read := func(table string) string {
		t.Helper()
		var out []string
		rows, err := bdb.QueryContext(ctx, `SELECT id, head, inputs, updated_at, last_turn FROM `+table+` ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, at, turn string
			var head, inputs int
			if err := rows.Scan(&id, &head, &inputs, &at, &turn); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s:%d/%d/%s/%s", id, head, inputs, at, turn))
		}
		return strings.Join(out, " ")
	}
	migrateWith(t, bdb, upTo(t, "20261202000009"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at, head, inputs, last_turn) VALUES
		('s', 'e', 't0', 't1', 1, 1, 'started'), ('quiet', 'e', 't0', 't1', 1, 1, 'failed')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES
		('s', 1, 'message', '{}', 't1', 'a', 1), ('quiet', 1, 'message', '{}', 't1', 'a', 1)`)
	exec(`INSERT INTO events_log (session, "offset", type, payload, at, input_id, ord) VALUES
		('s', 2, 'turn', '{"type":"turn","state":"completed"}', 't2', NULL, NULL),
		('s', 3, 'message', '{}', 't3', 'b', 2)`)

	m := migrateWith(t, bdb, upTo(t, "20261203000010"))
	if got, want := read("sessions_now"), "quiet:1/1/t1/failed s:3/2/t3/completed"; got != want {
		t.Fatalf("sessions_now: %s, want %s", got, want)
	}
	if got, want := read("sessions"), "quiet:1/1/t1/failed s:1/1/t1/started"; got != want {
		t.Fatalf("sessions: %s, want %s", got, want)
	}
	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := read("sessions"), "quiet:1/1/t1/failed s:3/2/t3/completed"; got != want {
		t.Fatalf("sessions after rolling back: %s, want %s", got, want)
	}
	var views int
	if err := bdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'sessions_now'`).Scan(&views); err != nil || views != 0 {
		t.Fatalf("sessions_now is still there (%d, %v)", views, err)
	}
}

// search indexes the messages stored before it, in the tree and in the
// log, in the order they were committed, and only messages with text;
// rolling it back drops the index.
func TestSearchMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	migrateWith(t, bdb, upTo(t, "20261204000011"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at) VALUES
		('s', 1, 'message', '{"text":"the old kettle"}', '2026-01-01T00:00:01Z'),
		('s', 2, 'turn', '{"state":"started"}', '2026-01-01T00:00:02Z')`)
	exec(`INSERT INTO events_log (session, "offset", type, payload, at) VALUES
		('s', 3, 'message', '{"text":"a newer kettle"}', '2026-01-01T00:00:03Z'),
		('s', 4, 'message', '{"text":""}', '2026-01-01T00:00:04Z')`)
	m := migrateWith(t, bdb, upTo(t, "20261205000012"))
	got := strs(t, bdb, `SELECT d."offset" || ':' || search_fts.text FROM search_fts CROSS JOIN search_docs d ON d.docid = search_fts.docid
		WHERE search_fts MATCH 'kettle' ORDER BY search_fts.docid`)
	if strings.Join(got, " | ") != "1:the old kettle | 3:a newer kettle" {
		t.Fatalf("indexed: %q", got)
	}
	var docs int
	if err := bdb.QueryRowContext(ctx, `SELECT count(*) FROM search_docs`).Scan(&docs); err != nil || docs != 2 {
		t.Fatalf("%d documents, %v", docs, err)
	}
	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bdb.QueryRowContext(ctx, `SELECT count(*) FROM search_docs`).Scan(&docs); err == nil {
		t.Fatal("search_docs is still there after rolling back")
	}
}

// search_file numbers the log's documents after the index's, in the
// order they were logged, and drops the text index, which moves to a
// file of the store's (db/searchindex.go); rolling it back indexes the
// folded documents' text again.
func TestSearchFileMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	migrateWith(t, bdb, upTo(t, "20261221000026"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at) VALUES ('s', 1, 'message', '{"text":"the old kettle"}', 't')`)
	exec(`INSERT INTO search_docs (docid, session, "offset") VALUES (7, 's', 1)`)
	exec(`INSERT INTO events_log (session, "offset", type, payload, at) VALUES
		('s', 2, 'message', '{"text":"a newer kettle"}', 't'),
		('s', 3, 'turn', '{"state":"started"}', 't'),
		('s', 4, 'tool_result', '{"text":"kettle output"}', 't')`)
	m := migrateWith(t, bdb, upTo(t, "20261222000027"))
	got := strs(t, bdb, `SELECT "offset" || ':' || coalesce(docid, '-') FROM events_log ORDER BY "offset"`)
	if strings.Join(got, " ") != "2:8 3:- 4:9" {
		t.Fatalf("the log's docids: %q", got)
	}
	var n int
	if err := bdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN ('search_fts', 'search_gone')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d of search_fts and search_gone (%v), want search_gone alone", n, err)
	}
	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bdb.QueryRowContext(ctx, `SELECT docid FROM search_fts WHERE search_fts MATCH 'kettle'`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("indexed again: docid %d, %v", n, err)
	}
	if _, err := bdb.ExecContext(ctx, `SELECT docid FROM events_log`); err == nil {
		t.Fatal("the log's docid is still there after rolling back")
	}
}

// strs is the one text column of query's rows.
func strs(t *testing.T, bdb *bun.DB, query string) []string {
	t.Helper()
	rows, err := bdb.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// events_layout makes events a rowid table whose documents carry their
// docids, indexed with the log's, in place of search_docs; rolling back
// restores search_docs (the log's documents waiting for the fold, as
// before) and the WITHOUT ROWID table.
func TestEventsLayoutMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	migrateWith(t, bdb, upTo(t, "20261222000027"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at, input_id, ord) VALUES
		('s', 1, 'message', '{"text":"the old kettle"}', 't', 'i1', 1),
		('s', 2, 'turn', '{"state":"started"}', 't', NULL, NULL)`)
	exec(`INSERT INTO search_docs (docid, session, "offset") VALUES (7, 's', 1)`)
	exec(`INSERT INTO events_log (session, "offset", type, payload, at, docid) VALUES
		('s', 3, 'message', '{"text":"a newer kettle"}', 't', 8)`)
	m := migrateWith(t, bdb, upTo(t, "20261223000028"))
	got := strs(t, bdb, `SELECT "offset" || ':' || coalesce(docid, '-') || ':' || coalesce(input_id, '-') FROM events ORDER BY "offset"`)
	if strings.Join(got, " ") != "1:7:i1 2:-:-" {
		t.Fatalf("events after the migration: %q", got)
	}
	schema := strings.Join(strs(t, bdb, `SELECT coalesce(sql, name) FROM sqlite_master WHERE tbl_name IN ('events', 'events_log', 'search_docs')`), "\n")
	if strings.Contains(schema, "WITHOUT ROWID") || strings.Contains(schema, "search_docs") ||
		!strings.Contains(schema, "events_docs") || !strings.Contains(schema, "events_log_docs") {
		t.Fatalf("schema after the migration:\n%s", schema)
	}
	// The session's foreign key still cascades.
	exec(`DELETE FROM sessions WHERE id = 's'`)
	if got := strs(t, bdb, `SELECT "offset" FROM events`); len(got) != 0 {
		t.Fatalf("events of a deleted session: %q", got)
	}
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at, docid) VALUES ('s', 1, 'message', '{"text":"x"}', 't', 7)`)
	if _, err := m.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	schema = strings.Join(strs(t, bdb, `SELECT coalesce(sql, name) FROM sqlite_master WHERE tbl_name IN ('events', 'events_log', 'search_docs')`), "\n")
	if !strings.Contains(schema, "WITHOUT ROWID") || !strings.Contains(schema, "search_docs_session") || strings.Contains(schema, "events_log_docs") {
		t.Fatalf("schema after rolling back:\n%s", schema)
	}
	if got := strs(t, bdb, `SELECT docid || ':' || "offset" FROM search_docs ORDER BY docid`); strings.Join(got, " ") != "7:1" {
		t.Fatalf("search_docs after rolling back: %q (the log's documents wait for the fold)", got)
	}
}

// events_layout mends what older stores hold: an event two search_docs
// rows named keeps the first docid, a row whose event is gone and the
// other docid go to search_gone, and in a session whose docids do not
// grow with its offsets (a logged document numbered by a later fold, or
// by search_file after the rest) the documents from the first out of
// order on take new docids, in offset order, after every docid given.
func TestEventsLayoutMigrationMendsOldDocids(t *testing.T) {
	t.Parallel()
	bdb := openSQLite(t)
	exec := execer(t, bdb)
	migrateWith(t, bdb, upTo(t, "20261222000027"))
	exec(`INSERT INTO sessions (id, epoch, created_at, updated_at) VALUES ('s', 'e', 't', 't'), ('t', 'e', 't', 't')`)
	exec(`INSERT INTO events (session, "offset", type, payload, at) VALUES
		('s', 1, 'message', '{"text":"one"}', 't'), ('s', 2, 'turn', '{}', 't'), ('s', 3, 'message', '{"text":"three"}', 't'),
		('t', 1, 'message', '{"text":"twice"}', 't')`)
	exec(`INSERT INTO search_docs (docid, session, "offset") VALUES (9, 's', 1), (8, 's', 3), (1, 't', 1), (2, 't', 1), (6, 'gone', 1)`)
	exec(`INSERT INTO events_log (session, "offset", type, payload, at, docid) VALUES ('s', 5, 'message', '{"text":"five"}', 't', 10)`)
	migrateWith(t, bdb, upTo(t, "20261223000028"))
	got := strs(t, bdb, `SELECT session || "offset" || ':' || coalesce(docid, '-') FROM (
		SELECT session, "offset", docid FROM events UNION ALL SELECT session, "offset", docid FROM events_log) ORDER BY session, "offset"`)
	if strings.Join(got, " ") != "s1:11 s2:- s3:12 s5:13 t1:1" {
		t.Fatalf("docids after the migration: %q", got)
	}
	if got := strs(t, bdb, `SELECT docid FROM search_gone ORDER BY n`); strings.Join(got, " ") != "2 6 8 9 10" {
		t.Fatalf("search_gone: %q", got)
	}
}
