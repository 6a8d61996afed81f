-- A search in one session reads its newest documents first, in docid
-- order (db/search.go, pgWindow).
CREATE INDEX search_docs_session_docid ON search_docs (session, docid);
