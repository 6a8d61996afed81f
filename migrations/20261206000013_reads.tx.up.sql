-- Read markers: the offset each person (a member, a guest, by their
-- author id) has read up to in each session (db/reads.go). Keyed by reader
-- first: a person's markers are read together.
CREATE TABLE reads (
    reader   TEXT NOT NULL,
    session  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    "offset" INTEGER NOT NULL,
    PRIMARY KEY (reader, session)
) WITHOUT ROWID;

--bun:split

CREATE INDEX reads_session ON reads (session);
