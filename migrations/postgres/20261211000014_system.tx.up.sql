-- A session's system text (sent to its provider first), and the view of
-- sessions with it.
ALTER TABLE sessions ADD COLUMN system TEXT NOT NULL DEFAULT '';

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;
