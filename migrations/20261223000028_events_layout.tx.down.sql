CREATE TABLE search_docs (
    docid    INTEGER PRIMARY KEY,
    session  TEXT NOT NULL,
    "offset" INTEGER NOT NULL
);

--bun:split

-- The log's documents wait for the fold to get their rows, as before.
INSERT INTO search_docs (docid, session, "offset")
SELECT docid, session, "offset" FROM events WHERE docid IS NOT NULL;

--bun:split

CREATE INDEX search_docs_session ON search_docs (session, docid);

--bun:split

DROP INDEX events_log_docs;

--bun:split

CREATE TABLE events_rows (
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" INTEGER NOT NULL,
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,
    at       TEXT NOT NULL,
    input_id TEXT,
    ord      INTEGER,
    PRIMARY KEY (session, "offset")
) WITHOUT ROWID;

--bun:split

INSERT INTO events_rows (session, "offset", type, payload, at, input_id, ord)
SELECT session, "offset", type, payload, at, input_id, ord FROM events;

--bun:split

DROP TABLE events;

--bun:split

ALTER TABLE events_rows RENAME TO events;
