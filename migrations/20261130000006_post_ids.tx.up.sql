-- A bot's post is accepted once per (session, input_id), as an input is,
-- but needs nothing of an input's row afterwards: it starts no turn and is
-- delivered at once. Its idempotency record is now its message event, which
-- carries the post's input_id and order, found through an index led by the
-- input_id. Clients make input ids as UUIDv7 (time-ordered), so the posts
-- of one commit share the index's last page, where a row per post in inputs
-- (keyed by session first) dirtied a page per session and commit
-- (docs/benchmarks.md). Rows of events that are not posts leave both
-- columns NULL and stay out of the index.
ALTER TABLE events ADD COLUMN input_id TEXT;

--bun:split

ALTER TABLE events ADD COLUMN ord INTEGER;

--bun:split

CREATE UNIQUE INDEX events_posts ON events (input_id, session) WHERE input_id IS NOT NULL;

--bun:split

-- Posts already stored move to their events. A post stored before inputs
-- had msg_offset (0) cannot be matched to its event and stays in inputs,
-- where PutInput still finds it.
UPDATE events SET input_id = inputs.input_id, ord = inputs.ord
FROM inputs
WHERE inputs.turn_id = '' AND inputs.msg_offset > 0
  AND events.session = inputs.session AND events."offset" = inputs.msg_offset;

--bun:split

DELETE FROM inputs WHERE turn_id = '' AND EXISTS (
    SELECT 1 FROM events
    WHERE events.input_id = inputs.input_id AND events.session = inputs.session);
