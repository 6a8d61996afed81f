ALTER TABLE inputs DROP COLUMN continues;
