package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/migrate"

	"albedo/migrations"
	"albedo/wire"
)

// search runs q and returns its hits as "session/offset snippet".
func search(t *testing.T, d *DB, q, session string, before int64, limit int) ([]string, []SearchHit) {
	t.Helper()
	pq, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := d.Search(context.Background(), pq, session, before, limit)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s/%d %s", h.Session, h.Offset, h.Snippet))
	}
	return out, hits
}

// A message is found as soon as its batch commits, in the log or the
// tree (SQLite), newest first, with the match marked; by phrase, prefix,
// alternative and exclusion; in one session; a page at a time below a
// cursor. A deleted session's messages are found no more; the rest stay.
func TestSearchFindsCommittedMessages(t *testing.T) {
	t.Parallel()
	for _, logged := range []bool{false, true} {
		t.Run(map[bool]string{false: "straight", true: "logged"}[logged], func(t *testing.T) {
			t.Parallel()
			testSearch(t, Options{FoldRows: 3, AlwaysLog: logged})
		})
	}
}

// testSearch is TestSearchFindsCommittedMessages on each backend with
// opts: on SQLite, logged, some messages are folded and indexed by then,
// the rest found in the log.
func testSearch(t *testing.T, opts Options) {
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, opts)
		createSession(t, d, "a")
		createSession(t, d, "b")
		texts := []struct{ session, text string }{
			{"a", "the blue deploy went fine"},
			{"b", "Deploying green today"},
			{"a", "nothing to see here"},
			{"b", "blue green deploy, at last"},
			{"a", "Grüße aus 東京"},
		}
		for i, m := range texts {
			if _, _, err := postText(t, d, m.session, fmt.Sprint("p", i), m.text); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := search(t, d, "deploy", "", 0, 10)
		if len(got) != 2 || !strings.HasPrefix(got[0], "b/2 ") || !strings.HasPrefix(got[1], "a/1 ") {
			t.Fatalf("deploy: %q", got)
		}
		if !strings.Contains(got[0], MatchStart+"deploy"+MatchEnd) {
			t.Fatalf("the match is not marked: %q", got[0])
		}
		for _, c := range []struct {
			q, session string
			want       int
		}{
			{"deploy*", "", 3}, {`"blue green"`, "", 1}, {"blue OR today", "", 3}, {"deploy -green", "", 1},
			{"deploy*", "b", 2}, {"grüße", "", 1}, {"東京", "", 1}, {"absent", "", 0},
		} {
			if got, _ := search(t, d, c.q, c.session, 0, 10); len(got) != c.want {
				t.Errorf("%q in %q: %q, want %d hits", c.q, c.session, got, c.want)
			}
		}
		// Pages: the cursor is the last hit's docid.
		first, page := search(t, d, "deploy*", "", 0, 2)
		rest, _ := search(t, d, "deploy*", "", page[1].DocID, 2)
		if len(first) != 2 || len(rest) != 1 || !strings.HasPrefix(rest[0], "a/1 ") {
			t.Fatalf("pages %q then %q", first, rest)
		}
		if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
			_, _, err := tx.DeleteSession(context.Background(), "b")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got, _ := search(t, d, "deploy*", "", 0, 10); len(got) != 1 || !strings.HasPrefix(got[0], "a/1 ") {
			t.Fatalf("after b's delete: %q", got)
		}
	})
}

// The log's matcher finds what FTS4 finds, for the same texts and
// queries: a message answers the same before and after its fold.
func TestLogMatchingAgreesWithTheIndex(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	ctx := context.Background()
	texts := []string{"the blue deploy went fine", "Deploying green today", "foo-bar baz", "Grüße aus 東京, grüße!",
		"it's a deploy's day", "x1 y2 z3", "ÉCOLE école", "tabs\tand\nnew lines", "deploy deploy deploy", ""}
	for i, text := range texts {
		if _, err := d.index.db.ExecContext(ctx, `INSERT INTO search_fts (docid, text) VALUES (?, ?)`, i+1, text); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range []string{"deploy", "deploy*", `"blue deploy"`, "foo-bar", "bar", "grüße", "東京", "école", "ecole", "deploy -blue",
		"green OR fine", "s", "it", "x1", "y2 z3", `"new lines"`, "tabs and", "deploy's", "d*"} {
		q, err := ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		rows, err := d.ro.DB.QueryContext(ctx, `SELECT docid FROM search.search_fts WHERE search_fts MATCH ? ORDER BY docid`, q.MatchFTS())
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		for rows.Next() {
			var id int
			rows.Scan(&id)
			want = append(want, id)
		}
		rows.Close()
		var got []int
		for i, text := range texts {
			if q.Matches(text) {
				got = append(got, i+1)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: the log matches %v, the index %v", raw, got, want)
		}
	}
}

// A search in one session reads its newest documents itself, up to its
// bound and past all the index lacks, and says where it stopped, for the
// index to go on from there; its documents straight in events, or some
// folded and the rest in the log, paged through both.
func TestSearchSessionReadsItsNewestDocuments(t *testing.T) {
	t.Parallel()
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprint("logged=", logged), func(t *testing.T) {
			t.Parallel()
			testSearchSessionNewest(t, Options{FoldRows: 4, AlwaysLog: logged})
		})
	}
}

func testSearchSessionNewest(t *testing.T, opts Options) {
	d := openTest(t, opts)
	createSession(t, d, "s")
	createSession(t, d, "other")
	if _, _, err := postText(t, d, "other", "o", "kettle1 elsewhere"); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, _, err := postText(t, d, "s", fmt.Sprint("p", i), fmt.Sprintf("note %d kettle%d", i, i%2)); err != nil {
			t.Fatal(err)
		}
	}
	q, _ := ParseQuery("kettle1")
	run := func(before int64, limit, scan int, indexed int64) ([]int64, int64) {
		t.Helper()
		tx, err := d.ro.DB.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		hits, stop, err := searchSession(context.Background(), tx, q, "s", before, limit, scan, indexed)
		if err != nil {
			t.Fatal(err)
		}
		var offs []int64
		for _, h := range hits {
			offs = append(offs, h.Offset)
			if !strings.Contains(h.Snippet, MatchStart+"kettle1"+MatchEnd) {
				t.Fatalf("snippet %q", h.Snippet)
			}
		}
		return offs, stop
	}
	// The other session's document is docid 1; s's are 2 to 8.
	if offs, stop := run(1<<62, 10, 100, 8); fmt.Sprint(offs) != "[6 4 2]" || stop != 1 {
		t.Fatalf("all: %v, stopped below %d", offs, stop)
	}
	if offs, stop := run(1<<62, 10, 3, 8); fmt.Sprint(offs) != "[6]" || stop != 6 {
		t.Fatalf("three documents read: %v, stopped below %d", offs, stop)
	}
	if offs, stop := run(1<<62, 2, 100, 8); fmt.Sprint(offs) != "[6 4]" || stop != 5 {
		t.Fatalf("a page of two: %v, stopped below %d", offs, stop)
	}
	if offs, stop := run(5, 10, 100, 8); fmt.Sprint(offs) != "[2]" || stop != 1 {
		t.Fatalf("below docid 5: %v, stopped below %d", offs, stop)
	}
	// A cursor that is another session's document: s's below it, none.
	if offs, stop := run(1, 10, 100, 8); len(offs) != 0 || stop != 1 {
		t.Fatalf("below the other session's docid 1: %v, stopped below %d", offs, stop)
	}
	// Past its bound, it reads on through what the index lacks.
	if offs, stop := run(1<<62, 10, 3, 3); fmt.Sprint(offs) != "[6 4 2]" || stop != 1 {
		t.Fatalf("the index two behind: %v, stopped below %d", offs, stop)
	}
}

// A tool_call's text (what the model said before its calls) and a
// tool_result's (the tool's output) are found as messages are, logged or
// not, on each backend; the other events are not documents.
func TestSearchFindsToolCallsAndResults(t *testing.T) {
	t.Parallel()
	for _, logged := range []bool{false, true} {
		t.Run(map[bool]string{false: "straight", true: "logged"}[logged], func(t *testing.T) {
			t.Parallel()
			eachBackend(t, func(t *testing.T, tgt string) {
				d := openOn(t, tgt, Options{FoldRows: 3, AlwaysLog: logged})
				createSession(t, d, "a")
				if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
					_, err := tx.Append(context.Background(), "a",
						wire.Event{Type: wire.EventToolCall, CallID: "c1", Tool: "bot:w/forecast", Text: "checking the weather"},
						wire.Event{Type: wire.EventApproval, CallID: "c1", Decision: "allow", Reason: "weather is fine"},
						wire.Event{Type: wire.EventToolResult, CallID: "c1", State: wire.ToolCompleted, Text: "snow and weather warnings"})
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if got, _ := search(t, d, "weather", "", 0, 10); len(got) != 2 || !strings.HasPrefix(got[0], "a/3 ") || !strings.HasPrefix(got[1], "a/1 ") {
					t.Fatalf("weather: %q", got)
				}
			})
		})
	}
}

// A deleted parent's documents that its heir now holds are found in the
// heir, and the rest of them nowhere, whether they were folded or still
// in the log, on each backend.
func TestSearchFollowsRowsHandedOn(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, target string) {
		d := openOn(t, target, Options{FoldRows: 4, AlwaysLog: true})
		ctx := context.Background()
		createSession(t, d, "p")
		for i := 1; i <= 6; i++ {
			if _, _, err := postText(t, d, "p", fmt.Sprint("p", i), fmt.Sprint("kettle ", i)); err != nil {
				t.Fatal(err)
			}
		}
		forkAt(t, d, "p", 3, "f", false)
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error { _, _, err := tx.DeleteSession(ctx, "p"); return err }); err != nil {
			t.Fatal(err)
		}
		q, _ := ParseQuery("kettle")
		for _, in := range []string{"f", ""} {
			hits, err := d.Search(ctx, q, in, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, fmt.Sprint(h.Session, h.Offset))
			}
			if fmt.Sprint(got) != "[f3 f2 f1]" {
				t.Fatalf("search in %q: %v", in, got)
			}
		}
	})
}

// A search finds documents by their docid, through events_docs and
// events_log_docs: the newest of them merged from both in docid order,
// the index's hits looked up one by one, never a scan or a sort.
func TestSearchReadsDocumentsByDocid(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	q, _ := ParseQuery("kettle")
	plans := map[string]string{"newest": queryPlan(t, d, newestDocsSQL, 10, 5)}
	for _, in := range []string{"", "s"} {
		query, args := d.searchSQL(q, in, 10, 5)
		plans["index in "+in] = queryPlan(t, d, query, args...)
	}
	for name, got := range plans {
		if strings.Contains(got, "SCAN events") || strings.Contains(got, "SCAN l") || strings.Contains(got, "TEMP B-TREE") ||
			!strings.Contains(got, "USING INDEX events_docs") || !strings.Contains(got, "USING INDEX events_log_docs") {
			t.Errorf("%s: plan %s", name, got)
		}
	}
	if !strings.Contains(plans["newest"], "MERGE (UNION ALL)") {
		t.Errorf("newest: not merged: %s", plans["newest"])
	}
}

// A store from before docids were given at commit (a logged message got
// its docid at the fold, after its session's later messages written
// straight) is searched within one session as any other: migration
// events_layout gives such sessions docids that grow with their offsets.
func TestSearchInASessionOfAnOlderStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "albedo.db")
	sqldb, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	old := bun.NewDB(sqldb, sqlitedialect.New())
	all, err := migrations.New()
	if err != nil {
		t.Fatal(err)
	}
	some := migrate.NewMigrations()
	for _, m := range all.Sorted() {
		if strings.HasPrefix(m.Name, "20261222000027") {
			break
		}
		some.Add(m)
	}
	m := migrate.NewMigrator(old, some, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, epoch, head, created_at, updated_at) VALUES ('a', 'e', 2, 't', 't'), ('b', 'e', 4, 't', 't')`,
		`INSERT INTO events (session, "offset", type, payload, at) VALUES ('a', 2, 'message', '{"text":"kettle two"}', 't'),
			('b', 2, 'message', '{"text":"filler"}', 't'), ('b', 3, 'message', '{"text":"filler"}', 't'), ('b', 4, 'message', '{"text":"filler"}', 't')`,
		`INSERT INTO search_docs (docid, session, "offset") VALUES (1, 'a', 2), (2, 'b', 2), (3, 'b', 3), (4, 'b', 4)`,
		`INSERT INTO events_log (session, "offset", type, payload, at) VALUES ('a', 1, 'message', '{"text":"kettle one"}', 't'),
			('b', 1, 'message', '{"text":"kettle in b"}', 't')`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()
	d := openOn(t, path, Options{})
	q, _ := ParseQuery("kettle")
	find := func(in string, before int64, limit int) (got []string, last int64) {
		t.Helper()
		hits, err := d.Search(ctx, q, in, before, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			got, last = append(got, fmt.Sprint(h.Session, h.Offset)), h.DocID
		}
		return got, last
	}
	if got, _ := find("b", 0, 10); fmt.Sprint(got) != "[b1]" {
		t.Fatalf("in b: %v", got)
	}
	first, last := find("a", 0, 1)
	second, _ := find("a", last, 1)
	if fmt.Sprint(first, second) != "[a2] [a1]" {
		t.Fatalf("in a, a page of one at a time: %v then %v", first, second)
	}
	if got, _ := find("", 0, 10); len(got) != 3 {
		t.Fatalf("everywhere: %v", got)
	}
}
