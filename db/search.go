package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"albedo/wire"
)

// Full-text search over every message, found the moment anyone can see
// it.
//
// Each message with text is a document (and each tool_call or
// tool_result with text: searchable), numbered in the order it is
// committed (docid). On PostgreSQL search_docs holds each document's
// session, offset and text's tsvector, with a GIN index, written by the
// batch that commits the message (flush), its docid a sequence's. On
// SQLite the writer gives each document its docid as it commits it (the
// writer is alone) and writes it into the event's row, in events or the
// log, whichever takes it (the fold carries it over); a document is found
// by its docid through events_docs or events_log_docs, a session's
// documents through its events. The text is indexed apart, in an FTS4
// table in a file of its own written by its own goroutine (searchindex.go;
// mattn/go-sqlite3 builds FTS3/4 by default, FTS5 would need a build tag
// on every build command). A search there reads how far that index has
// got, then matches itself the newest documents, every one the index
// lacks among them (searchSession), as the index would, before it asks
// the index for older ones. Both stores use the 'simple' rules: words
// lower-cased, no stemming, accents kept, any script.
//
// Results are newest first: the largest docids, below a cursor.

// searchable says whether events of type t are documents: messages,
// what a model said before its tool calls (a tool_call's text) and
// tools' output (a tool_result's).
func searchable(t wire.EventType) bool {
	return t == wire.EventMessage || t == wire.EventToolCall || t == wire.EventToolResult
}

// searchDocColumns is how many parameters a document takes in PostgreSQL's
// batch: (session, offset, text).
const searchDocColumns = 3

// index writes PostgreSQL's documents of a batch (document), with their
// text's tsvector; on SQLite search is empty (the events' rows carry the
// docids, and searchindex.go indexes the text). It returns search, for
// the writer to keep.
func (b *batchState) index(ctx context.Context, tx *batchTx, stmts *flushStmts, search []any) ([]any, error) {
	if len(search) == 0 {
		return search, nil
	}
	if err := insertRows(ctx, tx, b.w.dialect, stmts.insertDocs.get, searchDocColumns, search); err != nil {
		return search, fmt.Errorf("index messages: %w", err)
	}
	return search, nil
}

// insertSearchTSVSQL inserts n of PostgreSQL's documents: (session,
// offset, text), the text made a tsvector.
func insertSearchTSVSQL(n int) string {
	return `INSERT INTO search_docs (session, "offset", tsv) VALUES (?,?,to_tsvector('simple',?))` +
		strings.Repeat(",(?,?,to_tsvector('simple',?))", n-1)
}

// sessionDocsSQL selects the docids of a session's documents on SQLite,
// through its events.
const sessionDocsSQL = `SELECT docid FROM events WHERE session = ? AND docid IS NOT NULL
	UNION ALL SELECT docid FROM events_log WHERE session = ? AND docid IS NOT NULL`

// deleteSearchDocs forgets a deleted session's documents on SQLite (on
// PostgreSQL search_docs' foreign key does), before its events go with
// their docids: those go to search_gone, for the index to forget their
// text, and the rows of search_gone the index has forgotten go.
func (t *Tx) deleteSearchDocs(ctx context.Context, session string) error {
	w := t.batch.w
	if w.dialect.pg {
		return nil
	}
	if _, err := t.sql.ExecContext(ctx, `INSERT INTO search_gone (docid) `+sessionDocsSQL, session, session); err != nil {
		return fmt.Errorf("keep deleted documents for the index: %w", err)
	}
	if w.index != nil {
		if _, err := t.sql.ExecContext(ctx, `DELETE FROM search_gone WHERE n <= ?`, w.index.purged.Load()); err != nil {
			return fmt.Errorf("delete forgotten documents: %w", err)
		}
		w.kickIndex = true // once committed
	}
	return nil
}

// SearchHit is one message found: its document, where it is, and a
// snippet of its text with the matches between « and ».
type SearchHit struct {
	DocID   int64
	Session string
	Offset  int64
	Snippet string
}

// Match marks, around each match in a snippet.
const (
	MatchStart = "«"
	MatchEnd   = "»"
)

// Search returns the newest messages matching q with a docid below
// before (0: from the newest), at most limit, in session only if it is
// not "". On SQLite the newest documents (searchSession), which include
// all the index lacks, come before the index.
func (d *DB) Search(ctx context.Context, q Query, session string, before int64, limit int) ([]SearchHit, error) {
	if before <= 0 {
		before = 1 << 62
	}
	// One snapshot of the store and one of the index, the index's first:
	// the store then holds at least every document the index does.
	rtx, err := d.ro.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rtx.Rollback()
	if d.dialect.pg {
		query, args := pgWindowSQL(q, session, before, limit)
		if out, err := scanHits(ctx, rtx, d.dialect.bind(query), args); err != nil || len(out) == limit {
			return out, err
		}
		// Fewer in the window: the index finds them all, those too.
		query, args = d.searchSQL(q, session, before, limit)
		return scanHits(ctx, rtx, d.dialect.bind(query), args)
	}
	indexed, err := upto(ctx, rtx)
	if err != nil {
		return nil, err
	}
	scan := sessionScan
	if session == "" {
		scan = newestScan
	}
	newest, floor, err := searchSession(ctx, rtx, q, session, before, limit, scan, indexed)
	if err != nil {
		return nil, err
	}
	// Every hit at floor or above is in newest; below it, in the index.
	if len(newest) >= limit || floor <= 1 {
		return newest, nil
	}
	query, args := d.searchSQL(q, session, min(floor, indexed+1), limit)
	more, err := scanHits(ctx, rtx, query, args)
	if err != nil {
		return nil, err
	}
	out := append(newest, more...)
	return out[:min(limit, len(out))], nil
}

// scanHits runs a query of hits (docid, session, offset, snippet).
func scanHits(ctx context.Context, rtx *sql.Tx, query string, args []any) ([]SearchHit, error) {
	rows, err := rtx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []SearchHit
	for rows.Next() {
		var h SearchHit
		if err := rows.Scan(&h.DocID, &h.Session, &h.Offset, &h.Snippet); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// pgWindow is how many of the newest documents (of the session, for a
// search in one) a search on PostgreSQL matches first, read in docid
// order, before it asks the GIN index. The index reads every document of
// each word of the query and sorts them, a cost that grows with the store
// for two common words or a phrase, where the newest documents hold a
// page of their hits after a few hundred rows. A query the window does
// not fill (rare words) pays for the window and then the index.
const pgWindow = 4000

// pgWindowSQL is searchSQL's query on PostgreSQL over the newest pgWindow
// documents below before.
func pgWindowSQL(q Query, session string, before int64, limit int) (string, []any) {
	ts := q.TSQuery()
	in := ""
	args := []any{ts, before}
	if session != "" {
		in = ` AND session = ?`
		args = append(args, session)
	}
	args = append(args, pgWindow, ts, limit)
	return `SELECT p.docid, p.session, p."offset", ts_headline('simple', e.payload::jsonb->>'text', to_tsquery('simple', ?),
			'StartSel=` + MatchStart + `, StopSel=` + MatchEnd + `, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "')
			FROM (SELECT w.docid, w.session, w."offset" FROM (SELECT docid, session, "offset", tsv FROM search_docs
				WHERE docid < ?` + in + ` ORDER BY docid DESC LIMIT ?) w
				WHERE w.tsv @@ to_tsquery('simple', ?) ORDER BY w.docid DESC LIMIT ?) p
			JOIN events e ON e.session = p.session AND e."offset" = p."offset"
			ORDER BY p.docid DESC`, args
}

// searchSQL is the index's query for the hits below before, at most
// limit, in session if it is not "": (docid, session, offset, snippet).
func (d *DB) searchSQL(q Query, session string, before int64, limit int) (string, []any) {
	in := ""
	var query string
	var args []any
	if d.dialect.pg {
		if session != "" {
			in = ` AND d.session = ?`
		}
		// The page is chosen first, its snippets made for it alone.
		query = `SELECT p.docid, p.session, p."offset", ts_headline('simple', e.payload::jsonb->>'text', to_tsquery('simple', ?),
			'StartSel=` + MatchStart + `, StopSel=` + MatchEnd + `, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "')
			FROM (SELECT d.docid, d.session, d."offset" FROM search_docs d
				WHERE d.tsv @@ to_tsquery('simple', ?) AND d.docid < ?` + in + ` ORDER BY d.docid DESC LIMIT ?) p
			JOIN events e ON e.session = p.session AND e."offset" = p."offset"
			ORDER BY p.docid DESC`
		ts := q.TSQuery()
		args = []any{ts, ts, before}
	} else {
		if session != "" {
			in = ` AND coalesce(e.session, l.session) = ?`
		}
		// The full-text index leads (a LEFT JOIN keeps it outermost), and
		// each hit's event is looked up by its docid in events or the log;
		// a deleted session's documents, which the index may still hold,
		// are in neither.
		query = `SELECT search_fts.docid, coalesce(e.session, l.session), coalesce(e."offset", l."offset"),
			snippet(search_fts, '` + MatchStart + `', '` + MatchEnd + `', '…', -1, 24)
			FROM search.search_fts LEFT JOIN events e ON e.docid = search_fts.docid LEFT JOIN events_log l ON l.docid = search_fts.docid
			WHERE search_fts MATCH ? AND search_fts.docid < ? AND coalesce(e.session, l.session) IS NOT NULL` + in + `
			ORDER BY search_fts.docid DESC LIMIT ?`
		args = []any{q.MatchFTS(), before}
	}
	if session != "" {
		args = append(args, session)
	}
	return query, append(args, limit)
}

// upto is how far the index has got (searchindex.go), as tx sees it:
// every document up to it is in the index.
func upto(ctx context.Context, tx *sql.Tx) (int64, error) {
	var upto int64
	if err := tx.QueryRowContext(ctx, `SELECT upto FROM search.indexed`).Scan(&upto); err != nil {
		return 0, fmt.Errorf("search: how far the index has got: %w", err)
	}
	return upto, nil
}

// sessionScan is how many of a session's newest documents a search in it
// reads and matches itself before it asks the index for older ones.
// FTS4 answers a word by reading its list of documents in every session:
// for a common word, a read that grows with the whole store, for a few
// hits in one session. Its documents, newest first, are its index's
// (session, docid) range, each read with its event.
const sessionScan = 20000

// newestScan is how many of the newest documents a search in every
// session reads and matches itself before it asks the index: FTS4 reads
// each word's whole list of documents, however long, for common words,
// two of them or a phrase, where the newest few thousand documents hold
// a page of their hits. A rare word pays for the scan and then the index.
const newestScan = 4000

// searchSession finds q in session's newest documents (every session's,
// for ""), below before, at most limit, reading at least scan of them and
// every one past indexed, which the index lacks; it returns the hits and
// the docid below which it did not look (1 when it read them all).
func searchSession(ctx context.Context, tx *sql.Tx, q Query, session string, before int64, limit, scan int, indexed int64) ([]SearchHit, int64, error) {
	var out []SearchHit
	below, err := offsetOf(ctx, tx, session, before) // a session's: the offset of the last document read
	if err != nil {
		return nil, 0, err
	}
	for read := 0; read < scan || before > indexed+1; {
		want := 500
		if read < scan {
			want = min(want, scan-read)
		}
		query, args := newestDocsSQL, []any{before, want}
		if session != "" {
			query, args = sessionDocsNewestSQL, []any{session, before, below, want}
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, 0, fmt.Errorf("search the session: %w", err)
		}
		n := 0
		for rows.Next() {
			var h SearchHit
			var text sql.NullString
			if err := rows.Scan(&h.DocID, &h.Session, &h.Offset, &text); err != nil {
				rows.Close()
				return nil, 0, fmt.Errorf("search the session: %w", err)
			}
			n, read, before, below = n+1, read+1, h.DocID, h.Offset
			if !q.Matches(text.String) {
				continue
			}
			h.Snippet = q.Snippet(text.String)
			if out = append(out, h); len(out) == limit {
				rows.Close()
				return out, before, nil
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, fmt.Errorf("search the session: %w", err)
		}
		if n < want {
			return out, 1, nil // read them all
		}
	}
	return out, before, nil
}

// offsetOf is where in session the document before is, for a page of its
// documents below it to start there rather than read past every newer
// event: its offset if it is session's, else one past any.
func offsetOf(ctx context.Context, tx *sql.Tx, session string, before int64) (int64, error) {
	below := int64(1) << 62
	if session == "" || before >= below {
		return below, nil
	}
	err := tx.QueryRowContext(ctx, bothTables(`SELECT "offset" FROM events WHERE docid = ?1 AND session = ?2`), before, session).Scan(&below)
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // none: below as it was
		return 0, fmt.Errorf("search the session: where its page starts: %w", err)
	}
	return below, nil
}

// newestDocsSQL reads the newest documents below a docid, with their
// text, through the docid indexes of events and the log (events_docs,
// events_log_docs), merged.
var newestDocsSQL = bothTables(`SELECT docid, session, "offset", json_extract(payload, '$.text') FROM events
	WHERE docid < ?1`) + ` ORDER BY docid DESC LIMIT ?2`

// sessionDocsNewestSQL reads a session's newest documents below a docid
// and an offset, with their text, through its events: within a session
// docids grow with offsets (both are given at commit), so its events
// newest first are its documents newest first, and the offset pages
// through them.
var sessionDocsNewestSQL = bothTables(`SELECT docid, session, "offset", json_extract(payload, '$.text') FROM events
	WHERE session = ?1 AND docid < ?2 AND "offset" < ?3`) + ` ORDER BY "offset" DESC LIMIT ?4`
