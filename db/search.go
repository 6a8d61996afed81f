package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"albedo/wire"
)

// Full-text search over every message, found the moment anyone can see
// it.
//
// Each message with text is a document (and each tool_call or
// tool_result with text: searchable), numbered in the order it is
// indexed (docid), in search_docs with its session and offset. On
// PostgreSQL search_docs also holds the text's tsvector, with a GIN index,
// written by the batch that commits the message (flush), its docid a
// sequence's. On SQLite the text is in search_fts, an FTS4 table under
// the same docid (mattn/go-sqlite3 builds FTS3/4 by default; FTS5 would
// need a build tag on every build command). There, a message written
// straight into events is indexed by its batch, numbered from the
// largest docid (the writer is alone); one written to the log (fold.go)
// is indexed by the fold that moves it, a thousand at a time: FTS4 writes
// a segment per transaction, and a segment for every batch would weigh on
// each of the writer's commits when many writers share them. Until its
// fold, search reads the log itself (searchLog): the log holds about a
// thousand rows, matched here as the index would, and each logged message
// is given the docid its fold will give it (the largest indexed + its
// rank in the log), so that results and cursors do not change when it
// folds. Both stores use the 'simple' rules: words lower-cased, no
// stemming, accents kept, any script.
//
// Results are newest first: the largest docids, below a cursor. On
// SQLite a message written straight into events while others wait in the
// log is numbered before them, so the newest thousand or so may come a
// little out of order.

// searchable says whether events of type t are documents: messages,
// what a model said before its tool calls (a tool_call's text) and
// tools' output (a tool_result's).
func searchable(t wire.EventType) bool {
	return t == wire.EventMessage || t == wire.EventToolCall || t == wire.EventToolResult
}

// searchDocColumns is how many parameters a document takes in the batch
// (session, offset, text).
const searchDocColumns = 3

// index writes the documents of a batch's messages (search holds session,
// offset and text for each) and returns search, reused for the SQLite
// rows.
func (b *batchState) index(ctx context.Context, tx *batchTx, stmts *flushStmts, search []any) ([]any, error) {
	if len(search) == 0 {
		return search, nil
	}
	d := b.w.dialect
	if d.pg {
		if err := insertRows(ctx, tx, d, stmts.insertDocs.get, searchDocColumns, search); err != nil {
			return search, fmt.Errorf("index messages: %w", err)
		}
		return search, nil
	}
	last, err := lastDocID(ctx, tx.sql)
	if err != nil {
		return search, fmt.Errorf("index messages: %w", err)
	}
	// In place: (session, offset, text) becomes (docid, session, offset)
	// for search_docs, then (docid, text) for search_fts.
	n := len(search) / searchDocColumns
	texts := make([]any, 0, 2*n)
	for i := range n {
		row := search[i*searchDocColumns : (i+1)*searchDocColumns]
		docid := last + int64(i) + 1
		texts = append(texts, docid, row[2])
		row[0], row[1], row[2] = docid, row[0], row[1]
	}
	if err := insertRows(ctx, tx, d, stmts.insertDocs.get, searchDocColumns, search); err != nil {
		return search, fmt.Errorf("index messages: %w", err)
	}
	if err := insertRows(ctx, tx, d, stmts.insertText.get, 2, texts); err != nil {
		return search, fmt.Errorf("index messages' text: %w", err)
	}
	return search, nil
}

// insertSearchDocsSQL inserts n of SQLite's documents: (docid, session, offset).
func insertSearchDocsSQL(or string) func(n int) string {
	return func(n int) string {
		return `INSERT` + or + ` INTO search_docs (docid, session, "offset") VALUES (?,?,?)` + strings.Repeat(",(?,?,?)", n-1)
	}
}

// insertSearchTextSQL inserts n texts into SQLite's FTS4 table: (docid, text).
func insertSearchTextSQL(n int) string {
	return `INSERT INTO search_fts (docid, text) VALUES (?,?)` + strings.Repeat(",(?,?)", n-1)
}

// insertSearchTSVSQL inserts n of PostgreSQL's documents: (session,
// offset, text), the text made a tsvector.
func insertSearchTSVSQL(n int) string {
	return `INSERT INTO search_docs (session, "offset", tsv) VALUES (?,?,to_tsvector('simple',?))` +
		strings.Repeat(",(?,?,to_tsvector('simple',?))", n-1)
}

// deleteSearchDocs forgets a deleted session's documents on SQLite (on
// PostgreSQL its foreign key does).
func (t *Tx) deleteSearchDocs(ctx context.Context, session string) error {
	if t.batch.w.dialect.pg {
		return nil
	}
	if _, err := t.sql.ExecContext(ctx, `DELETE FROM search_fts WHERE docid IN (SELECT docid FROM search_docs WHERE session = ?)`, session); err != nil {
		return fmt.Errorf("delete search text: %w", err)
	}
	if _, err := t.sql.ExecContext(ctx, `DELETE FROM search_docs WHERE session = ?`, session); err != nil {
		return fmt.Errorf("delete search docs: %w", err)
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
// not "". On SQLite the log (searchLog) and the session's newest
// documents (searchSession) come before the index.
func (d *DB) Search(ctx context.Context, q Query, session string, before int64, limit int) ([]SearchHit, error) {
	if before <= 0 {
		before = 1 << 62
	}
	// One snapshot for the log and the index: a fold between the two
	// reads would show its messages twice, or not at all.
	rtx, err := d.ro.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rtx.Rollback()
	var out []SearchHit
	if !d.dialect.pg {
		if out, err = searchLog(ctx, rtx, q, session, before, limit); err != nil {
			return nil, err
		}
		if len(out) > 0 {
			before = out[len(out)-1].DocID // the index holds what is older
		}
		if len(out) < limit {
			scan := sessionScan
			if session == "" {
				scan = newestScan
			}
			more, scanned, err := searchSession(ctx, rtx, q, session, before, limit-len(out), scan)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			before = scanned
		}
		if len(out) == limit || before <= 1 {
			return out, nil
		}
	}
	if d.dialect.pg {
		query, args := pgWindowSQL(q, session, before, limit)
		if out, err = scanHits(ctx, rtx, d.dialect.bind(query), args); err != nil || len(out) == limit {
			return out, err
		}
		out = nil // fewer in the window: the index finds them all, those too
	}
	query, args := d.searchSQL(q, session, before, limit-len(out))
	more, err := scanHits(ctx, rtx, d.dialect.bind(query), args)
	return append(out, more...), err
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
			in = ` AND search_docs.session = ?`
		}
		// CROSS JOIN: the full-text index leads, and search_docs is read
		// by docid for its hits only.
		query = `SELECT search_fts.docid, search_docs.session, search_docs."offset",
			snippet(search_fts, '` + MatchStart + `', '` + MatchEnd + `', '…', -1, 24)
			FROM search_fts CROSS JOIN search_docs ON search_docs.docid = search_fts.docid
			WHERE search_fts MATCH ? AND search_fts.docid < ?` + in + `
			ORDER BY search_fts.docid DESC LIMIT ?`
		args = []any{q.MatchFTS(), before}
	}
	if session != "" {
		args = append(args, session)
	}
	return query, append(args, limit)
}

// indexLog indexes the log's messages, in a fold's transaction before the
// log is emptied, in the order they were logged: the docids searchLog
// gave them.
func indexLog(ctx context.Context, tx *sql.Tx) error {
	last, err := lastDocID(ctx, tx)
	if err != nil {
		return fmt.Errorf("fold: index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR ROLLBACK INTO search_docs (session, "offset")
		SELECT session, "offset"`+loggedDocs); err != nil {
		return fmt.Errorf("fold: index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_fts (docid, text)
		SELECT ? + row_number() OVER (ORDER BY rowid), json_extract(payload, '$.text')`+loggedDocs, last); err != nil {
		return fmt.Errorf("fold: index text: %w", err)
	}
	return nil
}

// loggedDocs is the log's documents in the order they were logged: its
// messages with text. indexLog numbers them so and searchLog gives them
// the same numbers before the fold, so both read them through this.
const loggedDocs = ` FROM events_log
	WHERE type IN ('message', 'tool_call', 'tool_result') AND coalesce(json_extract(payload, '$.text'), '') <> '' ORDER BY rowid`

// lastDocID is the largest docid indexed (0: none), as tx sees it.
func lastDocID(ctx context.Context, tx querier) (int64, error) {
	var last int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(docid), 0) FROM search_docs`).Scan(&last)
	return last, err
}

// searchLog finds q in the messages of SQLite's log that are below
// before, at most limit, newest first, each with the docid its fold will
// give it.
func searchLog(ctx context.Context, tx *sql.Tx, q Query, session string, before int64, limit int) ([]SearchHit, error) {
	last, err := lastDocID(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("search the log: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT session, "offset", json_extract(payload, '$.text')`+loggedDocs)
	if err != nil {
		return nil, fmt.Errorf("search the log: %w", err)
	}
	defer rows.Close()
	var out []SearchHit
	for docid := last + 1; rows.Next(); docid++ {
		var h SearchHit
		var text string
		if err := rows.Scan(&h.Session, &h.Offset, &text); err != nil {
			return nil, fmt.Errorf("search the log: %w", err)
		}
		if docid >= before || session != "" && h.Session != session || !q.Matches(text) {
			continue
		}
		h.DocID, h.Snippet = docid, q.Snippet(text)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search the log: %w", err)
	}
	slices.Reverse(out)
	return out[:min(len(out), limit)], nil
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

// searchSession finds q in session's newest indexed documents (every
// session's, for ""), below before, at most limit, reading at most scan
// of them; it returns the hits and the docid below which it did not look
// (1 when it read them all).
func searchSession(ctx context.Context, tx *sql.Tx, q Query, session string, before int64, limit, scan int) ([]SearchHit, int64, error) {
	var out []SearchHit
	where, args := `d.session = ? AND `, []any{session}
	if session == "" {
		where, args = "", nil
	}
	for read := 0; read < scan; {
		rows, err := tx.QueryContext(ctx, `SELECT d.docid, d.session, d."offset", json_extract(coalesce(
				(SELECT payload FROM events e WHERE e.session = d.session AND e."offset" = d."offset"),
				(SELECT payload FROM events_log l WHERE l.session = d.session AND l."offset" = d."offset")), '$.text')
			FROM search_docs d WHERE `+where+`d.docid < ? ORDER BY d.docid DESC LIMIT ?`, append(args, before, min(500, scan-read))...)
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
			n, read, before = n+1, read+1, h.DocID
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
		if n < min(500, scan-read+n) {
			return out, 1, nil // read them all
		}
	}
	return out, before, nil
}
