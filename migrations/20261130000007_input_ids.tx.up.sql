-- Every input's message event now carries its input_id and order, a
-- user's send as well as a bot's post, so that the unique index on them
-- (events_posts) refuses a send and a post that reuse one id in a session:
-- the contract's "an input_id reused with a different body is 409" held
-- across the two ops until post_ids moved posts out of inputs. Sends
-- already stored get theirs here, matched to their message by msg_offset;
-- one whose id a post took since then keeps NULL (that pair stays two
-- inputs, as they were accepted).
UPDATE events SET input_id = inputs.input_id, ord = inputs.ord
FROM inputs
WHERE inputs.msg_offset > 0
  AND events.session = inputs.session AND events."offset" = inputs.msg_offset
  AND events.input_id IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM events AS taken
    WHERE taken.input_id = inputs.input_id AND taken.session = inputs.session);
