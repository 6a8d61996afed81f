DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;

--bun:split

DROP INDEX sessions_base;

--bun:split

DROP INDEX sessions_parent;

--bun:split

ALTER TABLE sessions DROP COLUMN base, DROP COLUMN base_session,
    DROP COLUMN parent_offset, DROP COLUMN parent;
