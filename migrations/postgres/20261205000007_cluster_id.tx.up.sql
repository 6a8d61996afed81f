-- The cluster's identity, made once: the nodes that share this database
-- put it in every NATS subject they use, so that two clusters on one
-- NATS server hear nothing of each other, with no flag to set.
CREATE TABLE cluster (
    id TEXT PRIMARY KEY
);

--bun:split

INSERT INTO cluster (id) VALUES (replace(gen_random_uuid()::text, '-', ''));
