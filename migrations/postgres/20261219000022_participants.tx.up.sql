-- A session's participants (a JSON array of names; '' for none) and when
-- they answer ('' for always, or 'mentions'); an input's step among the
-- turns its mentions start; and the view of sessions with them.
ALTER TABLE sessions ADD COLUMN participants TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE sessions ADD COLUMN respond TEXT NOT NULL DEFAULT '';

--bun:split

ALTER TABLE inputs ADD COLUMN step INTEGER NOT NULL DEFAULT 0;

--bun:split

DROP VIEW sessions_now;

--bun:split

CREATE VIEW sessions_now AS
SELECT id, epoch, title, workspace, provider, model, effort, version, system,
    parent, parent_offset, base_session, base, tools, participants, respond,
    head, inputs, create_hash, created_at, updated_at, last_turn
FROM sessions;
