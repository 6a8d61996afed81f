-- A session's row as of its newest event. A batch whose events of a session
-- go to events_log (db's fold.go says which) no longer rewrites the
-- session's row: rewriting the head, input counter, last_turn and
-- updated_at of every session of a batch of many was the largest single
-- cost of the write path. Those columns are then the newest of the row and
-- of the session's logged events, and every read of a session goes through
-- this view; the writer's fold moves them into the row when it moves the
-- log into events.
--
-- A batch that writes a session's events straight into events writes the
-- whole of its row as the writer knows it (every logged event included),
-- so a logged event with an offset past the row's head is newer than the
-- row, and one at or before it is already in it. Each column is one probe
-- of the log's (session, offset) index, and nothing when the log holds
-- none of the session's events.
CREATE VIEW sessions_now AS
SELECT s.id, s.epoch, s.title, s.workspace, s.provider, s.model, s.effort, s.version,
    max(s.head, coalesce((SELECT max(l."offset") FROM events_log l WHERE l.session = s.id), 0)) AS head,
    max(s.inputs, coalesce((SELECT max(l.ord) FROM events_log l WHERE l.session = s.id AND l."offset" > s.head), 0)) AS inputs,
    s.create_hash, s.created_at,
    coalesce((SELECT l.at FROM events_log l WHERE l.session = s.id AND l."offset" > s.head
        ORDER BY l."offset" DESC LIMIT 1), s.updated_at) AS updated_at,
    coalesce((SELECT json_extract(l.payload, '$.state') FROM events_log l
        WHERE l.session = s.id AND l."offset" > s.head AND l.type = 'turn'
        ORDER BY l."offset" DESC LIMIT 1), s.last_turn) AS last_turn
FROM sessions s;
