DROP TABLE pins;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base, tools, participants, respond,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;

--bun:split

ALTER TABLE sessions DROP COLUMN archived;

--bun:split

ALTER TABLE sessions DROP COLUMN temperature;
