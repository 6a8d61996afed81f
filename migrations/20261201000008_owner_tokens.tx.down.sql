DELETE FROM tokens WHERE kind = 'owner';

--bun:split

DROP INDEX tokens_owner_name;
