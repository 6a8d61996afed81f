-- Sessions: settings, the epoch of their log, and a version that is the ETag.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    epoch       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    workspace   TEXT NOT NULL DEFAULT '',
    provider    TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    effort      TEXT NOT NULL DEFAULT '',
    version     INTEGER NOT NULL DEFAULT 1,
    head        INTEGER NOT NULL DEFAULT 0,
    inputs      INTEGER NOT NULL DEFAULT 0,
    create_hash TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

--bun:split

-- Events: the durable log, dense offsets per session.
CREATE TABLE events (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" INTEGER NOT NULL,
    type    TEXT NOT NULL,
    payload TEXT NOT NULL,
    at      TEXT NOT NULL,
    PRIMARY KEY (session, "offset")
) WITHOUT ROWID;

--bun:split

-- Inputs: receipts, idempotent by (session, input_id).
CREATE TABLE inputs (
    session    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    input_id   TEXT NOT NULL,
    ord        INTEGER NOT NULL,
    text_hash  TEXT NOT NULL,
    state      TEXT NOT NULL,
    delivery   TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    error      TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session, input_id)
) WITHOUT ROWID;

--bun:split

CREATE INDEX inputs_delivery ON inputs (session, delivery, ord);
