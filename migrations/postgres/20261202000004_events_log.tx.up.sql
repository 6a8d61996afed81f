-- The same tables as SQLite's migration events_log, so that both backends
-- run one set of statements. PostgreSQL never writes events_log (its heap
-- is append-ordered already, and its WAL logs rows, not whole pages): it
-- stays empty, and reads pay an empty index scan for it.
CREATE TABLE events_log (
    session  TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,
    at       TEXT NOT NULL,
    input_id TEXT,
    ord      BIGINT
);

--bun:split

CREATE UNIQUE INDEX events_log_key ON events_log (session, "offset");

--bun:split

-- Input ids taken in each session, and the offset of their message: the
-- idempotency record of every input's message (SQLite's events_log says
-- why it is a table of its own).
CREATE TABLE input_ids (
    input_id TEXT NOT NULL,
    session  TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    PRIMARY KEY (input_id, session)
);

--bun:split

INSERT INTO input_ids (input_id, session, "offset")
SELECT input_id, session, "offset" FROM events WHERE input_id IS NOT NULL;

--bun:split

DROP INDEX events_posts;
