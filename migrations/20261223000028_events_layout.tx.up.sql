-- events becomes a rowid table, its (session, offset) key an index of its
-- own, and each of its documents carries its docid, which replaces
-- search_docs. WITHOUT ROWID, its interior pages held whole rows (about ten
-- each), and each fold's inserts at the end of every session's range split
-- leaves and interiors alike: most of what a fold wrote to the WAL at many
-- writers. A rowid table's rows go at its end in the order the fold writes
-- them, each session's together, and only the key's small entries go into
-- each session's range. search_docs' (session, docid) index was the other
-- range every fold split; a document is now found by its docid through
-- events_docs (and the log's events_log_docs), whose entries go at their
-- end, and a session's documents through its events (db/search.go).
CREATE TABLE events_rows (
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" INTEGER NOT NULL,
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,
    at       TEXT NOT NULL,
    input_id TEXT,
    ord      INTEGER,
    docid    INTEGER,
    PRIMARY KEY (session, "offset")
);

--bun:split

INSERT INTO events_rows (session, "offset", type, payload, at, input_id, ord, docid)
SELECT e.session, e."offset", e.type, e.payload, e.at, e.input_id, e.ord, d.docid
FROM events e LEFT JOIN search_docs d ON d.session = e.session AND d."offset" = e."offset"
ORDER BY e.session, e."offset";

--bun:split

DROP TABLE events;

--bun:split

ALTER TABLE events_rows RENAME TO events;

--bun:split

CREATE INDEX events_docs ON events (docid) WHERE docid IS NOT NULL;

--bun:split

CREATE INDEX events_log_docs ON events_log (docid) WHERE docid IS NOT NULL;

--bun:split

DROP TABLE search_docs;
