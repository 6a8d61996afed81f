-- What each turn cost (db/usage.go): a row per turn whose end is
-- committed, written in that transaction. Kept when its session is
-- deleted: usage is the daemon's to account for, not the session's.
CREATE TABLE usage (
    turn_id   TEXT PRIMARY KEY,
    session   TEXT NOT NULL,
    author_id TEXT NOT NULL,
    provider  TEXT NOT NULL,
    at        TEXT NOT NULL,
    reported  INTEGER NOT NULL,
    input     INTEGER NOT NULL,
    output    INTEGER NOT NULL,
    cached    INTEGER NOT NULL,
    reasoning INTEGER NOT NULL,
    cost      REAL
) WITHOUT ROWID;

--bun:split

CREATE INDEX usage_at ON usage (at);
