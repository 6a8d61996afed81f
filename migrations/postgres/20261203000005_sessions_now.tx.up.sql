-- The view every read of a session goes through (SQLite's migration
-- sessions_now says why). PostgreSQL never writes events_log, so a
-- session's row is always current and the view is the table.
CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;
