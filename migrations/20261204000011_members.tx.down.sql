DELETE FROM tokens WHERE kind IN ('member', 'guest');

--bun:split

ALTER TABLE tokens DROP COLUMN last_used;

--bun:split

ALTER TABLE tokens DROP COLUMN expires_at;

--bun:split

ALTER TABLE tokens DROP COLUMN label;

--bun:split

ALTER TABLE tokens DROP COLUMN member;

--bun:split

DROP TABLE grants;

--bun:split

DROP TABLE members;
