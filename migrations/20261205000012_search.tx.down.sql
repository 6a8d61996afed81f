DROP TABLE search_fts;

--bun:split

DROP TABLE search_docs;
