ALTER TABLE sessions DROP COLUMN last_turn;
