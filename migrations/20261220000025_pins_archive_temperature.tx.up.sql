-- A session's archived mark (1: out of the list and the feed, still
-- searchable), the view of sessions with it, and each person's pins
-- (db/pins.go): the sessions they keep at the top of their list; and a
-- session's temperature (-1: none, the provider's own).
ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN temperature REAL NOT NULL DEFAULT -1;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT s.id, s.epoch, s.title, s.workspace, s.provider, s.model, s.effort, s.version, s.system,
    s.parent, s.parent_offset, s.base_session, s.base, s.tools, s.participants, s.respond, s.archived, s.temperature,
    max(s.head, coalesce((SELECT max(l."offset") FROM events_log l WHERE l.session = s.id), 0)) AS head,
    max(s.inputs, coalesce((SELECT max(l.ord) FROM events_log l WHERE l.session = s.id AND l."offset" > s.head), 0)) AS inputs,
    s.create_hash, s.created_at,
    coalesce((SELECT l.at FROM events_log l WHERE l.session = s.id AND l."offset" > s.head
        ORDER BY l."offset" DESC LIMIT 1), s.updated_at) AS updated_at,
    coalesce((SELECT json_extract(l.payload, '$.state') FROM events_log l
        WHERE l.session = s.id AND l."offset" > s.head AND l.type = 'turn'
        ORDER BY l."offset" DESC LIMIT 1), s.last_turn) AS last_turn
FROM sessions s;

--bun:split

CREATE TABLE pins (
    reader  TEXT NOT NULL,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    at      TEXT NOT NULL,
    PRIMARY KEY (reader, session)
) WITHOUT ROWID;

--bun:split

CREATE INDEX pins_session ON pins (session);
