DROP INDEX search_docs_session_docid;
