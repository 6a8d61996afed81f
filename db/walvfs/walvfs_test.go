package walvfs

import (
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// open opens the SQLite file at path through the shim (or SQLite's own VFS
// with shim false) in WAL mode, as the daemon does, with params added.
func open(t *testing.T, path string, shim bool, params ...string) *sql.DB {
	t.Helper()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	q := []string{"_journal_mode=WAL", "_busy_timeout=10000"}
	if !slices.ContainsFunc(params, func(p string) bool { return strings.HasPrefix(p, "_synchronous=") }) {
		q = append(q, "_synchronous=NORMAL")
	}
	if shim {
		q = append(q, "vfs="+Name)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?"+strings.Join(append(q, params...), "&"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	exec(t, db, "PRAGMA wal_autocheckpoint = 0")
	return db
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// intact fails t, saying when, unless db's file passes integrity_check.
func intact(t *testing.T, db *sql.DB, when string) {
	t.Helper()
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("%s: integrity: %q %v", when, ok, err)
	}
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// insertRows inserts n rows of size bytes into t, in the caller's
// transaction or one of their own.
const insertRows = `WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM n WHERE v < ?)
	INSERT INTO t(b) SELECT randomblob(?) FROM n`

// A commit whose frames fit the buffer is one write, where SQLite's own
// VFS makes two a frame; a larger one is a write per buffer.
func TestACommitIsOneWrite(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "a.db"), true)
	exec(t, db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	for _, pages := range []int{1, 10, 25} {
		f0, w0 := Stats()
		// Rows of 3 000 bytes take a page each (4 KiB pages).
		exec(t, db, insertRows, pages, 3000)
		f1, w1 := Stats()
		if f1-f0 < uint64(pages) || w1-w0 != 1 {
			t.Errorf("%d rows: %d frames in %d writes, want ≥ %d in 1", pages, f1-f0, w1-w0, pages)
		}
	}
	f0, w0 := Stats()
	exec(t, db, insertRows, 200, 3000)
	f1, w1 := Stats()
	if frames, writes := f1-f0, w1-w0; frames < 200 || writes > frames/20 {
		t.Errorf("200 rows: %d frames in %d writes, want ≥ 200 in at most a twentieth", frames, writes)
	}
}

// Every commit is on the file when it returns: another connection reads
// it, and a copy of the files taken then (what a kill -9 leaves) recovers
// it, checksums and all. Transactions of every size, some spilled to the
// WAL before their commit (a cache of ten pages), some rolled back after a
// spill, and pages written again in place, are all covered.
func TestEveryCommitIsOnTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db := open(t, path, true, "_cache_size=10")
	other := open(t, path, true)
	exec(t, db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	exec(t, db, "CREATE INDEX t_b ON t(b)")
	rng := rand.New(rand.NewPCG(1, 2))
	frames0, _ := Stats()
	want := 0
	for i := range 90 {
		// A small transaction, whose frames the shim holds until its
		// commit; a large one that spills and writes pages again in place;
		// or a large one rolled back.
		kind := rng.IntN(3)
		n, size := 1+rng.IntN(20), 10+rng.IntN(500)
		if kind > 0 {
			n, size = 50+rng.IntN(300), 500+rng.IntN(1500)
		}
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(insertRows, n, size); err != nil {
			t.Fatal(err)
		}
		if kind > 0 {
			if _, err := tx.Exec("UPDATE t SET b = randomblob(length(b)) WHERE a % 7 = ?", i%7); err != nil {
				t.Fatal(err)
			}
		}
		if kind == 2 {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			want += n
		}
		if got := count(t, other, "SELECT count(*) FROM t"); got != want {
			t.Fatalf("transaction %d: another connection counts %d rows, want %d", i, got, want)
		}
		if i%5 == 4 {
			if got := recovered(t, dir, i); got != want {
				t.Fatalf("transaction %d: a copy of the files recovers %d rows, want %d", i, got, want)
			}
		}
	}
	if f, _ := Stats(); f == frames0 {
		t.Fatal("the shim held no frame")
	}
}

// recovered copies a.db and its WAL, as they are on the file, into a
// directory of their own, opens the copy with SQLite's own VFS (which
// recovers the WAL, checking every frame's checksum), checks it and
// counts its rows.
func recovered(t *testing.T, dir string, i int) int {
	t.Helper()
	to := filepath.Join(dir, fmt.Sprint("copy", i))
	if err := os.Mkdir(to, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.db", "a.db-wal"} {
		copyFile(t, filepath.Join(dir, name), filepath.Join(to, name))
	}
	db := open(t, filepath.Join(to, "a.db"), false)
	intact(t, db, "the copy")
	n := count(t, db, "SELECT count(*) FROM t")
	db.Close()
	return n
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}

// The WAL a checkpoint truncates starts again at its header, and the
// shim follows it there.
func TestAfterACheckpointTruncates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	db := open(t, path, true)
	ckpt := open(t, path, true)
	exec(t, db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	want := 0
	for i := range 20 {
		exec(t, db, insertRows, 20, 500)
		want += 20
		if i%3 == 0 {
			exec(t, ckpt, "PRAGMA wal_checkpoint(TRUNCATE)")
		}
		f0, w0 := Stats()
		exec(t, db, insertRows, 5, 3000)
		want += 5
		if f1, w1 := Stats(); f1-f0 < 5 || w1-w0 > 2 {
			t.Fatalf("round %d: 5 rows took %d frames in %d writes", i, f1-f0, w1-w0)
		}
	}
	if got := recovered(t, dir, 0); got != want {
		t.Fatalf("a copy of the files recovers %d rows, want %d", got, want)
	}
}

// Frames a transaction spilled and then rolled back are never written:
// another connection commits its own frames where they would have gone,
// and the first connection's next read must not put them back over them.
func TestARolledBackSpillIsNotWrittenOverAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	a := open(t, path, true, "_cache_size=10")
	b := open(t, path, true)
	c := open(t, path, false)
	exec(t, a, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	want := 0
	for i, rows := range []int{14, 17, 20, 23, 26} {
		// An empty WAL: the rollback reads nothing back from it, and the
		// frames it spilled (fewer than the buffer holds) stay held.
		exec(t, c, "PRAGMA wal_checkpoint(TRUNCATE)")
		tx, err := a.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(insertRows, rows, 3000); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		exec(t, b, insertRows, 5+i, 3000)
		want += 5 + i
		if got := count(t, a, "SELECT count(*) FROM t"); got != want {
			t.Fatalf("round %d: the connection that rolled back counts %d rows, want %d", i, got, want)
		}
		intact(t, c, fmt.Sprint("round ", i))
		if got := count(t, c, "SELECT count(*) FROM t WHERE length(b) = 3000"); got != want {
			t.Fatalf("round %d: a third connection counts %d rows, want %d", i, got, want)
		}
	}
	if got := recovered(t, dir, 0); got != want {
		t.Fatalf("a copy of the files recovers %d rows, want %d", got, want)
	}
}

// With synchronous=FULL and no powersafe overwrite, SQLite pads a commit
// to the sector and splits the page of its last frame at the sync point;
// a piece of a page is not a page, and no piece stays held past the
// commit. Pages of 1 and 2 KiB, each commit read by another connection.
func TestAPageSplitAtASyncPointIsWritten(t *testing.T) {
	for _, size := range []int{1024, 2048} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.db")
			setup, err := sql.Open("sqlite3", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", size), "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)", "PRAGMA journal_mode = WAL"} {
				exec(t, setup, q)
			}
			setup.Close()
			db := open(t, path, true, "psow=0", "_synchronous=FULL")
			other := open(t, path, true)
			want := 0
			for i := range 400 {
				exec(t, db, insertRows, 1+i%3, 100+i%400)
				want += 1 + i%3
				if got := count(t, other, "SELECT count(*) FROM t WHERE length(b) BETWEEN 100 AND 499"); got != want {
					t.Fatalf("commit %d: another connection counts %d rows, want %d", i, got, want)
				}
			}
			intact(t, other, "after the commits")
		})
	}
}

// A write of held frames that fails fails its transaction, whether the
// frames were its commit's or pages it spilled before committing: nothing
// of it is seen, the file stays whole, the connection commits again once
// the disk does, and a copy of the files recovers what committed. Not
// parallel: the failures are the process's (failFlushes).
//
// (After a statement's I/O error SQLite rolls its transaction back, and
// a statement run after it on the connection runs, and commits, on its
// own: db's writer ends a transaction at its first error.)
func TestAFailedWriteFailsItsTransaction(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	a := open(t, path, true, "_cache_size=10")
	c := open(t, path, false)
	defer failFlushes(0)
	exec(t, a, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	exec(t, a, insertRows, 5, 3000)
	want := 5
	whole := func(what string) {
		t.Helper()
		intact(t, c, "after "+what)
		for _, db := range []*sql.DB{a, c} {
			if got := count(t, db, "SELECT count(*) FROM t"); got != want {
				t.Fatalf("after %s: %d rows, want %d", what, got, want)
			}
		}
	}

	// The commit's own frames.
	failFlushes(1)
	if _, err := a.Exec(insertRows, 3, 3000); err == nil {
		t.Fatal("a commit whose frames were not written succeeded")
	}
	whole("a failed commit")

	// Pages spilled by a transaction too large for the cache and the
	// buffer: the statement fails, and SQLite rolls the transaction back.
	failFlushes(1)
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(insertRows, 60, 3000); err == nil {
		t.Fatal("a statement whose spilled frames were not written succeeded")
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("a transaction whose spilled frames were not written committed")
	}
	whole("a failed spill")

	failFlushes(0)
	exec(t, a, insertRows, 7, 3000)
	want += 7
	whole("a commit after the failures")
	if got := recovered(t, dir, 0); got != want {
		t.Fatalf("a copy of the files recovers %d rows, want %d", got, want)
	}
}
