ALTER TABLE inputs DROP COLUMN msg_offset;

--bun:split

ALTER TABLE inputs DROP COLUMN partial;
