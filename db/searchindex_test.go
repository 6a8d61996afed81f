package db

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"albedo/wire"
)

// appendEach appends a message, text and its session's id, to each of
// sessions in one request.
func appendEach(t *testing.T, d *DB, sessions []string, text string) {
	t.Helper()
	if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
		for _, s := range sessions {
			if _, err := tx.Append(context.Background(), s, wire.Event{Type: wire.EventMessage, Role: wire.RoleBot, Text: text + " " + s}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// waitIndexed waits until the index holds every document the store has
// (on PostgreSQL it always does).
func waitIndexed(t testing.TB, d *DB) {
	t.Helper()
	if d.index == nil {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		last, err := lastDocID(context.Background(), d.ro)
		if err != nil {
			t.Fatal(err)
		}
		if d.index.upto.Load() >= last {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index got to %d of %d", d.index.upto.Load(), last)
		}
		time.Sleep(5 * time.Millisecond) // polls the indexer's mark: it has no event to wait on
	}
}

// hitTexts is what a search for q in every session finds, newest first:
// "session:offset" each.
func hitTexts(t *testing.T, d *DB, q string) []string {
	t.Helper()
	pq, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := d.Search(context.Background(), pq, "", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d", h.Session, h.Offset))
	}
	return out
}

// A message's place in search is its commit's, whether it was logged or
// written straight into events: newest first is commit order across
// sessions, before the fold, after it and once indexed.
func TestSearchOrderIsCommitOrder(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 1 << 30})
	four := []string{"a", "b", "c", "d"}
	for _, s := range append(four, "e") {
		createSession(t, d, s)
	}
	appendEach(t, d, four, "kettle one")      // logged: one event in each of four sessions
	appendEach(t, d, []string{"e"}, "kettle") // straight in: one session
	appendEach(t, d, four, "kettle two")      // logged
	want := "[d:2 c:2 b:2 a:2 e:1 d:1 c:1 b:1 a:1]"
	if got := fmt.Sprint(hitTexts(t, d, "kettle")); got != want {
		t.Fatalf("before the fold: %s, want %s", got, want)
	}
	if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := fold(context.Background(), d.rw.DB); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d)
	if got := fmt.Sprint(hitTexts(t, d, "kettle")); got != want {
		t.Fatalf("folded and indexed: %s, want %s", got, want)
	}
}

// The index's file forgets a deleted session's text, logged or folded,
// and search_gone is emptied of what it has forgotten.
func TestADeletedSessionsTextLeavesTheIndex(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{FoldRows: 1 << 30})
	four := []string{"a", "b", "c", "d"}
	for _, s := range four {
		createSession(t, d, s)
	}
	if _, _, err := postText(t, d, "a", "p1", "the secret kettle"); err != nil {
		t.Fatal(err)
	}
	appendEach(t, d, four, "secret logged") // a's second message is logged
	waitIndexed(t, d)
	indexedText := func(q string) int {
		t.Helper()
		var n int
		if err := d.index.db.QueryRow(`SELECT count(*) FROM search_fts WHERE search_fts MATCH ?`, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := indexedText("secret"); n != 5 {
		t.Fatalf("%d documents indexed, want 5", n)
	}
	del := func(id string) {
		t.Helper()
		if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
			_, _, err := tx.DeleteSession(context.Background(), id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	del("a")
	deadline := time.Now().Add(10 * time.Second)
	for indexedText("secret") != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the index still holds %d documents, want 3", indexedText("secret"))
		}
		time.Sleep(5 * time.Millisecond) // polls the index's file: its purge has no event
	}
	if got := hitTexts(t, d, "secret"); len(got) != 3 || strings.Contains(fmt.Sprint(got), "a:") {
		t.Fatalf("found %v", got)
	}
	del("b")
	var gone int
	if err := d.ro.QueryRow(`SELECT count(*) FROM search_gone`).Scan(&gone); err != nil || gone != 1 {
		t.Fatalf("search_gone holds %d rows (%v), want b's one", gone, err)
	}
}

// The index's file is derived: deleted, it is made again at open; one
// that holds more than the store (the store lost its last commits) forgets
// the rest, and the docids given again are indexed anew.
func TestTheIndexFileIsMadeAgain(t *testing.T) {
	t.Parallel()
	path, d := storeAt(t)
	for i := range 3 {
		if _, _, err := postText(t, d, "s", fmt.Sprint("p", i), fmt.Sprint("kettle ", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitIndexed(t, d)
	closeWithoutIndex(t, d, path)
	d = openOn(t, path, Options{})
	waitIndexed(t, d)
	// As if the store had lost what it gave docids 4 and 5.
	if _, err := d.index.db.Exec(`INSERT INTO search_fts (docid, text) VALUES (4, 'lost kettle'), (5, 'lost kettle')`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.index.db.Exec(`UPDATE indexed SET upto = 5`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	d = openOn(t, path, Options{})
	if d.index.upto.Load() != 3 {
		t.Fatalf("reopened up to %d, want 3", d.index.upto.Load())
	}
	if _, _, err := postText(t, d, "s", "p3", "new kettle"); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d)
	var texts []string
	rows, err := d.index.db.Query(`SELECT text FROM search_fts WHERE search_fts MATCH 'kettle' ORDER BY docid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		texts = append(texts, s)
	}
	rows.Close()
	if fmt.Sprint(texts) != "[kettle 0 kettle 1 kettle 2 new kettle]" {
		t.Fatalf("indexed %q", texts)
	}
}

// The indexer takes what the writer commits from memory; when that queue
// grows past its bound it is dropped, the indexer reads the store until it
// has caught up, and then takes the queue again: nothing is missed.
func TestTheIndexReadsTheStoreWhenItsQueueOverflows(t *testing.T) {
	t.Parallel()
	d := openTest(t, Options{})
	createSession(t, d, "s")
	d.index.mu.Lock()
	d.index.maxQueued = 40 // two messages' text
	d.index.mu.Unlock()
	for i := range 6 {
		if _, _, err := postText(t, d, "s", fmt.Sprint("p", i), fmt.Sprintf("kettle number %d of six", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitIndexed(t, d)
	d.index.mu.Lock()
	dropped := d.index.dropped
	d.index.maxQueued = maxQueuedBytes
	d.index.mu.Unlock()
	if dropped == 0 {
		t.Fatal("the queue was never dropped")
	}
	if _, _, err := postText(t, d, "s", "p6", "kettle number 6, from the queue"); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d)
	var n int
	if err := d.index.db.QueryRow(`SELECT count(*) FROM search_fts WHERE search_fts MATCH 'kettle'`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("%d indexed (%v), want 7", n, err)
	}
	d.index.mu.Lock()
	defer d.index.mu.Unlock()
	if d.index.fromStore || len(d.index.queue) != 0 || d.index.queuedBytes != 0 {
		t.Fatalf("after catching up: from the store %v, %d queued (%d bytes)", d.index.fromStore, len(d.index.queue), d.index.queuedBytes)
	}
}

// A store whose index file is gone, with more documents than the index may
// lag, has it built before Open returns, and says so in its log.
func TestALargeIndexIsBuiltBeforeOpenReturns(t *testing.T) {
	t.Parallel()
	path, d := storeAt(t)
	n := maxIndexLag + 1000
	if _, err := d.Writer().Do(context.Background(), func(tx *Tx) error {
		evs := make([]wire.Event, n)
		for i := range evs {
			evs[i] = wire.Event{Type: wire.EventMessage, Role: wire.RoleBot, Text: fmt.Sprint("kettle ", i)}
		}
		_, err := tx.Append(context.Background(), "s", evs...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	closeWithoutIndex(t, d, path)
	var said strings.Builder
	d = openOn(t, path, Options{Log: slog.New(slog.NewTextHandler(&said, nil))})
	if behind := int64(n) - d.index.upto.Load(); behind > maxIndexLag {
		t.Fatalf("open returned %d documents behind", behind)
	}
	if s := said.String(); !strings.Contains(s, fmt.Sprintf(`msg="building the search index before serving" file=%s documents=%d`, path+searchFileSuffix, n)) ||
		!strings.Contains(s, `msg="built the search index" took=`) {
		t.Fatalf("said:\n%s", s)
	}
}

// storeAt opens a store of its own, with a session "s", and says where;
// the caller closes it.
func storeAt(t *testing.T) (string, *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "albedo.db")
	d, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	createSession(t, d, "s")
	return path, d
}

// closeWithoutIndex closes the store at path and deletes its index's file.
func closeWithoutIndex(t *testing.T, d *DB, path string) {
	t.Helper()
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + searchFileSuffix + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
