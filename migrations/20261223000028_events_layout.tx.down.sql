CREATE TABLE events_rows (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" INTEGER NOT NULL,
    type    TEXT NOT NULL,
    payload TEXT NOT NULL,
    at      TEXT NOT NULL,
    input_id TEXT,
    ord     INTEGER,
    PRIMARY KEY (session, "offset")
) WITHOUT ROWID;

--bun:split

INSERT INTO events_rows (session, "offset", type, payload, at, input_id, ord)
SELECT session, "offset", type, payload, at, input_id, ord FROM events;

--bun:split

DROP TABLE events;

--bun:split

ALTER TABLE events_rows RENAME TO events;

--bun:split

-- The log's documents go back to waiting for the fold.
DELETE FROM search_docs WHERE docid IN (SELECT docid FROM events_log WHERE docid IS NOT NULL);

--bun:split

CREATE INDEX search_docs_session ON search_docs (session, docid);
