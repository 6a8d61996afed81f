-- Full-text search over messages (db/search.go). Each message with text is
-- a document, numbered by a sequence as batches commit it (docid), with
-- the tsvector of its text under the 'simple' rules (lower-cased words,
-- no stemming, any script) and a GIN index on it. A session's documents
-- go with it.
CREATE TABLE search_docs (
    docid    BIGSERIAL PRIMARY KEY,
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" BIGINT NOT NULL,
    tsv      tsvector NOT NULL
);

--bun:split

CREATE INDEX search_docs_session ON search_docs (session, "offset");

--bun:split

CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);

--bun:split

-- The messages already stored, in the order they were committed.
INSERT INTO search_docs (session, "offset", tsv)
SELECT session, "offset", to_tsvector('simple', payload::jsonb->>'text') FROM events
WHERE type = 'message' AND coalesce(payload::jsonb->>'text', '') <> ''
ORDER BY at, session, "offset";
