-- Owner tokens made with `albedo tokens add --role owner NAME` (a team
-- server has no daemon.json token to hand out): rows of kind 'owner' in
-- tokens, stored as a hash like bot tokens, one per name.
CREATE UNIQUE INDEX tokens_owner_name ON tokens (name) WHERE kind = 'owner';
