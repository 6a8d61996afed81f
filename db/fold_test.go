package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"albedo/wire"
)

// count returns the single integer q selects.
func count(t *testing.T, d *DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := d.ro.DB.QueryRow(d.dialect.bind(q), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// appendTexts appends n messages to session, each in a write of its own.
func appendTexts(t *testing.T, d *DB, session string, n int) {
	t.Helper()
	for i := range n {
		if _, err := appendText(context.Background(), d, session, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// postText posts text as a bot under inputID, in a write of its own.
func postText(t *testing.T, d *DB, session, inputID, text string) (Input, bool, error) {
	t.Helper()
	var in Input
	var created bool
	_, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
		var err error
		in, created, _, err = tx.PutInput(context.Background(), session, inputID, text, wire.RoleBot, wire.Author{Name: "bot"})
		return err
	})
	return in, created, err
}

// Every read sees a session's events whole and in order while some are in
// events and the newest in the log, across every boundary between the two.
func TestReadsSpanTheLogAndEvents(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 7, AlwaysLog: true})
	ctx := context.Background()
	createSession(t, d, "a")
	createSession(t, d, "b")
	const n = 20
	for i := 1; i <= n; i++ {
		for _, s := range []string{"a", "b"} {
			if _, err := appendText(ctx, d, s, fmt.Sprintf("%s%d", s, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	folded := count(t, d, `SELECT count(*) FROM events WHERE session = 'a'`)
	logged := count(t, d, `SELECT count(*) FROM events_log WHERE session = 'a'`)
	if folded == 0 || logged == 0 || folded+logged != n {
		t.Fatalf("session a: %d events folded, %d in the log; want some of each, %d in all", folded, logged, n)
	}
	offsets := func(evs []Event) string {
		var b strings.Builder
		for _, e := range evs {
			fmt.Fprintf(&b, "%d,", e.Offset)
		}
		return b.String()
	}
	span := func(from, to int64) string { // from … to, inclusive
		var b strings.Builder
		for o := from; o <= to; o++ {
			fmt.Fprintf(&b, "%d,", o)
		}
		return b.String()
	}
	for after := int64(0); after <= n; after++ {
		for _, limit := range []int64{1, 3, 50} {
			evs, err := d.EventsAfter(ctx, "a", after, int(limit), 0)
			if want := span(after+1, min(after+limit, n)); err != nil || offsets(evs) != want {
				t.Fatalf("after %d limit %d: %s (%v), want %s", after, limit, offsets(evs), err, want)
			}
			before := after + 1
			evs, err = d.EventsBefore(ctx, "a", before, int(limit), 0)
			if want := span(max(1, before-limit), before-1); err != nil || offsets(evs) != want {
				t.Fatalf("before %d limit %d: %s (%v), want %s", before, limit, offsets(evs), err, want)
			}
		}
	}
	msgs, err := d.Transcript(ctx, Own("b"), Messages, n, 1<<20, 50)
	if err != nil || len(msgs) != n || msgs[0].Text != "b1" || msgs[n-1].Text != "b20" {
		t.Fatalf("transcript of b: %d messages (%v)", len(msgs), err)
	}
	if s := d.w.Stats(); s.Folds == 0 || s.FoldErrors != 0 {
		t.Fatalf("folds %d, errors %d", s.Folds, s.FoldErrors)
	}
}

// The log stays bounded: it never holds more than a fold's worth and a
// batch, whatever has been written.
func TestTheLogIsFolded(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 10, AlwaysLog: true})
	ctx := context.Background()
	createSession(t, d, "s")
	for i := range 95 {
		if _, err := appendText(ctx, d, "s", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		if n := count(t, d, `SELECT count(*) FROM events_log`); n >= 10 {
			t.Fatalf("after %d events the log holds %d", i+1, n)
		}
	}
	if n := count(t, d, `SELECT count(*) FROM events`); n != 90 {
		t.Fatalf("%d events folded, want 90", n)
	}
}

// A daemon that starts again counts what the log holds, so that the log
// stays bounded across restarts.
func TestOpenCountsTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/albedo.db"
	d, err := Open(ctx, path, Options{FoldRows: 5, AlwaysLog: true})
	if err != nil {
		t.Fatal(err)
	}
	createSession(t, d, "s")
	appendTexts(t, d, "s", 3)
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	d = openOn(t, path, Options{FoldRows: 5, AlwaysLog: true})
	appendTexts(t, d, "s", 2)
	if n := count(t, d, `SELECT count(*) FROM events_log`); n != 0 {
		t.Fatalf("3 + 2 events with folds at 5: the log holds %d", n)
	}
}

// A post repeated after its event was folded into events is found there:
// the same receipt, no second event, and a conflict for other text,
// whether the batch that repeats it runs optimistically or not.
func TestRepeatAfterTheFold(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 4, AlwaysLog: true})
	ctx := context.Background()
	createSession(t, d, "s")
	first, created, err := postText(t, d, "s", "p1", "hello")
	if err != nil || !created {
		t.Fatalf("post: %v %v", created, err)
	}
	for i := 2; i <= 5; i++ {
		if _, _, err := postText(t, d, "s", fmt.Sprintf("p%d", i), "more"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, d, `SELECT count(*) FROM events WHERE input_id = 'p1'`); n != 1 {
		t.Fatalf("p1 not folded (%d rows in events)", n)
	}
	if got, err := d.Input(ctx, "s", "p1"); err != nil || got.Receipt() != first.Receipt() {
		t.Fatalf("receipt read back %+v (%v), want %+v", got.Receipt(), err, first.Receipt())
	}
	// Alone, then in a batch of several (whose optimistic run fails on
	// input_ids and runs again carefully).
	again, created, err := postText(t, d, "s", "p1", "hello")
	if err != nil || created || again.Receipt() != first.Receipt() {
		t.Fatalf("lone repeat: %+v created %v (%v)", again.Receipt(), created, err)
	}
	if _, _, err := postText(t, d, "s", "p1", "other"); !errors.Is(err, ErrConflict) {
		t.Fatalf("repeat with other text: %v", err)
	}
	ins := make([]Input, 2)
	made := make([]bool, 2)
	putAt := func(i int, id, text string) func(*Tx) error {
		return func(tx *Tx) error {
			var err error
			ins[i], made[i], _, err = tx.PutInput(ctx, "s", id, text, wire.RoleBot, wire.Author{Name: "bot"})
			return err
		}
	}
	errs := oneBatch(t, d, putAt(0, "p6", "six"), putAt(1, "p1", "hello"))
	if errs[0] != nil || errs[1] != nil || !made[0] || made[1] || ins[1].Ord != first.Ord {
		t.Fatalf("batch with a repeat: %v created %v order %d", errs, made, ins[1].Ord)
	}
	if n := count(t, d, `SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM events_log)`); n != 6 {
		t.Fatalf("%d events, want 6: a repeat was stored again", n)
	}
}

// Deleting a session deletes its rows of input_ids (which have no foreign
// key), past the range one statement covers, and its events in both
// tables; another session's stay.
func TestDeleteSessionDeletesItsInputIDs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		d := openOn(t, tgt, Options{FoldRows: 1000, AlwaysLog: true})
		ctx := context.Background()
		createSession(t, d, "s")
		createSession(t, d, "t")
		const posts = deleteIDsRange + 100
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			for i := range posts {
				if _, _, _, err := tx.PutInput(ctx, "s", fmt.Sprint("p", i), "x", wire.RoleBot, wire.Author{Name: "bot"}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := postText(t, d, "t", "p0", "x"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := postText(t, d, "s", "last", "x"); err != nil { // in the log
			t.Fatal(err)
		}
		if n := count(t, d, `SELECT count(*) FROM input_ids WHERE session = 's'`); n != posts+1 {
			t.Fatalf("%d input ids of s before the delete", n)
		}
		if _, err := d.Writer().Do(ctx, func(tx *Tx) error {
			_, _, err := tx.DeleteSession(ctx, "s")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n := count(t, d, `SELECT count(*) FROM input_ids WHERE session = 's'`); n != 0 {
			t.Fatalf("%d input ids of s left", n)
		}
		if n := count(t, d, `SELECT (SELECT count(*) FROM events WHERE session = 's') + (SELECT count(*) FROM events_log WHERE session = 's')`); n != 0 {
			t.Fatalf("%d events of s left", n)
		}
		if in, err := d.Input(ctx, "t", "p0"); err != nil || in.Ord != 1 {
			t.Fatalf("t's post: %+v %v", in, err)
		}
	})
}

// Reads go through the (session, offset) index of both tables, and SQLite
// merges the two in order: no table scan, no sort.
func TestReadsMergeBothTables(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	reads := map[string]string{
		"after": eventsAfterSQL, "before": eventsBeforeSQL, "span after": bothTables(spanAfterSQL) + ascending,
		"span before": bothTables(spanBeforeSQL) + descending, "span any": bothTables(spanAnySQL) + descending,
		"post": postEventSQL, "receipt": postReceiptSQL, "delete ids": deleteInputIDsSQL,
		"a session's documents": sessionDocsSQL, "a session's newest documents": sessionDocsNewestSQL,
	}
	for n := 1; n <= maxTypes; n++ {
		reads[fmt.Sprint("transcript of ", n)] = transcriptSQL[n]
		reads[fmt.Sprint("span of ", n)] = bothTables(spanTypesSQL[n]) + descending
	}
	for name, q := range reads {
		got := queryPlan(t, d, q, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
		if strings.Contains(got, "SCAN") || strings.Contains(got, "TEMP B-TREE") ||
			!strings.Contains(got, "events_log USING INDEX events_log_key") {
			t.Errorf("%s: plan %s", name, got)
		}
		if strings.Contains(q, "ORDER BY") && !strings.Contains(got, "MERGE (UNION ALL)") {
			t.Errorf("%s: not merged: %s", name, got)
		}
	}
}

// A session is read through sessions_now with one probe of the log's
// index per column it takes from there: no scan of the log. Its state
// takes two of those columns, and probes twice.
func TestSessionReadsProbeTheLog(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	got := queryPlan(t, d, sessionSQL, "s")
	if strings.Contains(got, "SCAN") || strings.Count(got, "SEARCH l USING") != 4 {
		t.Errorf("plan %s", got)
	}
	got = queryPlan(t, d, sessionStateSQL, "s")
	if strings.Contains(got, "SCAN") || strings.Count(got, "SEARCH l USING") != 2 {
		t.Errorf("the state's plan %s", got)
	}
}

// A batch that appends to a session and then deletes it commits: the
// deleted session's events are not written (on SQLite they would be left
// in the log with no session), nor handed to the commit hook, and the
// batch's other writes stand.
func TestAppendThenDeleteInOneBatch(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, tgt string) {
		var mu sync.Mutex
		hooked := map[string]int{} // events the commit hook saw, per session
		d := openOn(t, tgt, Options{FoldRows: 2, AlwaysLog: true, OnCommit: func(cs []Committed) {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range cs {
				hooked[c.Session] += len(c.Events)
			}
		}})
		ctx := context.Background()
		createSession(t, d, "x")
		createSession(t, d, "y")
		errs := oneBatch(t, d,
			func(tx *Tx) error {
				_, _, _, err := tx.PutInput(ctx, "x", "p1", "to x", wire.RoleBot, wire.Author{Name: "bot"})
				return err
			},
			func(tx *Tx) error { _, _, err := tx.DeleteSession(ctx, "x"); return err },
			func(tx *Tx) error {
				_, _, _, err := tx.PutInput(ctx, "y", "p1", "to y", wire.RoleBot, wire.Author{Name: "bot"})
				return err
			})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if n := count(t, d, `SELECT (SELECT count(*) FROM events_log WHERE session = 'x') + (SELECT count(*) FROM events WHERE session = 'x') + (SELECT count(*) FROM input_ids WHERE session = 'x')`); n != 0 {
			t.Fatalf("%d rows of the deleted session", n)
		}
		mu.Lock()
		if hooked["x"] != 0 || hooked["y"] != 1 {
			t.Fatalf("the commit hook saw %d events of the deleted session and %d of the other, want 0 and 1", hooked["x"], hooked["y"])
		}
		mu.Unlock()
		for i := range 3 { // folds, each of which would meet the deleted session's rows
			if _, _, err := postText(t, d, "y", fmt.Sprint("q", i), "more"); err != nil {
				t.Fatal(err)
			}
		}
		if in, err := d.Input(ctx, "y", "p1"); err != nil || in.Ord != 1 {
			t.Fatalf("y's post: %+v %v", in, err)
		}
		if s := d.w.Stats(); s.FoldErrors != 0 {
			t.Fatalf("%d folds failed", s.FoldErrors)
		}
	})
}

// A fold empties the log by dropping its pages (SQLite's truncate
// optimisation, OP_Clear), not row by row: which a foreign key on the log
// or a trigger would prevent.
func TestFoldClearsTheLog(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	rows, err := d.rw.DB.Query("EXPLAIN DELETE FROM events_log")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var ops []string
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, fmt.Sprint(*vals[1].(*any)))
	}
	if got := strings.Join(ops, " "); !strings.Contains(got, "Clear") || strings.Contains(got, "Delete") {
		t.Fatalf("DELETE FROM events_log: %s", got)
	}
}

// Where a batch's events go: a session's few events in a batch of several
// sessions to the log; a session's many, or a batch of one or two
// sessions, straight into events.
func TestWhereEventsGo(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	ctx := context.Background()
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		createSession(t, d, s)
	}
	appendTo := func(s string, n int) func(*Tx) error {
		return func(tx *Tx) error {
			for i := range n {
				if _, err := tx.Append(ctx, s, wire.Event{Type: wire.EventMessage, Role: wire.RoleUser, Text: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	where := func() string {
		var b strings.Builder
		for _, s := range []string{"a", "b", "c", "d", "e"} {
			fmt.Fprintf(&b, "%s:%d/%d ", s,
				count(t, d, `SELECT count(*) FROM events WHERE session = ?`, s),
				count(t, d, `SELECT count(*) FROM events_log WHERE session = ?`, s))
		}
		return b.String()
	}
	steps := []struct {
		batch []func(*Tx) error
		want  string // events/log per session, after the batch
	}{
		{[]func(*Tx) error{appendTo("a", 1)}, "a:1/0 b:0/0 c:0/0 d:0/0 e:0/0 "},
		{[]func(*Tx) error{appendTo("a", 1), appendTo("b", 1)}, "a:2/0 b:1/0 c:0/0 d:0/0 e:0/0 "},
		{[]func(*Tx) error{appendTo("a", 1), appendTo("b", 1), appendTo("c", 1), appendTo("d", 1)}, "a:2/1 b:1/1 c:0/1 d:0/1 e:0/0 "},
		{[]func(*Tx) error{appendTo("a", 2), appendTo("b", 3), appendTo("c", 4), appendTo("d", 1), appendTo("e", 1)}, "a:2/3 b:1/4 c:4/1 d:0/2 e:0/1 "},
	}
	for i, st := range steps {
		for j, err := range oneBatch(t, d, st.batch...) {
			if err != nil {
				t.Fatalf("batch %d, request %d: %v", i, j, err)
			}
		}
		if got := where(); got != st.want {
			t.Fatalf("after batch %d: %s, want %s", i, got, st.want)
		}
	}
	evs, err := d.EventsAfter(ctx, "c", 0, 10, 0)
	if err != nil || len(evs) != 5 || evs[0].Offset != 1 || evs[4].Offset != 5 {
		t.Fatalf("c's events, one logged before four straight in: %v %v", evs, err)
	}
}

// A batch that logs a session's events leaves its row as it was, and
// every read of the session sees its counters as of its newest event all
// the same: after logged batches, after one that writes the session
// straight into events (which writes the whole row as the writer knows
// it, a logged turn included), after a restart that finds the log full,
// and after the fold, which brings the row up to date (migration
// sessions_now).
func TestLoggedSessionsReadWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := t.TempDir() + "/albedo.db"
	d, err := Open(ctx, path, Options{FoldRows: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c", "d"} {
		createSession(t, d, s)
	}
	turn := func(s, state string) func(*Tx) error {
		return func(tx *Tx) error {
			_, err := tx.Append(ctx, s, wire.Event{Type: wire.EventTurn, TurnID: "t", State: state})
			return err
		}
	}
	post := func(s, id string) func(*Tx) error {
		return func(tx *Tx) error {
			_, _, _, err := tx.PutInput(ctx, s, id, "text "+id, wire.RoleBot, wire.Author{Name: "bot"})
			return err
		}
	}
	batch := func(fns ...func(*Tx) error) {
		t.Helper()
		for i, err := range oneBatch(t, d, fns...) {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
		}
	}
	// a as every read sees it, and as its row holds it.
	seen := func() string {
		t.Helper()
		s, err := d.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		all, _, err := d.SessionsPage(ctx, "", 1000, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range all {
			if o.ID == "a" && o != s {
				t.Fatalf("listed %+v, read %+v", o, s)
			}
		}
		if h, err := d.Head(ctx, "a"); err != nil || h.Head != s.Head || h.Epoch != s.Epoch {
			t.Fatalf("head %+v (%v), session says %d", h, err, s.Head)
		}
		if st, err := d.SessionState(ctx, "a"); err != nil || st != stateOf(s) {
			t.Fatalf("state %+v (%v), session says %+v", st, err, stateOf(s))
		}
		return fmt.Sprintf("head %d inputs %d turn %q", s.Head, s.Inputs, s.LastTurn)
	}
	row := func() string {
		t.Helper()
		var head, inputs int
		var turn string
		if err := d.ro.DB.QueryRow(`SELECT head, inputs, last_turn FROM sessions WHERE id = 'a'`).Scan(&head, &inputs, &turn); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("head %d inputs %d turn %q", head, inputs, turn)
	}
	updated := func() string {
		t.Helper()
		s, err := d.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		return s.UpdatedAt
	}
	check := func(step, wantSeen, wantRow string) {
		t.Helper()
		if got := seen(); got != wantSeen {
			t.Fatalf("%s: read %s, want %s", step, got, wantSeen)
		}
		if got := row(); got != wantRow {
			t.Fatalf("%s: row %s, want %s", step, got, wantRow)
		}
	}
	created := updated()

	batch(post("a", "i1"), turn("a", wire.TurnStarted), post("b", "i1"), post("c", "i1"), post("d", "i1"))
	check("logged", `head 2 inputs 1 turn "started"`, `head 0 inputs 0 turn ""`)
	if got := updated(); got <= created {
		t.Fatalf("updated_at %s, not after the creation's %s", got, created)
	}
	batch(post("a", "i2"))
	check("straight in", `head 3 inputs 2 turn "started"`, `head 3 inputs 2 turn "started"`)
	batch(turn("a", wire.TurnCompleted), post("a", "i3"), post("b", "i2"), post("c", "i2"), post("d", "i2"))
	check("logged again", `head 5 inputs 3 turn "completed"`, `head 3 inputs 2 turn "started"`)
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}

	d = openOn(t, path, Options{FoldRows: 1 << 30})
	check("after a restart", `head 5 inputs 3 turn "completed"`, `head 3 inputs 2 turn "started"`)
	batch(post("a", "i4"), post("b", "i3"), post("c", "i3"), post("d", "i3"))
	check("the writer's counters after a restart", `head 6 inputs 4 turn "completed"`, `head 3 inputs 2 turn "started"`)
	if err := fold(ctx, d.rw.DB); err != nil {
		t.Fatal(err)
	}
	check("folded", `head 6 inputs 4 turn "completed"`, `head 6 inputs 4 turn "completed"`)
}

// A fold that fails leaves the log and events as they were, and the next
// foldRows events fold it: the failure path, where SQLite has rolled the
// fold's transaction back itself (OR ROLLBACK) before fold does. A fold
// that went on after a failed statement would empty the log outside any
// transaction. The writer's connection is left with its foreign keys on.
func TestAFailedFoldLeavesTheLog(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 3, AlwaysLog: true})
	ctx := context.Background()
	createSession(t, d, "s")
	appendTexts(t, d, "s", 2)
	// A copy of a logged event in events: the fold's insert meets it.
	if _, err := d.rw.DB.Exec(`INSERT INTO events (session, "offset", type, payload, at)
		SELECT session, "offset", type, payload, at FROM events_log ORDER BY "offset" LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := appendText(ctx, d, "s", "2"); err != nil {
		t.Fatal(err)
	}
	if s := d.w.Stats(); s.FoldErrors != 1 || s.Folds != 0 {
		t.Fatalf("%d folds, %d failed; want the one to fail", s.Folds, s.FoldErrors)
	}
	if l, e := count(t, d, `SELECT count(*) FROM events_log`), count(t, d, `SELECT count(*) FROM events`); l != 3 || e != 1 {
		t.Fatalf("after the failed fold the log holds %d events and events %d, want 3 and 1", l, e)
	}
	var fk int
	if err := d.rw.DB.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign keys %d on the writer's connection (%v), want 1", fk, err)
	}
	if _, err := d.rw.DB.Exec(`DELETE FROM events`); err != nil {
		t.Fatal(err)
	}
	appendTexts(t, d, "s", 3)
	if l, e := count(t, d, `SELECT count(*) FROM events_log`), count(t, d, `SELECT count(*) FROM events`); l != 0 || e != 6 {
		t.Fatalf("after the next fold the log holds %d events and events %d, want 0 and 6", l, e)
	}
	evs, err := d.EventsAfter(ctx, "s", 0, 10, 1<<20)
	if err != nil || len(evs) != 6 || evs[5].Offset != 6 {
		t.Fatalf("read back %d events (%v)", len(evs), err)
	}
}

// The statements of a batch and of a fold never stop with ABORT, SQLite's
// default for a failed constraint, which undoes the statement alone: a
// statement that may abort while writing several rows keeps a journal of
// every page it changes, to undo itself (sqliteFlush). Theirs roll the
// transaction back instead (an OP_Halt's P2, the conflict resolution, is
// 1 for ROLLBACK and 2 for ABORT). An insert into events still has its
// foreign key's check, which counts violations (OP_FkCounter) and aborts
// at the statement's end: the straight path keeps its journal.
func TestFlushStatementsDoNotAbort(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	stmts := d.dialect.flushStmts()
	for name, q := range map[string]string{
		"log":           stmts.insertLog.get(2),
		"input ids":     stmts.insertInputIDs.get(2),
		"sessions":      stmts.updateSessions.get(2),
		"events":        stmts.insertEvents.get(2),
		"fold":          foldSQL,
		"fold sessions": foldSessionsSQL,
	} {
		args := make([]any, strings.Count(q, "?"))
		for i := range args {
			args[i] = "x"
		}
		for _, in := range explain(t, d, q, args) {
			if (in.op == "Halt" || in.op == "HaltIfNull") && in.p2 == 2 {
				t.Errorf("%s: %s at %d aborts the statement (%d)", name, in.op, in.addr, in.p1)
			}
		}
	}
}

// instruction is a line of EXPLAIN's program.
type instruction struct {
	addr, p1, p2 int
	op           string
}

// explain returns the program SQLite runs for q.
func explain(t *testing.T, d *DB, q string, args []any) []instruction {
	t.Helper()
	rows, err := d.rw.DB.Query("EXPLAIN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var out []instruction
	for rows.Next() {
		var in instruction
		var p3 int
		var p4, p5, comment any
		if err := rows.Scan(&in.addr, &in.op, &in.p1, &in.p2, &p3, &p4, &p5, &comment); err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
