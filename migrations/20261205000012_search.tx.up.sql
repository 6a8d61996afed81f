-- Full-text search over messages (db/search.go). Each message with text is
-- a document, numbered in commit order (docid): search_docs says whose it
-- is, search_fts (FTS4, which mattn/go-sqlite3 builds by default) holds
-- its text under the same docid. Batches write both as they commit
-- events. No foreign key: deleting a session deletes its documents
-- (db.Tx.DeleteSession).
CREATE TABLE search_docs (
    docid    INTEGER PRIMARY KEY,
    session  TEXT NOT NULL,
    "offset" INTEGER NOT NULL
);

--bun:split

-- A session's documents, newest first: its deletion, and a search in it
-- (db.searchSession).
CREATE INDEX search_docs_session ON search_docs (session, docid);

--bun:split

CREATE VIRTUAL TABLE search_fts USING fts4(text, tokenize=unicode61 "remove_diacritics=0");

--bun:split

-- The messages already stored, in the order they were committed.
INSERT INTO search_docs (session, "offset")
SELECT session, "offset" FROM (
    SELECT session, "offset", at FROM events WHERE type = 'message' AND coalesce(json_extract(payload, '$.text'), '') <> ''
    UNION ALL
    SELECT session, "offset", at FROM events_log WHERE type = 'message' AND coalesce(json_extract(payload, '$.text'), '') <> ''
) ORDER BY at, session, "offset";

--bun:split

INSERT INTO search_fts (docid, text)
SELECT d.docid, json_extract(e.payload, '$.text') FROM search_docs d JOIN (
    SELECT session, "offset", payload FROM events WHERE type = 'message'
    UNION ALL
    SELECT session, "offset", payload FROM events_log WHERE type = 'message'
) e ON e.session = d.session AND e."offset" = d."offset";
