-- A session's archived mark (true: out of the list and the feed, still
-- searchable), the view of sessions with it, and each person's pins
-- (db/pins.go): the sessions they keep at the top of their list; and a
-- session's temperature (-1: none, the provider's own).
ALTER TABLE sessions ADD COLUMN archived BOOLEAN NOT NULL DEFAULT false;

--bun:split

ALTER TABLE sessions ADD COLUMN temperature DOUBLE PRECISION NOT NULL DEFAULT -1;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base, tools, participants, respond, archived, temperature,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;

--bun:split

CREATE TABLE pins (
    reader  TEXT NOT NULL,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    at      TEXT NOT NULL,
    PRIMARY KEY (reader, session)
);

--bun:split

CREATE INDEX pins_session ON pins (session);
