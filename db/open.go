package db

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"

	"albedo/db/walvfs"
	"albedo/migrations"
)

// DB is an open albedo database. On SQLite: a one-connection pool for the
// writer, a pool of readers and a connection for checkpoints. On
// PostgreSQL: one pool for all of them (open_postgres.go). Its methods may
// be called from any goroutine.
type DB struct {
	// static after Open
	path     string
	dialect  *dialect
	rw       *bun.DB  // SQLite: exactly one connection, used only by the writer goroutine and migrations
	ro       *bun.DB  // readers (PostgreSQL: rw itself)
	ckpt     *sql.DB  // SQLite: one connection for checkpoints; nil on PostgreSQL
	index    *indexer // SQLite: the search index's writer (searchindex.go)
	walLimit int      // pages
	// asked is the WAL's length in frames when checkpoint last asked the
	// writer to rewind it, 0 if it has not since the WAL was last under
	// walLimit. ckptMu serializes checkpoint (tests call it too).
	ckptMu sync.Mutex
	asked  int

	ckptStop, ckptDone chan struct{}
	closeOnce          sync.Once

	w *Writer
	// migrated names the migrations Open applied (Migrated).
	migrated []string
}

// Options tune Open. The zero value is the daemon's default.
type Options struct {
	// OnCommit is called by the writer goroutine after each commit, in
	// commit order, before any caller is answered. See Writer.
	OnCommit func([]Committed)
	// MaxBatch caps the requests of one group commit (default 512).
	MaxBatch int
	// FoldRows is how many events SQLite's event log holds before the
	// writer moves them into events (fold.go; default foldRowsDefault).
	FoldRows int
	// AlwaysLog sends every event of SQLite through the log, not only
	// those logs picks (fold.go): for tests, whose batches are small,
	// so that their reads meet both tables.
	AlwaysLog bool
	// NoGroupCommit makes every request its own transaction; for benchmarks.
	NoGroupCommit bool
	// Synchronous overrides PRAGMA synchronous (default NORMAL: in WAL mode
	// a commit survives a crash of the process, which is the contract's
	// durability rule; FULL also survives power loss, at an fsync a commit).
	Synchronous string
	// NoMigrate refuses a database that needs migrations instead of
	// running them (`albedo migrate` runs them on purpose).
	NoMigrate bool
	// Node names the daemon (or command) in the changes it records on a
	// shared store (changes.go), so that it skips its own.
	Node string
	// Log hears of what Open takes long over: building SQLite's search
	// index anew (searchindex.go). Nil: nothing is said.
	Log *slog.Logger

	// walLimitPages is the WAL size, in pages, past which a checkpoint
	// waits for its turn to rewind the WAL (default walLimitDefault).
	walLimitPages int
	// ckptEvery is how often the checkpointer runs (default
	// checkpointEvery): tests that checkpoint by hand, and count on the
	// WAL being as they left it, set it past their end.
	ckptEvery time.Duration
}

// busyWait is how long a connection waits for a lock before SQLITE_BUSY.
const busyWait = 10 * time.Second

func dsn(path string, readOnly bool, sync string, busy time.Duration) string {
	if sync == "" {
		sync = "NORMAL"
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", sync)
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	// Statements with parameters (the hot paths use them; bun inlines its
	// arguments) are prepared once per connection and kept.
	q.Set("_stmt_cache_size", "64")
	// A transaction's WAL frames written at once rather than two writes
	// a frame, and the file held by this process alone, its wal-index
	// locked without system calls (db/walvfs); SQLite's own VFS if the
	// shim is not there. The writer opens first and closes last, and it
	// must: the process's lock is taken by the first connection to lock
	// the file that is not read-only, and a read-only one (mode=ro) that
	// locked first would put the wal-index in a -shm file, or one that
	// unlocked last would let the process's lock go.
	if walvfs.Register() == nil {
		q.Set("vfs", walvfs.Name)
	}
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Set("_txlock", "immediate")
		// The writer's page cache: 16 MiB instead of SQLite's 2. With
		// many sessions written at once, each batch touches the last
		// page of every session in the events and inputs trees and the
		// pages above them; at 2 MiB the writer spent much of its time
		// reading back pages that the cache had dropped.
		q.Set("_cache_size", "-16384")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens the database target names, migrates it to the newest schema
// and starts the writer goroutine; Close stops it. A postgres:// or
// postgresql:// URL is a PostgreSQL database shared by any number of
// daemons (open_postgres.go); anything else is the path of a SQLite file,
// created if needed, which one daemon owns.
func Open(ctx context.Context, target string, opts Options) (*DB, error) {
	if IsPostgres(target) {
		return openPostgres(ctx, target, opts)
	}
	return openSQLite(ctx, target, opts)
}

func openSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	rw, applied, err := openSQLiteWriter(ctx, path, opts.Synchronous, opts.NoMigrate)
	if err != nil {
		return nil, err
	}
	lastDoc, err := lastDocID(ctx, rw)
	if err != nil {
		rw.Close()
		return nil, err
	}
	index, err := openIndexer(ctx, path, lastDoc, opts.Log)
	if err != nil {
		rw.Close()
		return nil, err
	}
	ro, err := openSQLiteReaders(path, opts.Synchronous)
	if err != nil {
		rw.Close()
		index.db.Close()
		return nil, err
	}
	walLimit := opts.walLimitPages
	if walLimit <= 0 {
		walLimit = walLimitDefault
	}
	fail := func(err error) (*DB, error) {
		rw.Close()
		ro.Close()
		index.db.Close()
		return nil, err
	}
	if err := writerPragmas(ctx, rw, walLimit); err != nil {
		return fail(err)
	}
	// Its waits are short: a checkpoint that waits holds commits back.
	csql, err := sql.Open("sqlite3", dsn(path, false, opts.Synchronous, ckptBusyWait))
	if err != nil {
		return fail(fmt.Errorf("open %s for checkpoints: %w", path, err))
	}
	csql.SetMaxOpenConns(1)
	legacyPosts, logRows, err := writerStart(ctx, rw)
	if err != nil {
		csql.Close()
		return fail(err)
	}
	d := &DB{path: path, dialect: &dialect{}, rw: rw, ro: ro, ckpt: csql, index: index, walLimit: walLimit, ckptStop: make(chan struct{}), ckptDone: make(chan struct{}), migrated: applied}
	d.w = newWriter(rw, d.dialect, opts, legacyPosts, logRows)
	d.w.index, d.w.lastDoc, d.w.kicked = index, lastDoc, lastDoc
	go index.run()
	every := opts.ckptEvery
	if every <= 0 {
		every = checkpointEvery
	}
	go d.checkpoints(every, opts.Synchronous == "" || opts.Synchronous == "1" || strings.EqualFold(opts.Synchronous, "NORMAL"))
	return d, nil
}

// openSQLiteWriter opens the writer's connection to the database at path,
// creating the file if needed, and migrates it to the newest schema.
func openSQLiteWriter(ctx context.Context, path, sync string, noMigrate bool) (*bun.DB, []string, error) {
	// Conversations are private: create the file 0600 before SQLite does.
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		f.Close()
	}
	wsql, err := sql.Open("sqlite3", dsn(path, false, sync, busyWait))
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and a single connection
	// makes the writer goroutine the only place that can hold the lock.
	wsql.SetMaxOpenConns(1)
	wsql.SetMaxIdleConns(1)
	wsql.SetConnMaxLifetime(0)
	rw := bun.NewDB(wsql, sqlitedialect.New())
	applied, err := migrateApply(ctx, rw, migrations.New, !noMigrate)
	if err != nil {
		rw.Close()
		return nil, nil, err
	}
	return rw, applied, nil
}

// openSQLiteReaders opens the pool of read-only connections to the
// database at path, the search index's file attached to each as
// "search" (searchindex.go).
func openSQLiteReaders(path, sync string) (*bun.DB, error) {
	rsql := openAttached(dsn(path, true, sync, busyWait), "file:"+path+searchFileSuffix+"?mode=ro", "search")
	n := max(4, runtime.GOMAXPROCS(0))
	rsql.SetMaxOpenConns(n)
	rsql.SetMaxIdleConns(n)
	return bun.NewDB(rsql, sqlitedialect.New()), nil
}

// writerPragmas sets the pragmas of the writer's one connection, rw, with
// a WAL of walLimit pages.
//
// Checkpoints move the WAL into the database file and fsync it. Left to
// SQLite, they run inside whichever commit crosses 1000 pages — on the
// writer goroutine, stalling every caller of that batch. They run on a
// connection of their own instead, which WAL mode allows beside a
// writer (PASSIVE never blocks it).
func writerPragmas(ctx context.Context, rw *bun.DB, walLimit int) error {
	if _, err := rw.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		return fmt.Errorf("disable auto-checkpoint: %w", err)
	}
	// Statement journals in memory: a statement that writes many rows
	// inside a transaction (the batch's multi-row inserts and updates)
	// keeps the pages it changes, to undo itself alone if it fails. Past
	// 64 KiB SQLite spills that journal to a temporary file: a write
	// syscall for every page the batch touched, nearly as many as the
	// WAL's own. The journal is bounded by one statement (at most
	// maxStmtRows rows) and is dropped at its end. Set on the writer's one
	// connection, like the pragmas below.
	if _, err := rw.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return fmt.Errorf("keep statement journals in memory: %w", err)
	}
	// When a commit rewinds the WAL after a passive checkpoint that
	// copied it all, it also shrinks the file to this.
	if _, err := rw.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_size_limit = %d", walLimit*4096)); err != nil {
		return fmt.Errorf("limit the WAL: %w", err)
	}
	return nil
}

// writerStart reads what the writer starts from: whether bot posts are
// still stored as inputs (Writer.legacyPosts), and how many events the
// log holds (Writer.logRows).
func writerStart(ctx context.Context, rw *bun.DB) (legacyPosts bool, logRows int, _ error) {
	legacyPosts, err := hasLegacyPosts(ctx, rw)
	if err != nil {
		return false, 0, err
	}
	if err := rw.QueryRowContext(ctx, `SELECT count(*) FROM events_log`).Scan(&logRows); err != nil {
		return false, 0, fmt.Errorf("count the event log: %w", err)
	}
	return legacyPosts, logRows, nil
}

// hasLegacyPosts says whether bot posts are still stored as inputs (see
// Writer.legacyPosts).
func hasLegacyPosts(ctx context.Context, db *bun.DB) (bool, error) {
	var legacy bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inputs WHERE turn_id = '')`).Scan(&legacy); err != nil {
		return false, fmt.Errorf("look for posts stored as inputs: %w", err)
	}
	return legacy, nil
}

// checkpointEvery is how often the checkpointer runs. A checkpoint copies
// each page the WAL holds once, however many times it was written since:
// the pages of many writers' batches (the log's, its key's, the ends of
// input_ids and of events' key) are written again and again, so that
// checkpoints further apart copy less of what those writers commit
// (docs/perf-log.md).
const checkpointEvery = 3 * time.Second

// walSyncEvery is how often the checkpointer fsyncs the WAL (a checkpoint
// does too, when it copies frames): at synchronous=NORMAL, which writes
// commits without an fsync, the most of what was receipted that a power
// cut can lose (docs/server.md).
const walSyncEvery = time.Second

// checkpoints runs a checkpoint every interval (checkpointEvery, but in
// tests; in whole walSyncEvery) and, with syncWAL, fsyncs the WAL every
// walSyncEvery, until Close.
func (d *DB) checkpoints(every time.Duration, syncWAL bool) {
	defer close(d.ckptDone)
	tick := min(every, walSyncEvery)
	t := time.NewTicker(tick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-d.ckptStop:
			return
		case <-t.C:
			if checkpointsAt(n, every, tick) {
				d.checkpoint()
			}
			// After a checkpoint too: a passive one that copied nothing
			// (a reader held it off) synced nothing.
			if syncWAL {
				d.syncWAL()
			}
		}
	}
}

// checkpointsAt says whether the checkpointer's n-th tick, of one every
// tick, is a checkpoint's (one every every) rather than a sync's.
func checkpointsAt(n int, every, tick time.Duration) bool {
	return n%max(1, int(every/tick)) == 0
}

// syncWAL fsyncs the WAL file, which SQLite writes commits to and keeps
// while the store is open; one not there yet needs none.
func (d *DB) syncWAL() {
	f, err := os.OpenFile(d.path+"-wal", os.O_RDWR, 0)
	if err != nil {
		return
	}
	_ = f.Sync()
	f.Close()
}

// walLimitDefault is 16 MiB of 4 KiB pages.
const walLimitDefault = 4096

// ckptBusyWait bounds how long a TRUNCATE checkpoint holds commits back
// while it waits for the writer and readers.
const ckptBusyWait = 250 * time.Millisecond

// checkpoint copies the WAL into the database file. A PASSIVE checkpoint
// never waits, but the WAL only starts again from its beginning once one
// has copied all of it with no commit in between — which a daemon that
// writes all the time never gives it: the WAL then grows for ever, and a
// restart reads it all back. So past walLimit pages it asks the writer to
// checkpoint between two batches, after which the writer's next commit
// rewinds the WAL (rewind.go). If by the next checkpoint the WAL has only
// grown, the rewind did not happen (readers kept it in the WAL), and the
// checkpoint is a TRUNCATE: it waits, at most ckptBusyWait and holding
// commits back meanwhile, for the commit in progress and for readers to
// leave the WAL, copies the rest and empties the WAL itself. The WAL so
// never holds much more than walLimit and two checkpoints' worth of
// commits. (RESTART leaves the rewind to the next commit, which a reader
// that slips in first prevents: TestWALStaysBoundedUnderContinuousWrites
// saw the WAL keep growing with it.)
func (d *DB) checkpoint() {
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	var busy, pages, copied int
	if err := d.ckpt.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &pages, &copied); err != nil {
		return
	}
	switch {
	case pages < d.walLimit:
		d.asked = 0
	case d.asked > 0 && pages >= d.asked:
		_, _ = d.ckpt.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		d.asked = 0
	default:
		d.asked = pages
		d.w.askRewind()
	}
}

// Writer returns the group-commit writer.
func (d *DB) Writer() *Writer { return d.w }

// HookCommits has the writer call f after each commit, as Options.OnCommit
// (and before it, when Open was given one too): for the store's user,
// which gets it open. Call it once, before the first write.
func (d *DB) HookCommits(f func([]Committed)) { d.w.hook.Store(&f) }

// Close stops the writer (after the requests already queued) and closes the
// checkpoint connection and both pools. It is safe to call twice.
func (d *DB) Close(ctx context.Context) error {
	err := d.w.Close(ctx)
	if d.ckpt == nil { // PostgreSQL: one pool
		d.closeOnce.Do(func() {
			if e := d.rw.Close(); e != nil && err == nil {
				err = e
			}
		})
		return err
	}
	d.closeOnce.Do(func() {
		close(d.ckptStop)
		<-d.ckptDone
		// A last passive checkpoint: it never waits for readers, so a
		// stop cannot hang on one (TRUNCATE would wait up to busy_timeout).
		_, _ = d.ckpt.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		d.ckpt.Close()
	})
	if e := d.ro.Close(); e != nil && err == nil {
		err = e
	}
	if e := d.index.close(); e != nil && err == nil {
		err = e
	}
	if e := d.rw.Close(); e != nil && err == nil {
		err = e
	}
	return err
}
