-- Search's text index moves to a file of its own (db/searchindex.go),
-- written by its own goroutine and connection, off the writer's. Each
-- message's docid is given at its commit: a logged one's in the log's new
-- docid column, moved to search_docs by the fold. search_gone holds the
-- documents of deleted sessions until the index has forgotten them too.
ALTER TABLE events_log ADD COLUMN docid INTEGER;

--bun:split

-- The log's documents, numbered after the index's, in the order they
-- were logged (what the fold would have given them).
WITH n AS (
    SELECT rowid AS r, row_number() OVER (ORDER BY rowid) AS k FROM events_log
    WHERE type IN ('message', 'tool_call', 'tool_result') AND coalesce(json_extract(payload, '$.text'), '') <> ''
)
UPDATE events_log SET docid = (SELECT coalesce(max(docid), 0) FROM search_docs) + (SELECT k FROM n WHERE n.r = events_log.rowid)
WHERE rowid IN (SELECT r FROM n);

--bun:split

CREATE TABLE search_gone (
    n     INTEGER PRIMARY KEY AUTOINCREMENT,
    docid INTEGER NOT NULL
);

--bun:split

DROP TABLE search_fts;
