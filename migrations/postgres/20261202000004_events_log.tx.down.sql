INSERT INTO events (session, "offset", type, payload, at, input_id, ord)
SELECT session, "offset", type, payload, at, input_id, ord FROM events_log;

--bun:split

DROP TABLE events_log;

--bun:split

DROP TABLE input_ids;

--bun:split

CREATE UNIQUE INDEX events_posts ON events (input_id, session) WHERE input_id IS NOT NULL;
