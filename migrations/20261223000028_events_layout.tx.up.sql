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
-- end, and a session's documents through its events, newest offset first
-- (db/search.go), which needs docids to grow with offsets in a session.
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

-- search_docs by event, for the copy (it goes with the table).
CREATE INDEX search_docs_key ON search_docs (session, "offset", docid);

--bun:split

-- An event more than one search_docs row named (logged before search_docs
-- was made, it was given one then and another by a fold) keeps the first.
INSERT INTO events_rows (session, "offset", type, payload, at, input_id, ord, docid)
SELECT e.session, e."offset", e.type, e.payload, e.at, e.input_id, e.ord,
    (SELECT min(d.docid) FROM search_docs d WHERE d.session = e.session AND d."offset" = e."offset")
FROM events e ORDER BY e.session, e."offset";

--bun:split

CREATE INDEX events_docs ON events_rows (docid) WHERE docid IS NOT NULL;

--bun:split

CREATE INDEX events_log_docs ON events_log (docid) WHERE docid IS NOT NULL;

--bun:split

-- search_docs' other docids (those second rows, and any whose event is
-- gone) go to search_gone, for the index to forget their text.
INSERT INTO search_gone (docid)
SELECT d.docid FROM search_docs d
WHERE NOT EXISTS (SELECT 1 FROM events_rows e WHERE e.docid = d.docid)
  AND NOT EXISTS (SELECT 1 FROM events_log l WHERE l.docid = d.docid)
ORDER BY d.docid;

--bun:split

-- Before migration search_file a logged document got its docid at the
-- fold, after documents of its session committed later straight into
-- events; and search_file numbered the log's documents after all others.
-- In each session whose docids do not grow with its offsets, the
-- documents from the first out of order on take new docids, in offset
-- order, after every docid given; their old ones go to search_gone, and
-- the index takes them again from the store under the new.
CREATE TEMP TABLE renumbered AS
WITH docs AS (
    SELECT session, "offset", docid FROM events_rows WHERE docid IS NOT NULL
    UNION ALL
    SELECT session, "offset", docid FROM events_log WHERE docid IS NOT NULL
), later AS (
    SELECT session, "offset", docid, min(docid) OVER (
        PARTITION BY session ORDER BY "offset" ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS least_after
    FROM docs
), starts AS (
    SELECT session, min("offset") AS first FROM later WHERE docid > least_after GROUP BY session
)
SELECT d.session, d."offset", d.docid AS old_docid,
    coalesce((SELECT max(m) FROM (SELECT max(docid) AS m FROM docs UNION ALL SELECT max(docid) FROM search_gone)), 0)
        + row_number() OVER (ORDER BY d.session, d."offset") AS new_docid
FROM docs d JOIN starts s ON s.session = d.session AND d."offset" >= s.first;

--bun:split

INSERT INTO search_gone (docid) SELECT old_docid FROM renumbered ORDER BY old_docid;

--bun:split

UPDATE events_rows SET docid = r.new_docid FROM renumbered r
WHERE r.session = events_rows.session AND r."offset" = events_rows."offset";

--bun:split

UPDATE events_log SET docid = r.new_docid FROM renumbered r
WHERE r.session = events_log.session AND r."offset" = events_log."offset";

--bun:split

DROP TABLE renumbered;

--bun:split

DROP TABLE events;

--bun:split

ALTER TABLE events_rows RENAME TO events;

--bun:split

DROP TABLE search_docs;
