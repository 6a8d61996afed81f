DROP TABLE search_docs;
