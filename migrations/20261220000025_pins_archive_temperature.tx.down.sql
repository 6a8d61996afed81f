DROP TABLE pins;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT s.id, s.epoch, s.title, s.workspace, s.provider, s.model, s.effort, s.version, s.system,
    s.parent, s.parent_offset, s.base_session, s.base, s.tools, s.participants, s.respond,
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

ALTER TABLE sessions DROP COLUMN archived;

--bun:split

ALTER TABLE sessions DROP COLUMN temperature;
