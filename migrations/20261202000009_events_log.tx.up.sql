-- The newest events go to an append-ordered log first and are moved into
-- events, the per-session tree, in bulk (db.Writer's fold). events is keyed
-- by session first, so a commit that adds one event to each of many
-- sessions dirtied a page of its own per session: with many writers, those
-- pages' WAL frames were most of what the store cost per input. events_log
-- is a rowid table: a commit's events share its last pages. Its index by
-- (session, offset) serves reads, and stays small because the writer folds
-- the log whenever it holds a thousand rows or so. An event is in exactly
-- one of the two tables; every read is the union of both. No foreign key: a
-- fold empties the log with a DELETE without WHERE, which SQLite does by
-- dropping the table's pages only when no foreign key involves it (row by
-- row, the delete was much of the fold's cost); deleting a session deletes
-- its rows here (db.Tx.DeleteSession). PostgreSQL has the same tables and
-- never uses the log (its heap is append-ordered already).
CREATE TABLE events_log (
    session  TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,
    at       TEXT NOT NULL,
    input_id TEXT,
    ord      INTEGER
);

--bun:split

CREATE UNIQUE INDEX events_log_key ON events_log (session, "offset");

--bun:split

-- Input ids taken in each session, and the offset of their message: the
-- idempotency record of every input's message, sent or posted, wherever
-- its event is (events_posts indexed only events). Keyed by input id first
-- (clients make them UUIDv7, time-ordered), so a commit's inputs share the
-- tree's last page. No foreign key: deleting a session deletes its rows
-- through its events' input ids (db.Tx.DeleteSession).
CREATE TABLE input_ids (
    input_id TEXT NOT NULL,
    session  TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    PRIMARY KEY (input_id, session)
) WITHOUT ROWID;

--bun:split

INSERT INTO input_ids (input_id, session, "offset")
SELECT input_id, session, "offset" FROM events WHERE input_id IS NOT NULL;

--bun:split

DROP INDEX events_posts;
