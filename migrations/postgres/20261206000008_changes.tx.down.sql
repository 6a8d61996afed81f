DROP TABLE changes;

--bun:split

ALTER TABLE cluster DROP COLUMN gen;
