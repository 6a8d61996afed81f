-- Whether a session offers its models tools ('' every tool served to it,
-- 'none' none), and the view of sessions with it.
ALTER TABLE sessions ADD COLUMN tools TEXT NOT NULL DEFAULT '';

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base, tools,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;
