-- A session's archived mark (true: out of the list and the feed, still
-- searchable), the view of sessions with it, and each person's pins
-- (db/pins.go): the sessions they keep at the top of their list.
ALTER TABLE sessions ADD COLUMN archived BOOLEAN NOT NULL DEFAULT false;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base, tools, participants, respond, archived,
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
