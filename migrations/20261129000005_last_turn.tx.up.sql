-- The state of a session's newest turn event, kept by the writer as it
-- commits turn events, so that loading a session reads one row instead of
-- scanning its events back to the last turn (all of them, for a session of
-- bot posts only).
ALTER TABLE sessions ADD COLUMN last_turn TEXT NOT NULL DEFAULT '';

--bun:split

UPDATE sessions SET last_turn = COALESCE((
    SELECT json_extract(payload, '$.state') FROM events
    WHERE events.session = sessions.id AND events.type = 'turn'
    ORDER BY "offset" DESC LIMIT 1), '');
