-- The rows take what the log has newer, as a fold would: without the
-- view, reads see only the rows.
UPDATE sessions SET (head, inputs, updated_at, last_turn) = (
    SELECT n.head, n.inputs, n.updated_at, n.last_turn FROM sessions_now n WHERE n.id = sessions.id)
WHERE id IN (SELECT session FROM events_log);

--bun:split

DROP VIEW sessions_now;
