-- Sends' messages forget their input ids again (their receipts stay in
-- inputs); posts' keep theirs, which post_ids' own down moves to inputs.
UPDATE events SET input_id = NULL, ord = NULL
WHERE input_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM inputs
    WHERE inputs.session = events.session AND inputs.input_id = events.input_id
      AND inputs.msg_offset = events."offset");
