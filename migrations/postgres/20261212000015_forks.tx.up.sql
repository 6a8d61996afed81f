-- Forks: where a fork came from (parent, parent_offset), and where its
-- first events are stored (base_session, base); the SQLite migration
-- forks says more.
ALTER TABLE sessions ADD COLUMN parent TEXT NOT NULL DEFAULT '',
    ADD COLUMN parent_offset BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN base_session TEXT NOT NULL DEFAULT '',
    ADD COLUMN base BIGINT NOT NULL DEFAULT 0;

--bun:split

CREATE INDEX sessions_parent ON sessions (parent, parent_offset) WHERE parent <> '';

--bun:split

CREATE INDEX sessions_base ON sessions (base_session, base) WHERE base_session <> '';

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;
