-- What each of a turn's responses that called tools cost (JSON of a
-- wire.Usage, '' when the provider reported none), on the row of the
-- response's first call: a turn resumed after a restart adds it to what
-- its later responses cost, so its usage is the whole turn's.
ALTER TABLE tool_calls ADD COLUMN step_usage TEXT NOT NULL DEFAULT '';
