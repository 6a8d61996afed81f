DELETE FROM tokens WHERE kind = 'member';

--bun:split

ALTER TABLE tokens DROP COLUMN label;

--bun:split

ALTER TABLE tokens DROP COLUMN member;

--bun:split

DROP TABLE grants;

--bun:split

DROP TABLE members;
