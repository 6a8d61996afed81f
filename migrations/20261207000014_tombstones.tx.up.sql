-- Tombstones: the sessions deleted, and when, so that a client's sessions
-- feed resumed after a restart hears of those deleted while it was away
-- (db/feed.go). They are kept for keepTombstones; a feed resumed from
-- further back starts again.
CREATE TABLE tombstones (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL
) WITHOUT ROWID;

--bun:split

CREATE INDEX tombstones_at ON tombstones (at);
