-- Turn leases (docs/cluster.md, "Turns run on exactly one node"; db's
-- runs.go): a row per session with work. A node claims it when it has no
-- owner or its deadline has passed, raising the fence and setting itself
-- as owner with a deadline it renews while it runs; every turn write
-- checks owner and fence in its transaction, so a node that lost the
-- lease writes nothing.
CREATE TABLE runs (
    session     TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    owner       TEXT NOT NULL DEFAULT '',
    fence       BIGINT NOT NULL DEFAULT 0,
    lease_until TIMESTAMPTZ
);
