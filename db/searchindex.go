package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/uptrace/bun"
)

// On SQLite the text of the search index is in a file of its own beside
// the store (the store's path + searchFileSuffix), an FTS4 table written
// by the indexer: a goroutine with its own connection, which reads the
// store's new documents (attached read-only) and indexes them in
// transactions of its own. The writer gives each document its docid as it
// commits it (the docid column of its event's row, in events or the log)
// and never waits for FTS4's insert, which cost it a large share of each
// input when many writers shared its commits.
//
// The file says up to which docid it has indexed everything (upto); a
// search reads it first and matches the documents past it itself, from
// the store, in the same read transaction (search.go). The writer lets
// the index fall at most maxIndexLag documents behind before it waits for
// it (for at most indexWaitMax a batch: a broken index slows searches,
// never writes), so that what a search matches itself stays bounded.
// Documents of deleted sessions go to the store's search_gone, which the
// indexer reads to forget them (purged says how far), and which
// DeleteSession empties of what the index has forgotten.
//
// The file is derived: deleted, it is made again from the store when the
// daemon opens it, all but the newest maxIndexLag documents before Open
// returns.

// searchFileSuffix names the index's file after the store's.
const searchFileSuffix = "-search"

const (
	// indexChunk is how many documents an index transaction takes at
	// most; indexBatch, how many it waits for, for at most indexDelay.
	indexChunk = 2048
	indexBatch = 1024
	indexDelay = 100 * time.Millisecond
	// maxIndexLag is how many documents the index may fall behind the
	// store before the writer waits for it.
	maxIndexLag = 16384
	// indexWaitMax bounds one batch's wait for the index.
	indexWaitMax = 2 * time.Second
	// maxQueuedBytes bounds the text queued for the indexer.
	maxQueuedBytes = 16 << 20
	// indexRetry is how soon an index that failed tries again.
	indexRetry = time.Second
)

// searchFileSchema makes the index's file: the text under each docid,
// and how far it has got.
var searchFileSchema = []string{
	`CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts4(text, tokenize=unicode61 "remove_diacritics=0")`,
	`CREATE TABLE IF NOT EXISTS indexed (id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL, purged INTEGER NOT NULL)`,
	`INSERT OR IGNORE INTO indexed (id, upto, purged) VALUES (1, 0, 0)`,
}

// indexer writes the search index's file.
type indexer struct {
	db        *sql.DB      // one connection to the file, the store attached as "store"
	upto      atomic.Int64 // every document up to this docid is indexed, or gone
	last      atomic.Int64 // the writer's last docid, as of its last kick
	purged    atomic.Int64 // search_gone's rows up to this n are forgotten
	errors    atomic.Int64 // index transactions that failed
	wake      chan struct{}
	advanced  chan struct{} // a step's end, for the writer waiting on it
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu          sync.Mutex
	queue       []indexDoc // committed documents past upto, in docid order (add)
	queuedBytes int        // their text's
	maxQueued   int        // bytes: maxQueuedBytes but in tests
	fromStore   bool       // the queue misses documents: read them from the store
	dropped     int64      // how many times the queue was dropped

	// deletions counts the writer's commits that gave search_gone rows
	// (one at the start, for those a past run left); purgedAt is its
	// value when step last found nothing more to forget. Owned by step.
	deletions atomic.Int64
	purgedAt  int64

	docs []indexDoc // step's, kept from step to step
	args []any
}

// openIndexer opens (or makes) the index's file of the store at path,
// brings it in line with the store (whose largest docid is last) and
// indexes what it lacks beyond maxIndexLag; run starts it.
func openIndexer(ctx context.Context, path string, last int64, log *slog.Logger) (*indexer, error) {
	file := path + searchFileSuffix
	if f, err := os.OpenFile(file, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		f.Close()
	}
	// Deferred transactions: IMMEDIATE would open a read of the store at
	// each BEGIN, and a read held there keeps the writer's checkpoints
	// from rewinding the store's WAL (rewind.go). A step reads the store
	// only to catch up or to forget deleted documents.
	db := openAttached(strings.Replace(dsn(file, false, "NORMAL", busyWait), "_txlock=immediate", "_txlock=deferred", 1), "file:"+path+"?mode=ro", "store")
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	ix := &indexer{db: db, maxQueued: maxQueuedBytes, wake: make(chan struct{}, 1), advanced: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := ix.start(ctx, last); err != nil {
		db.Close()
		return nil, fmt.Errorf("open the search index %s: %w", file, err)
	}
	ix.fromStore = ix.upto.Load() < last
	ix.deletions.Store(1) // search_gone may hold rows a past run left
	if behind := last - ix.upto.Load(); behind > maxIndexLag && log != nil {
		// A store from before this file, or one whose file was deleted:
		// a large store takes a while, and the daemon is not serving yet.
		log.Info("building the search index before serving", "file", file, "documents", behind)
		defer func(t time.Time) { log.Info("built the search index", "took", time.Since(t).Round(time.Millisecond)) }(time.Now())
	}
	// One step at least, whatever the lag: the first forgets what
	// search_gone holds from a past run, which reads the store. Taken
	// here, before the writer commits, no later step reads the store but
	// to catch up or to forget a deletion: a read open across the writer's
	// checkpoint keeps the WAL from rewinding (rewind.go).
	for {
		if _, err := ix.step(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("build the search index %s: %w", file, err)
		}
		if last-ix.upto.Load() <= maxIndexLag {
			return ix, nil
		}
	}
}

// start makes the file's tables and forgets what it holds past the
// store's last docid: a store that lost its last commits (synchronous
// NORMAL and a power cut) gives their docids again.
func (ix *indexer) start(ctx context.Context, last int64) error {
	for _, q := range searchFileSchema {
		if _, err := ix.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var upto, purged, seq int64
	if err := ix.db.QueryRowContext(ctx, `SELECT upto, purged FROM indexed`).Scan(&upto, &purged); err != nil {
		return err
	}
	if err := ix.db.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM store.sqlite_sequence WHERE name = 'search_gone'), 0)`).Scan(&seq); err != nil {
		return err
	}
	if upto > last || purged > seq {
		upto, purged = min(upto, last), min(purged, seq)
		if _, err := ix.db.ExecContext(ctx, `DELETE FROM search_fts WHERE docid > ?`, upto); err != nil {
			return err
		}
		if _, err := ix.db.ExecContext(ctx, `UPDATE indexed SET upto = ?, purged = ?`, upto, purged); err != nil {
			return err
		}
	}
	ix.upto.Store(upto)
	ix.purged.Store(purged)
	return nil
}

// run indexes what the writer commits, until close: once indexBatch
// documents wait, or indexDelay after the first of fewer. FTS4 writes a
// segment per transaction and merges them as they pile up: a
// transaction for each of the writer's batches cost more than the
// insert itself.
func (ix *indexer) run() {
	defer close(ix.done)
	retry := time.NewTicker(indexRetry)
	defer retry.Stop()
	ctx := context.Background()
	for {
		select {
		case <-ix.stop:
			return
		case <-ix.wake:
			if !ix.gather() {
				return
			}
		case <-retry.C:
		}
		for {
			n, err := ix.step(ctx)
			select {
			case ix.advanced <- struct{}{}:
			default:
			}
			if err != nil {
				ix.errors.Add(1)
			}
			if err != nil || n == 0 {
				break
			}
			select {
			case <-ix.stop:
				return
			default:
			}
		}
	}
}

// indexed tells the index of a batch's documents, once committed, and
// holds the writer while the index is too far behind.
func (w *Writer) indexed() {
	ix := w.index
	if ix == nil || w.lastDoc == w.kicked && !w.kickIndex {
		return
	}
	if w.kickIndex {
		ix.deletions.Add(1)
	}
	w.kicked, w.kickIndex = w.lastDoc, false
	ix.add(w.docs, w.lastDoc)
	w.docs = kept(w.docs)
	ix.kick()
	ix.keepUp(w.lastDoc)
}

// gather waits, after a kick, until indexBatch documents wait or
// indexDelay has passed; false: the indexer is stopping.
func (ix *indexer) gather() bool {
	if ix.last.Load()-ix.upto.Load() >= indexBatch {
		return true
	}
	delay := time.NewTimer(indexDelay)
	defer delay.Stop()
	for {
		select {
		case <-ix.stop:
			return false
		case <-delay.C:
			return true
		case <-ix.wake:
			if ix.last.Load()-ix.upto.Load() >= indexBatch {
				return true
			}
		}
	}
}

// kick tells the indexer the store has new documents.
func (ix *indexer) kick() {
	select {
	case ix.wake <- struct{}{}:
	default:
	}
}

// keepUp holds the writer, whose last docid is last, while the index is
// more than maxIndexLag behind it, for at most indexWaitMax.
func (ix *indexer) keepUp(last int64) {
	if last-ix.upto.Load() <= maxIndexLag {
		return
	}
	give := time.NewTimer(indexWaitMax)
	defer give.Stop()
	for last-ix.upto.Load() > maxIndexLag/2 {
		ix.kick()
		select {
		case <-ix.advanced:
		case <-give.C:
			return
		case <-ix.done:
			return
		}
	}
}

// close stops the indexer and closes its file; again, it does nothing.
func (ix *indexer) close() error {
	if ix == nil {
		return nil
	}
	var err error
	ix.closeOnce.Do(func() {
		close(ix.stop)
		<-ix.done
		err = ix.db.Close()
	})
	return err
}

// indexDoc is a committed document's text, handed to the indexer.
type indexDoc struct {
	docid int64
	text  string
}

// add queues the documents of a commit, in docid order, for the indexer:
// what it indexes without reading them back from the store. Past
// maxQueuedBytes of text the queue is dropped, and the indexer reads
// the store until it has caught up.
func (ix *indexer) add(docs []indexDoc, last int64) {
	ix.mu.Lock()
	for _, d := range docs {
		ix.queuedBytes += len(d.text)
	}
	if ix.queuedBytes > ix.maxQueued {
		clear(ix.queue)
		ix.queue, ix.queuedBytes, ix.fromStore = ix.queue[:0], 0, true
		ix.dropped++
	} else {
		ix.queue = append(ix.queue, docs...)
	}
	ix.mu.Unlock()
	ix.last.Store(last)
}

// step indexes at most indexChunk documents past upto, from the queue or,
// when the queue misses some, from the store, and forgets the documents
// of deleted sessions up to where it got, in one transaction; it says
// how many it indexed.
func (ix *indexer) step(ctx context.Context) (int, error) {
	ix.mu.Lock()
	fromStore, dropped := ix.fromStore, ix.dropped
	docs := ix.docs[:0]
	if !fromStore {
		n := min(len(ix.queue), indexChunk)
		docs = append(docs, ix.queue[:n]...)
		clear(ix.queue[:n])
		ix.queue = ix.queue[n:]
		for _, d := range docs {
			ix.queuedBytes -= len(d.text)
		}
	}
	ix.mu.Unlock()
	n, err := ix.stepTx(ctx, docs, fromStore, dropped)
	clear(docs)
	ix.docs = docs[:0]
	if err != nil {
		ix.mu.Lock()
		ix.fromStore = true // what it took from the queue is read again from the store
		ix.dropped++
		ix.mu.Unlock()
	}
	return n, err
}

// stepTx is step's transaction, of docs from the queue or, fromStore, of
// those it reads. dropped is the queue's drops step saw.
func (ix *indexer) stepTx(ctx context.Context, docs []indexDoc, fromStore bool, dropped int64) (int, error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	upto, caughtUp := ix.upto.Load(), false
	if fromStore {
		if docs, caughtUp, err = ix.readStore(ctx, tx, docs); err != nil {
			return 0, err
		}
		if caughtUp {
			// Past every docid the store has given, indexed or gone.
			var last int64
			if err := tx.QueryRowContext(ctx, lastDocSQL("store.")).Scan(&last); err != nil {
				return 0, fmt.Errorf("read the last docid: %w", err)
			}
			upto = max(upto, last)
		}
	}
	args := ix.args[:0]
	for _, d := range docs {
		if d.docid > ix.upto.Load() {
			args, upto = append(args, d.docid, d.text), max(upto, d.docid)
		}
	}
	defer func() { clear(args); ix.args = args[:0] }()
	for rest := args; len(rest) > 0; {
		n := stmtRows(len(rest) / 2)
		// OR REPLACE: a docid indexed twice, which nothing should do,
		// must not stop the index for good.
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO search_fts (docid, text) VALUES (?,?)`+strings.Repeat(",(?,?)", n-1), rest[:2*n]...); err != nil {
			return 0, fmt.Errorf("index: %w", err)
		}
		rest = rest[2*n:]
	}
	purged, done := ix.purged.Load(), ix.deletions.Load()
	if done != ix.purgedAt {
		var all bool
		if purged, all, err = ix.purge(ctx, tx, upto); err != nil {
			return 0, err
		}
		if !all {
			done = ix.purgedAt // some wait to be indexed first: the next step looks again
		}
	}
	if upto == ix.upto.Load() && purged == ix.purged.Load() {
		ix.caughtUp(caughtUp, dropped, upto)
		ix.purgedAt = done
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE indexed SET upto = ?, purged = ?`, upto, purged); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	ix.caughtUp(caughtUp, dropped, upto) // before upto moves: what waits on upto sees the queue taken again
	ix.upto.Store(upto)
	ix.purged.Store(purged)
	ix.purgedAt = done
	return len(args) / 2, nil
}

// caughtUp goes back to the queue once the store is read up to upto, if
// the queue dropped nothing since (the drops step saw): what the queue
// holds up to upto is indexed, the rest was committed after.
func (ix *indexer) caughtUp(caughtUp bool, dropped, upto int64) {
	if !caughtUp {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.dropped != dropped {
		return
	}
	i := 0
	for i < len(ix.queue) && ix.queue[i].docid <= upto {
		ix.queuedBytes -= len(ix.queue[i].text)
		i++
	}
	clear(ix.queue[:i])
	ix.queue, ix.fromStore = ix.queue[i:], false
}

// readStore reads the documents past upto from the store, at most
// indexChunk, appended to docs; caughtUp says it read all there were.
func (ix *indexer) readStore(ctx context.Context, tx *sql.Tx, docs []indexDoc) (_ []indexDoc, caughtUp bool, _ error) {
	rows, err := tx.QueryContext(ctx, `SELECT docid, text FROM (
			SELECT docid, json_extract(payload, '$.text') AS text FROM store.events WHERE docid > ?1
			UNION ALL
			SELECT docid, json_extract(payload, '$.text') FROM store.events_log WHERE docid > ?1)
		ORDER BY docid LIMIT ?2`, ix.upto.Load(), indexChunk)
	if err != nil {
		return nil, false, fmt.Errorf("read new documents: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var d indexDoc
		var text sql.NullString
		if err := rows.Scan(&d.docid, &text); err != nil {
			return nil, false, fmt.Errorf("read new documents: %w", err)
		}
		d.text = text.String
		docs, n = append(docs, d), n+1
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read new documents: %w", err)
	}
	return docs, n < indexChunk, nil
}

// purge forgets the documents search_gone lists past purged, in order,
// up to the first not yet indexed (past upto): how far it got, and
// whether it got to the end.
func (ix *indexer) purge(ctx context.Context, tx *sql.Tx, upto int64) (_ int64, all bool, _ error) {
	purged := ix.purged.Load()
	rows, err := tx.QueryContext(ctx, `SELECT n, docid FROM store.search_gone WHERE n > ? ORDER BY n LIMIT ?`, purged, indexChunk)
	if err != nil {
		return 0, false, fmt.Errorf("read deleted documents: %w", err)
	}
	var gone []any
	all = true
	for rows.Next() {
		var n, docid int64
		if err := rows.Scan(&n, &docid); err != nil {
			rows.Close()
			return 0, false, fmt.Errorf("read deleted documents: %w", err)
		}
		if docid > upto {
			all = false // indexed later, and forgotten then
			break
		}
		purged, gone = n, append(gone, docid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("read deleted documents: %w", err)
	}
	if len(gone) == indexChunk {
		all = false
	}
	for len(gone) > 0 {
		n := stmtRows(len(gone))
		if _, err := tx.ExecContext(ctx, `DELETE FROM search_fts WHERE docid IN (?`+strings.Repeat(",?", n-1)+`)`, gone[:n]...); err != nil {
			return 0, false, fmt.Errorf("forget deleted documents: %w", err)
		}
		gone = gone[n:]
	}
	return purged, all, nil
}

// lastDocID is the largest docid the store at rw has given: of its
// documents, in events and the log, and those forgotten in search_gone,
// which the index may still hold.
func lastDocID(ctx context.Context, rw *bun.DB) (int64, error) {
	var last int64
	err := rw.QueryRowContext(ctx, lastDocSQL("")).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("read the last docid: %w", err)
	}
	return last, nil
}

// lastDocSQL reads the largest docid given (lastDocID), from the store's
// tables in schema ("" or "store." where it is attached).
func lastDocSQL(schema string) string {
	// docid IS NOT NULL: the partial indexes' condition, or max reads
	// every row.
	return `SELECT max(coalesce((SELECT max(docid) FROM ` + schema + `events WHERE docid IS NOT NULL), 0),
		coalesce((SELECT max(docid) FROM ` + schema + `events_log WHERE docid IS NOT NULL), 0), coalesce((SELECT max(docid) FROM ` + schema + `search_gone), 0))`
}

// openAttached is a pool of connections opened with dsn, each with the
// database URI file attached as name.
func openAttached(dsn, file, name string) *sql.DB {
	drv := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec(`ATTACH DATABASE ? AS `+name, []driver.Value{file})
		return err
	}}
	return sql.OpenDB(dsnConnector{dsn: dsn, drv: drv})
}

// dsnConnector opens drv's connections with dsn.
type dsnConnector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }
