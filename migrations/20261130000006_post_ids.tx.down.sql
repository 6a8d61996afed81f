-- Posts go back to inputs. Their text hash was not kept (a post's text is
-- in its event): a repeat of one of them after going down is a conflict.
INSERT INTO inputs (session, input_id, ord, text_hash, state, delivery, turn_id, error, partial, msg_offset, created_at, updated_at)
SELECT session, input_id, ord, '', 'accepted', 'done', '', '', '', "offset", at, at
FROM events WHERE input_id IS NOT NULL;

--bun:split

DROP INDEX events_posts;

--bun:split

ALTER TABLE events DROP COLUMN ord;

--bun:split

ALTER TABLE events DROP COLUMN input_id;
