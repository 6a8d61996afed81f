-- The streamed text of a running turn, checkpointed now and then so that a
-- crash loses at most the last second of a reply.
ALTER TABLE inputs ADD COLUMN partial TEXT NOT NULL DEFAULT '';

--bun:split

-- The offset of the input's user message: where its turn's transcript ends.
ALTER TABLE inputs ADD COLUMN msg_offset INTEGER NOT NULL DEFAULT 0;
