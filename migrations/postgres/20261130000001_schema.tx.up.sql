-- The schema as SQLite has it after its migrations 1–6, in one step:
-- PostgreSQL starts there. Offsets and counters are BIGINT; times stay the
-- text the code writes (RFC 3339, UTC); an event's payload is its JSON as
-- sent, kept byte for byte (TEXT, not JSONB, which would reorder it).

-- Sessions: settings, the epoch of their log, and a version that is the ETag.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    epoch       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    workspace   TEXT NOT NULL DEFAULT '',
    provider    TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    effort      TEXT NOT NULL DEFAULT '',
    version     BIGINT NOT NULL DEFAULT 1,
    head        BIGINT NOT NULL DEFAULT 0,
    inputs      BIGINT NOT NULL DEFAULT 0,
    create_hash TEXT NOT NULL DEFAULT '',
    last_turn   TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

--bun:split

-- Events: the durable log, dense offsets per session. A bot's post keeps
-- its input_id and order here: its idempotency record.
CREATE TABLE events (
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" BIGINT NOT NULL,
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,
    at       TEXT NOT NULL,
    input_id TEXT,
    ord      BIGINT,
    PRIMARY KEY (session, "offset")
);

--bun:split

CREATE UNIQUE INDEX events_posts ON events (input_id, session) WHERE input_id IS NOT NULL;

--bun:split

-- Inputs: receipts, idempotent by (session, input_id).
CREATE TABLE inputs (
    session    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    input_id   TEXT NOT NULL,
    ord        BIGINT NOT NULL,
    text_hash  TEXT NOT NULL,
    state      TEXT NOT NULL,
    delivery   TEXT NOT NULL,
    turn_id    TEXT NOT NULL,
    error      TEXT NOT NULL DEFAULT '',
    partial    TEXT NOT NULL DEFAULT '',
    msg_offset BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session, input_id)
);

--bun:split

CREATE INDEX inputs_pending ON inputs (session, ord) WHERE delivery IN ('queued', 'running');

--bun:split

-- Bot and viewer tokens. Only a hash of each token is kept.
CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    sessions   TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);

--bun:split

CREATE UNIQUE INDEX tokens_bot_name ON tokens (name) WHERE kind = 'bot';
