-- Bot and viewer tokens. Only a hash of each token is kept.
CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,            -- 'bot' or 'viewer'
    name       TEXT NOT NULL,            -- the bot's name; for viewers, "viewer"
    hash       TEXT NOT NULL UNIQUE,     -- hex sha256 of the token
    sessions   TEXT NOT NULL DEFAULT '', -- comma-separated ids it may touch; '' = all (bots only)
    created_at TEXT NOT NULL
);

--bun:split

CREATE UNIQUE INDEX tokens_bot_name ON tokens (name) WHERE kind = 'bot';
