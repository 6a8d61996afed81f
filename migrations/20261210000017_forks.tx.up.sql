-- Forks (db/forks.go). parent and parent_offset say where a fork came
-- from, for people: they stay when the parent is deleted. base_session and
-- base say where its first events are stored: the events at offsets up to
-- base are read from base_session's log (and, below that one's own base,
-- from its base), never copied. Deleting a session hands the events its
-- forks read to the fork that reads furthest (db.Tx.DeleteSession).
ALTER TABLE sessions ADD COLUMN parent TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE sessions ADD COLUMN parent_offset INTEGER NOT NULL DEFAULT 0;

--bun:split

ALTER TABLE sessions ADD COLUMN base_session TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE sessions ADD COLUMN base INTEGER NOT NULL DEFAULT 0;

--bun:split

-- A session's forks, for GET /v1/sessions/{id}/forks.
CREATE INDEX sessions_parent ON sessions (parent, parent_offset) WHERE parent <> '';

--bun:split

-- The forks that read a session's events, for its deletion.
CREATE INDEX sessions_base ON sessions (base_session, base) WHERE base_session <> '';

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT s.id, s.epoch, s.title, s.workspace, s.provider, s.model, s.effort, s.version, s.system,
    s.parent, s.parent_offset, s.base_session, s.base,
    max(s.head, coalesce((SELECT max(l."offset") FROM events_log l WHERE l.session = s.id), 0)) AS head,
    max(s.inputs, coalesce((SELECT max(l.ord) FROM events_log l WHERE l.session = s.id AND l."offset" > s.head), 0)) AS inputs,
    s.create_hash, s.created_at,
    coalesce((SELECT l.at FROM events_log l WHERE l.session = s.id AND l."offset" > s.head
        ORDER BY l."offset" DESC LIMIT 1), s.updated_at) AS updated_at,
    coalesce((SELECT json_extract(l.payload, '$.state') FROM events_log l
        WHERE l.session = s.id AND l."offset" > s.head AND l.type = 'turn'
        ORDER BY l."offset" DESC LIMIT 1), s.last_turn) AS last_turn
FROM sessions s;
