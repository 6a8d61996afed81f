CREATE VIRTUAL TABLE search_fts USING fts4(text, tokenize=unicode61 "remove_diacritics=0");

--bun:split

INSERT INTO search_fts (docid, text)
SELECT d.docid, json_extract(e.payload, '$.text') FROM search_docs d
JOIN events e ON e.session = d.session AND e."offset" = d."offset";

--bun:split

-- The log's documents are indexed again by the fold, as before.
ALTER TABLE events_log DROP COLUMN docid;

--bun:split

DROP TABLE search_gone;
