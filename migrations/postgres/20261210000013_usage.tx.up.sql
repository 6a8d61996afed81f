-- What each turn cost (db/usage.go): a row per turn whose end is
-- committed, written in that transaction. Kept when its session is
-- deleted: usage is the daemon's to account for, not the session's.
CREATE TABLE usage (
    turn_id   TEXT PRIMARY KEY,
    session   TEXT NOT NULL,
    author_id TEXT NOT NULL,
    provider  TEXT NOT NULL,
    at        TEXT NOT NULL,
    reported  BOOLEAN NOT NULL,
    input     BIGINT NOT NULL,
    output    BIGINT NOT NULL,
    cached    BIGINT NOT NULL,
    reasoning BIGINT NOT NULL,
    cost      DOUBLE PRECISION
);

--bun:split

CREATE INDEX usage_at ON usage (at);
