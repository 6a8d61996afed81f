-- Changes to who may do what (a token revoked or narrowed, a grant, a
-- session made or deleted), each recorded in the transaction that makes
-- it, so that every node applies it within a second whether NATS runs or
-- not (hub's cluster_changes.go). cluster.gen numbers the transactions
-- that recorded one: each takes it last, just before its commit, so the
-- numbers commit in order and a node that has read up to gen N has missed
-- nothing below it. The oldest are pruned as new ones come.
ALTER TABLE cluster ADD COLUMN gen BIGINT NOT NULL DEFAULT 0;

--bun:split

CREATE TABLE changes (
    gen  BIGINT NOT NULL,
    n    INTEGER NOT NULL,
    node TEXT NOT NULL,
    kind TEXT NOT NULL,
    a    TEXT NOT NULL,
    b    TEXT NOT NULL DEFAULT '',
    at   TEXT NOT NULL,
    PRIMARY KEY (gen, n)
);
