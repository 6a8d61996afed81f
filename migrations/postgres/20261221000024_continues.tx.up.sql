-- The message an input's turn continues (0: none): a reply that was cut
-- off, run on by POST /v1/sessions/{id}/continue (hub/continue.go).
ALTER TABLE inputs ADD COLUMN continues BIGINT NOT NULL DEFAULT 0;
